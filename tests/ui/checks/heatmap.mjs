// The Fleet heatmap shows every GPU the server reports, once, with a number
// and a level; with the die-temperature signal its values are the GPUs'
// temperatures; and clicking a cell drills down to that GPU's page, keeping
// the time range.
import { eventually, expect } from '../lib/expect.mjs';
import { gpuKey, gpusOf, perGpu } from '../lib/fleet_truth.mjs';
import { withUi } from '../lib/ui_page.mjs';

const LEVELS = new Set(['ok', 'warning', 'critical', 'nodata']);
// The page's query ran at some moment while it loaded: its value must lie
// within what the API saw over that time (plus a degree of rounding).
const TEMPERATURE_TOLERANCE_C = 1;

export async function readCells(page) {
  return page.$$eval('[data-testid=fleet-heatmap] [data-testid=gpu-cell]', (cells) =>
    cells.map((c) => ({ node: c.dataset.node, gpu: c.dataset.gpu, value: c.dataset.value, level: c.dataset.level })),
  );
}

export const HEATMAP_CHECKS = [
  {
    name: 'heatmap-every-gpu',
    async run(ctx) {
      const server = ctx.fixture.main;
      const gpus = await gpusOf(server.api);
      expect(gpus.length === 8, `the server reports ${gpus.length} GPUs for --simulate h200x8`);
      const opened = Date.now();
      await withUi(ctx, server, '/fleet?signal=temperature&from=now-5m', 'fleet-heatmap', async (ui) => {
        const cells = await readCells(ui.page);
        const window = `${Math.ceil((Date.now() - opened) / 1000) + 2}s`;
        const low = await perGpu(server.api, `min_over_time(gpu_temperature_celsius[${window}])`);
        const high = await perGpu(server.api, `max_over_time(gpu_temperature_celsius[${window}])`);
        expect(cells.length === gpus.length, `${cells.length} [data-testid=gpu-cell], the API reports ${gpus.length} GPUs`);
        const seen = cells.map(gpuKey).sort();
        const want = gpus.map(gpuKey).sort();
        expect(JSON.stringify(seen) === JSON.stringify(want), `cells are for ${seen.join(' ')}, the API's GPUs are ${want.join(' ')}`);
        for (const c of cells) {
          expect(LEVELS.has(c.level), `cell ${gpuKey(c)} has data-level="${c.level}"`);
          const v = Number(c.value);
          const [lo, hi] = [low.get(gpuKey(c)), high.get(gpuKey(c))];
          expect(c.value !== undefined && c.value !== '' && Number.isFinite(v), `cell ${gpuKey(c)} has data-value="${c.value}"`);
          expect(
            v >= lo - TEMPERATURE_TOLERANCE_C && v <= hi + TEMPERATURE_TOLERANCE_C,
            `cell ${gpuKey(c)} shows ${v} °C, the API saw ${lo}-${hi} °C over the last ${window}`,
          );
        }
      });
    },
  },
  {
    name: 'heatmap-drilldown',
    async run(ctx) {
      const server = ctx.fixture.main;
      const target = (await gpusOf(server.api))[4];
      await withUi(ctx, server, '/fleet?from=now-15m', 'fleet-drilldown', async (ui) => {
        const cell = `[data-testid=gpu-cell][data-node="${target.node}"][data-gpu="${target.gpu}"]`;
        await ui.page.click(cell);
        await ui.page.waitForSelector('main[data-page=gpu][data-state=ready]', { state: 'attached', timeout: 15000 });
        const url = new URL(ui.page.url());
        expect(url.pathname === '/gpu', `clicking ${cell} went to ${url}, expected /gpu`);
        const p = url.searchParams;
        expect(p.getAll('var-node').join(',') === target.node && p.get('var-gpu') === target.gpu, `clicking ${cell} went to ${url}`);
        expect(p.get('from') === 'now-15m', `the drill-down lost the time range: ${url}`);
        await ui.page.screenshot({ path: `${ctx.artifacts}/gpu-drilldown.png`, fullPage: true });
        // Back returns to the Fleet page with its range.
        await ui.page.goBack();
        await eventually(async () => new URL(ui.page.url()).pathname === '/fleet' && (await ui.page.$('main[data-page=fleet]')), {
          timeoutMs: 10000,
          describe: () => `Back after the drill-down shows ${ui.page.url()}, expected /fleet`,
        });
        expect(new URL(ui.page.url()).searchParams.get('from') === 'now-15m', `Back lost the time range: ${ui.page.url()}`);
      });
    },
  },
];
