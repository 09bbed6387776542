// Explore: typing part of a metric name offers the name in CodeMirror's
// autocompletion (the metric names come from the server), accepting it and
// running the query shows one table row per series the API returns, the
// graph tab draws a chart (stacked on request), and the query, tab and
// display live in the URL (a reload shows the same). A histogram (the
// server's own query durations, which it stores as job="gpumon" every
// 15 s once a query was observed) shows as a heatmap with one row per
// bucket bound.
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
  {
    name: 'explore-histogram-heatmap',
    // The first stored sample of the histogram comes with the server's
    // second self-scrape, up to 30 s in: wait beside the other checks.
    waitsForData: true,
    async run(ctx) {
      const server = ctx.fixture.main;
      const expr = 'sum by (le) (gpumon_engine_query_duration_seconds_bucket{job="gpumon"})';
      const bounds = await eventually(async () => {
        const n = (await server.api.query(expr)).length;
        return n > 1 ? n : undefined;
      }, { timeoutMs: 60000, intervalMs: 1000, describe: () => `the API never returned bucket series for ${expr}` });
      const path = `/explore?expr=${encodeURIComponent(expr)}&tab=graph&display=heatmap&from=now-5m&to=now`;
      await withUi(ctx, server, path, 'explore', async (ui) => {
        const { page } = ui;
        const el = await page.waitForSelector('[data-testid=histogram-heatmap][data-buckets]', { timeout: 10000 });
        const shown = Number(await el.getAttribute('data-buckets'));
        // The range query may see a bucket bound the instant query did not yet (never fewer).
        expect(shown >= bounds, `the heatmap has ${shown} bucket rows, the API ${bounds} bucket series`);
        await page.waitForSelector('[data-testid=histogram-heatmap] canvas', { timeout: 10000 });
        await page.screenshot({ path: `${ctx.artifacts}/explore-histogram-heatmap.png`, fullPage: true });
      });
    },
  },
];
