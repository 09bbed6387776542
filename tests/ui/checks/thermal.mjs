// A thermal-runaway GPU stands out and gets a forecast.
//
// - On the "hot" server (lib/fixture.mjs) the runaway GPU's HBM reaches the
//   rule pack's warning margin within seconds; once the API confirms it, the
//   Fleet page with the HBM signal must colour that GPU's cell warning or
//   critical, leave the healthy GPUs ok, and list it first among the worst
//   GPUs.
// - On the "main" server the runaway is slower, so its HBM is still climbing
//   when the pack's forecast rules record gpu:*:seconds_to_slowdown (their
//   30 s group first has enough history about 45 s after the start). The
//   GPU page must then show a [data-testid=forecast] whose data-eta-seconds
//   agrees with the server's record.
import { eventually, expect } from '../lib/expect.mjs';
import { gpuKey, gpusOf } from '../lib/fleet_truth.mjs';
import { withUi } from '../lib/ui_page.mjs';
import { readCells } from './heatmap.mjs';

// rules/gpumon-thermal.rules.yml GpuMemoryTemperatureHigh (warning): HBM
// within 5 °C of its own maximum operating temperature.
const HBM_WARNING_MARGIN_C = 5;
// The record is re-evaluated every 30 s and the page may count down from the
// sample's time, so the two may differ by up to one interval; beyond that,
// allow a quarter of the value for the page reading a fresher sample.
const ETA_SLACK_S = 35;
const ETA_SLACK_RATIO = 0.25;

async function waitForHotGpu(api, gpu) {
  return eventually(
    async () => {
      const r = await api.query(`gpu_memory_max_operating_temperature_celsius{gpu="${gpu}"} - gpu_memory_temperature_celsius{gpu="${gpu}"}`);
      return r.length === 1 && r[0].value <= HBM_WARNING_MARGIN_C - 0.5 ? r[0] : undefined;
    },
    { timeoutMs: 60000, intervalMs: 1000, describe: () => `GPU ${gpu}'s HBM never came within ${HBM_WARNING_MARGIN_C} °C of its limit` },
  );
}

// The server's time to slowdown for one GPU: the smaller of HBM and die.
async function serverEta(api, gpu) {
  const r = await api.query(`min by (hostname, gpu) ({__name__=~"gpu:(memory_)?temperature:seconds_to_slowdown", gpu="${gpu}"})`);
  return r.length ? r[0].value : NaN;
}

export const THERMAL_CHECKS = [
  {
    name: 'thermal-stands-out',
    waitsForData: true,
    async run(ctx) {
      const { hot, hotGpu } = ctx.fixture;
      const margin = await waitForHotGpu(hot.api, hotGpu);
      ctx.note(`GPU ${hotGpu}'s HBM ${margin.value.toFixed(1)} °C below its limit at ${((Date.now() - ctx.t0) / 1000).toFixed(0)} s`);
      const gpus = await gpusOf(hot.api);
      const runaway = gpus.find((g) => g.gpu === hotGpu);
      await withUi(ctx, hot, '/fleet?signal=memory_temperature&from=now-5m', 'fleet-thermal-runaway', async ({ page }) => {
        const cells = await readCells(page);
        const cell = cells.find((c) => gpuKey(c) === gpuKey(runaway));
        expect(cell, `no heatmap cell for ${gpuKey(runaway)}`);
        expect(['warning', 'critical'].includes(cell.level), `the runaway GPU's cell is ${JSON.stringify(cell)}, expected level warning or critical`);
        const others = cells.filter((c) => c !== cell && c.level !== 'ok');
        expect(others.length === 0, `healthy GPUs are not ok: ${JSON.stringify(others)}`);
        const rows = await page.$$eval('[data-testid=worst-gpus] [data-testid=gpu-row]', (rs) =>
          rs.map((r) => ({ node: r.dataset.node, gpu: r.dataset.gpu, level: r.dataset.level })),
        );
        expect(rows.length > 0, 'the worst-GPUs list is empty');
        expect(gpuKey(rows[0]) === gpuKey(runaway), `the worst-GPUs list starts with ${JSON.stringify(rows[0])}, expected ${gpuKey(runaway)} (${JSON.stringify(rows.slice(0, 3))})`);
        expect(['warning', 'critical'].includes(rows[0].level), `the runaway GPU's row has level ${rows[0].level}`);
      });
    },
  },
  {
    name: 'thermal-forecast',
    waitsForData: true,
    async run(ctx) {
      const { main, forecastGpu } = ctx.fixture;
      const before = await eventually(
        async () => {
          const eta = await serverEta(main.api, forecastGpu);
          return eta > 0 ? eta : undefined;
        },
        { timeoutMs: 90000, intervalMs: 1000, describe: () => `the server never recorded a time to slowdown for GPU ${forecastGpu}` },
      );
      ctx.note(`server's time to slowdown for GPU ${forecastGpu}: ${before.toFixed(0)} s at ${((Date.now() - ctx.t0) / 1000).toFixed(0)} s`);
      const [{ node }] = await gpusOf(main.api);
      const path = `/gpu?from=now-15m&var-node=${encodeURIComponent(node)}&var-gpu=${forecastGpu}`;
      await withUi(ctx, main, path, 'gpu-forecast', async ({ page }) => {
        const shown = await page.$$eval('[data-testid=forecast][data-eta-seconds]', (fs) => fs.map((f) => Number(f.dataset.etaSeconds)));
        const after = await serverEta(main.api, forecastGpu);
        expect(shown.length > 0, `GPU page ${path} has no [data-testid=forecast][data-eta-seconds] while the server predicts ${before.toFixed(0)} s`);
        const eta = Math.min(...shown.filter(Number.isFinite));
        const lo = Math.min(before, after);
        const hi = Math.max(before, after);
        expect(eta > 0, `the forecast shows data-eta-seconds=${shown}`);
        expect(
          eta >= lo - ETA_SLACK_S - ETA_SLACK_RATIO * lo && eta <= hi + ETA_SLACK_S + ETA_SLACK_RATIO * hi,
          `the forecast shows ${eta.toFixed(0)} s to slowdown, the server's gpu:*:seconds_to_slowdown says ${lo.toFixed(0)}-${hi.toFixed(0)} s`,
        );
        ctx.note(`page's time to slowdown ${eta.toFixed(0)} s, server's ${lo.toFixed(0)}-${hi.toFixed(0)} s`);
      });
    },
  },
];
