// A rule made to fire (lib/fixture.mjs ALWAYS_FIRING, on every GPU) shows on
// the Alerts page in the group of its GPU with its runbook link, every alert
// the API reports for a GPU is in that GPU's group with its state, and the
// alert shows as an annotation on the GPU page (from the ALERTS series).
import { eventually, expect } from '../lib/expect.mjs';
import { gpusOf } from '../lib/fleet_truth.mjs';
import { withUi } from '../lib/ui_page.mjs';

/**
 * Waits until the test alert fires on every GPU, both in /api/v1/alerts and
 * in the ALERTS series the pages query; resolves to all alerts.
 */
export async function firingOnEveryGpu(fixture) {
  const gpuCount = (await gpusOf(fixture.main.api)).length;
  return eventually(
    async () => {
      const alerts = await fixture.main.api.alerts();
      const ours = alerts.filter((a) => a.labels.alertname === fixture.alertName && a.state === 'firing');
      const stored = await fixture.main.api.scalar(`count(ALERTS{alertname="${fixture.alertName}",alertstate="firing"})`);
      return ours.length === gpuCount && stored === gpuCount ? alerts : undefined;
    },
    { timeoutMs: 20000, describe: () => `${fixture.alertName} never fired on all ${gpuCount} GPUs in /api/v1/alerts` },
  );
}

export const ALERT_CHECKS = [
  {
    name: 'alerts-page',
    async run(ctx) {
      const { fixture } = ctx;
      const gpus = await gpusOf(fixture.main.api);
      const before = await firingOnEveryGpu(fixture);
      await withUi(ctx, fixture.main, '/alerts', 'alerts', async (ui) => {
        // Alerts the API reported both before the page loaded and after it
        // rendered: one that came or went in between may or may not show.
        const key = (a) => `${a.labels.alertname}/${a.labels.hostname}/${a.labels.gpu}/${a.labels.severity}`;
        const earlier = new Set(before.map(key));
        const alerts = (await fixture.main.api.alerts()).filter((a) => earlier.has(key(a)));
        const groups = await ui.page.$$eval('[data-testid=alert-group]', (gs) =>
          gs.map((g) => ({
            node: g.dataset.node,
            gpu: g.dataset.gpu,
            alerts: [...g.querySelectorAll('[data-testid=alert]')].map((a) => ({ name: a.dataset.alertname, state: a.dataset.state })),
            runbooks: [...g.querySelectorAll('a[data-testid=runbook]')].map((a) => a.getAttribute('href')),
          })),
        );
        for (const { node, gpu } of gpus) {
          const group = groups.find((g) => g.node === node && g.gpu === gpu);
          expect(group, `no [data-testid=alert-group][data-node="${node}"][data-gpu="${gpu}"] (groups: ${groups.map((g) => `${g.node}/${g.gpu}`).join(' ')})`);
          const ours = group.alerts.find((a) => a.name === fixture.alertName);
          expect(ours && ours.state === 'firing', `group ${node}/${gpu} shows ${JSON.stringify(group.alerts)}, expected ${fixture.alertName} firing`);
          expect(group.runbooks.includes(fixture.runbookUrl), `group ${node}/${gpu} has runbook links ${JSON.stringify(group.runbooks)}, expected ${fixture.runbookUrl}`);
          // Related alerts of the same GPU side by side: every alert the API
          // has for this GPU, in this group.
          for (const a of alerts.filter((x) => x.labels.hostname === node && x.labels.gpu === gpu)) {
            const shown = group.alerts.some((s) => s.name === a.labels.alertname);
            expect(shown, `the API has ${a.labels.alertname} (${a.state}) for ${node}/${gpu}, its group shows ${JSON.stringify(group.alerts)}`);
          }
        }
      });
    },
  },
  {
    name: 'gpu-annotation',
    async run(ctx) {
      const { fixture } = ctx;
      const [first] = await gpusOf(fixture.main.api);
      await eventually(async () => (await fixture.main.api.query(`ALERTS{alertname="${fixture.alertName}",alertstate="firing",gpu="${first.gpu}"}`)).length > 0, {
        timeoutMs: 20000,
        describe: () => `no ALERTS series for ${fixture.alertName} on GPU ${first.gpu}`,
      });
      const path = `/gpu?from=now-5m&var-node=${encodeURIComponent(first.node)}&var-gpu=${first.gpu}`;
      await withUi(ctx, fixture.main, path, 'gpu-annotation', async (ui) => {
        const names = await ui.page.$$eval('[data-testid=annotation]', (as) => as.map((a) => a.dataset.alertname));
        expect(names.includes(fixture.alertName), `GPU page ${path} has annotations ${JSON.stringify(names)}, expected one for ${fixture.alertName}`);
      });
    },
  },
];
