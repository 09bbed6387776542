// Every page loads and renders without a console error, page error, CSP
// violation or failed request; its <main> names the page; no panel ends in
// an error; the document carries the strict Content-Security-Policy (without
// it "no CSP violations" would prove nothing); the nav links every page; and
// the Targets, Rules and Status pages list what the API reports.
import { expect } from '../lib/expect.mjs';
import { gpusOf } from '../lib/fleet_truth.mjs';
import { firingOnEveryGpu } from './alerts.mjs';
import { withUi } from '../lib/ui_page.mjs';

const ALL_PAGES = ['fleet', 'gpu', 'training', 'alerts', 'explore', 'targets', 'rules', 'status'];
// The Fleet page's stat tiles (ui/src/pages/fleet/summary.ts) and levels.
const STAT_TILES = ['gpus', 'utilization', 'power', 'energy', 'throttling', 'alerts'];
const LEVELS = new Set(['ok', 'warning', 'critical', 'nodata']);
// The Status page's sections (one panel and one request each).
const STATUS_SECTIONS = ['build', 'runtime', 'tsdb', 'flags', 'config'];
const CSP_MUST_HAVE = ["default-src 'self'", "script-src 'self'", "style-src 'self'", "object-src 'none'", "frame-ancestors 'none'"];

async function commonExpectations(ui, path, page) {
  const csp = (await ui.response.allHeaders())['content-security-policy'] || '';
  for (const directive of CSP_MUST_HAVE) expect(csp.includes(directive), `${path}: Content-Security-Policy lacks "${directive}": "${csp}"`);
  const main = await ui.page.$eval('main', (m) => m.dataset.page);
  expect(main === page, `${path}: main[data-page] is "${main}", expected "${page}"`);
  const errors = await ui.page.$$eval('[data-panel][data-state=error]', (ps) => ps.map((p) => `${p.dataset.panel}: ${p.textContent.trim().slice(0, 200)}`));
  expect(errors.length === 0, () => `${path}: panels in error: ${errors.join(' | ')}`);
  const nav = await ui.page.$$eval('nav a[data-page]', (as) => as.map((a) => a.dataset.page));
  const missing = ALL_PAGES.filter((p) => !nav.includes(p));
  expect(missing.length === 0, `${path}: nav lacks links to ${missing.join(', ')} (has ${nav.join(', ')})`);
}

// Page-specific expectations, compared with the API where the page lists
// something the API reports.
const EXTRA = {
  // Stat tiles, with the firing test alert (severity warning) counted.
  async fleet(ui) {
    const tiles = await ui.page.$$eval('[data-testid^=stat-]', (ts) => Object.fromEntries(ts.map((t) => [t.dataset.testid.slice(5), t.dataset.level])));
    for (const name of STAT_TILES) expect(LEVELS.has(tiles[name]), `fleet: [data-testid=stat-${name}] has data-level "${tiles[name]}" (tiles: ${JSON.stringify(tiles)})`);
    expect(tiles.gpus === 'ok', `fleet: all 8 GPUs report, but stat-gpus is ${tiles.gpus}`);
    expect(['warning', 'critical'].includes(tiles.alerts), `fleet: a warning alert fires on every GPU, but stat-alerts is ${tiles.alerts}`);
  },
  async targets(ui, server) {
    const active = (await server.api.get('/api/v1/targets')).activeTargets;
    const rows = await ui.page.$$('[data-testid=target-row]');
    expect(rows.length === active.length, `targets: ${rows.length} [data-testid=target-row], the API reports ${active.length} active targets`);
  },
  async rules(ui, server) {
    const groups = (await server.api.get('/api/v1/rules')).groups;
    const count = groups.reduce((n, g) => n + g.rules.length, 0);
    const rows = await ui.page.$$('[data-testid=rule-row]');
    expect(rows.length === count, `rules: ${rows.length} [data-testid=rule-row], the API reports ${count} rules in ${groups.length} groups`);
  },
  async status(ui) {
    const sections = await ui.page.$$eval('[data-testid^=status-]', (s) => s.map((e) => `${e.dataset.testid}=${e.dataset.state}`));
    for (const want of STATUS_SECTIONS) {
      const done = sections.includes(`status-${want}=ready`) || sections.includes(`status-${want}=empty`);
      expect(done, `status: no [data-testid=status-${want}] in state ready or empty (has ${sections.join(', ') || 'none'})`);
    }
  },
};

function pageCheck(page, pathOf) {
  return {
    name: `page-${page}`,
    async run(ctx) {
      const server = ctx.fixture.main;
      const path = await pathOf(server, ctx.fixture);
      await withUi(ctx, server, path, `page-${page}`, async (ui) => {
        await commonExpectations(ui, path, page);
        if (EXTRA[page]) await EXTRA[page](ui, server);
      });
    },
  };
}

async function firstGpuPath(server) {
  const [first] = await gpusOf(server.api);
  expect(first, 'the server reports no GPU at all');
  return `/gpu?var-node=${encodeURIComponent(first.node)}&var-gpu=${encodeURIComponent(first.gpu)}`;
}

export const PAGE_CHECKS = [
  pageCheck('fleet', async (server, fixture) => {
    await firingOnEveryGpu(fixture);
    return '/fleet';
  }),
  pageCheck('gpu', firstGpuPath),
  pageCheck('training', async (server, fixture) => `/training?var-job=${encodeURIComponent(fixture.training.job)}`),
  pageCheck('alerts', async () => '/alerts'),
  pageCheck('explore', async () => '/explore'),
  pageCheck('targets', async () => '/targets'),
  pageCheck('rules', async () => '/rules'),
  pageCheck('status', async () => '/status'),
  {
    // `/` opens the Fleet page (the router redirects in the app).
    name: 'page-root-redirect',
    async run(ctx) {
      await withUi(
        ctx,
        ctx.fixture.main,
        '/',
        'page-root',
        async (ui) => {
          const path = new URL(ui.page.url()).pathname;
          expect(path === '/fleet', `/ ended at ${ui.page.url()}, expected /fleet`);
        },
        { page: 'fleet' },
      );
    },
  },
];
