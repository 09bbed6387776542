// Explore: typing part of a metric name offers the name in CodeMirror's
// autocompletion (the metric names come from the server), accepting it and
// running the query shows one table row per series the API returns, the
// graph tab draws a chart (stacked on request), and the query, tab and
// display live in the URL (a reload shows the same).
import { eventually, expect } from '../lib/expect.mjs';
import { withUi } from '../lib/ui_page.mjs';

const METRIC = 'gpu_temperature_celsius';
const TYPED = 'gpu_temperature_cel';

async function editorText(page) {
  return page.$eval('[data-testid=promql-editor] .cm-content', (e) => e.textContent);
}

async function resultRows(page, want) {
  return eventually(async () => {
    const n = (await page.$$('[data-testid=result-row]')).length;
    return n === want ? n : undefined;
  }, { timeoutMs: 10000, describe: () => `the table never showed ${want} [data-testid=result-row]` }).catch(async (e) => {
    e.message += ` (it shows ${(await page.$$('[data-testid=result-row]')).length})`;
    throw e;
  });
}

export const EXPLORE_CHECKS = [
  {
    name: 'explore-query',
    async run(ctx) {
      const server = ctx.fixture.main;
      const want = (await server.api.query(METRIC)).length;
      expect(want === 8, `the API returns ${want} series for ${METRIC}`);
      await withUi(ctx, server, '/explore', 'explore', async (ui) => {
        const { page } = ui;
        await page.click('[data-testid=promql-editor] .cm-content');
        await page.keyboard.type(TYPED, { delay: 20 });
        const option = page.locator('.cm-tooltip-autocomplete li', { hasText: METRIC }).first();
        try {
          await option.waitFor({ timeout: 10000 });
        } catch {
          const offered = await page.$$eval('.cm-tooltip-autocomplete li', (ls) => ls.map((l) => l.textContent));
          expect(false, `typing "${TYPED}" offered ${JSON.stringify(offered)}, expected ${METRIC}`);
        }
        await option.click();
        const text = await editorText(page);
        expect(text === METRIC, `after accepting the completion the editor holds "${text}", expected "${METRIC}"`);
        await page.click('[data-testid=run-query]');
        await page.click('[data-testid=tab-table]');
        await resultRows(page, want);
        await page.click('[data-testid=tab-graph]');
        await page.waitForSelector('.uplot canvas', { timeout: 10000 });
        await page.click('[data-testid=display-stacked]');
        await page.waitForSelector('[data-testid=display-stacked][aria-pressed=true]', { timeout: 10000 });
        await page.screenshot({ path: `${ctx.artifacts}/explore-graph-stacked.png`, fullPage: true });
        await page.click('[data-testid=tab-table]');
        await resultRows(page, want);
        const url = new URL(page.url());
        const held = { expr: url.searchParams.get('expr'), tab: url.searchParams.get('tab'), display: url.searchParams.get('display') };
        expect(JSON.stringify(held) === JSON.stringify({ expr: METRIC, tab: 'table', display: 'stacked' }), `the URL does not hold the query, tab and display: ${url}`);
        await page.reload();
        await page.waitForSelector('main[data-page=explore][data-state=ready]', { state: 'attached', timeout: 15000 });
        const after = await editorText(page);
        expect(after === METRIC, `after a reload the editor holds "${after}", expected "${METRIC}"`);
        await resultRows(page, want);
        await page.click('[data-testid=tab-graph]');
        await page.waitForSelector('[data-testid=display-stacked][aria-pressed=true]', { timeout: 10000 });
      });
    },
  },
];
