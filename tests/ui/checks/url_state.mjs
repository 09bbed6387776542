// Variables, time range and signal round-trip through the URL: set through
// the UI's own controls, they are written to the URL; loading that URL in a
// new page restores the same controls and the same rendered selection; and
// Back/Forward step through the time-range change (a pushState) with the
// page following.
import { eventually, expect } from '../lib/expect.mjs';
import { gpusOf } from '../lib/fleet_truth.mjs';
import { openUi, withUi } from '../lib/ui_page.mjs';

const PRESET = 'now-15m';
const SIGNAL = 'power';
// Long enough not to fire during the check.
const REFRESH = '5m';

// What the shell and the Fleet page show: the time range, the variables, the
// signal, and the GPUs the heatmap draws.
async function shownState(page) {
  return page.evaluate(() => {
    const tr = document.querySelector('[data-testid=time-range]');
    const v = (n) => document.querySelector(`[data-testid=var-${n}]`)?.dataset.values ?? null;
    const sig = document.querySelector('[data-testid=fleet-signal]');
    const cells = [...document.querySelectorAll('[data-testid=gpu-cell]')].map((c) => `${c.dataset.node}/${c.dataset.gpu}`).sort();
    const refresh = document.querySelector('[data-testid=refresh]');
    return {
      from: tr?.dataset.from ?? null,
      to: tr?.dataset.to ?? null,
      refresh: refresh ? refresh.value : null,
      node: v('node'),
      gpu: v('gpu'),
      signal: sig ? sig.value : null,
      cells,
    };
  });
}

async function settle(page) {
  await page.waitForSelector('main[data-page=fleet][data-state=ready]', { state: 'attached', timeout: 15000 });
}

export const URL_STATE_CHECKS = [
  {
    name: 'url-state-round-trip',
    async run(ctx) {
      const server = ctx.fixture.main;
      const [, , , target] = await gpusOf(server.api); // GPU index 3 of the node
      let url;
      let wanted;
      await withUi(ctx, server, '/fleet', 'url-state-set', async ({ page }) => {
        const initial = await shownState(page);
        expect(initial.cells.length === 8, `the unfiltered heatmap shows ${initial.cells.length} GPUs`);
        // Time range: a preset from the picker (pushState).
        await page.click('[data-testid=time-range]');
        await page.click(`[data-testid=time-preset][data-from="${PRESET}"]`);
        await settle(page);
        // Auto-refresh interval.
        await page.selectOption('[data-testid=refresh]', REFRESH);
        // Signal: the Fleet page's selector.
        expect(await page.$('[data-testid=fleet-signal]'), 'the Fleet page has no [data-testid=fleet-signal] control');
        await page.selectOption('[data-testid=fleet-signal]', SIGNAL);
        await settle(page);
        // Node (multi-select, checkboxes) and GPU (a <select>).
        await page.click('[data-testid=var-node] button');
        await page.check(`[data-testid=var-node] input[type=checkbox][value="${target.node}"]`);
        await page.keyboard.press('Escape');
        await page.waitForSelector(`[data-testid=var-gpu] select option[value="${target.gpu}"]`, { state: 'attached', timeout: 10000 });
        await page.selectOption('[data-testid=var-gpu] select', target.gpu);
        await settle(page);
        wanted = await eventually(
          async () => {
            const s = await shownState(page);
            return s.cells.length === 1 ? s : undefined;
          },
          { timeoutMs: 10000, describe: () => `selecting GPU ${target.gpu} did not narrow the heatmap to one cell` },
        );
        url = new URL(page.url());
        const p = url.searchParams;
        const got = { from: p.get('from'), refresh: p.get('refresh'), signal: p.get('signal'), node: p.getAll('var-node'), gpu: p.getAll('var-gpu') };
        const expectUrl = { from: PRESET, refresh: REFRESH, signal: SIGNAL, node: [target.node], gpu: [target.gpu] };
        expect(JSON.stringify(got) === JSON.stringify(expectUrl), `after setting the controls the URL is ${url} (${JSON.stringify(got)}), expected ${JSON.stringify(expectUrl)}`);
        expect(
          wanted.from === PRESET && wanted.refresh === REFRESH && wanted.signal === SIGNAL && wanted.node === target.node && wanted.gpu === target.gpu,
          `the controls show ${JSON.stringify(wanted)}`,
        );
        expect(wanted.cells[0] === `${target.node}/${target.gpu}`, `the heatmap shows ${wanted.cells}, expected ${target.node}/${target.gpu}`);

        // Back undoes the time-range change (the later variable and signal
        // changes replaced that same history entry), Forward redoes it all.
        await page.goBack();
        const back = await eventually(
          async () => {
            const s = await shownState(page);
            return s.from === 'now-1h' && s.cells.length === 8 ? s : undefined;
          },
          { timeoutMs: 10000, describe: () => `after Back the page does not show the first state (now-1h, 8 GPUs); URL ${page.url()}` },
        );
        expect(
          back.node === '' && back.gpu === '' && back.refresh === 'off',
          `after Back the variables are node="${back.node}" gpu="${back.gpu}" and refresh "${back.refresh}", expected All, All, off`,
        );
        await page.goForward();
        await eventually(
          async () => {
            const s = await shownState(page);
            return JSON.stringify(s) === JSON.stringify(wanted);
          },
          { timeoutMs: 10000, describe: () => `after Forward the page does not show ${JSON.stringify(wanted)}; URL ${page.url()}` },
        );
      });

      // The URL alone, in a fresh context, restores the same view.
      const path = `${url.pathname}${url.search}`;
      const ui = await openUi(ctx, server, path);
      try {
        const restored = await shownState(ui.page);
        expect(JSON.stringify(restored) === JSON.stringify(wanted), `loading ${path} shows ${JSON.stringify(restored)}, expected ${JSON.stringify(wanted)}`);
        const now = new URL(ui.page.url());
        expect(now.search === url.search, `loading ${path} rewrote the URL to ${now.search}`);
      } finally {
        await ui.finish('url-state-restored');
      }
    },
  },
];
