// The Training page against the fixture's SIMULATED training jobs
// (lib/training_job.mjs, remote-written into the main server): the
// straggler rank is singled out in the ranks table and in the step-time
// chart, every panel has data, the job's GPUs are the ones its ranks run on
// (with links to the GPU page), the job and rank pickers write the URL, a
// job without GPU labels falls back to its nodes' GPUs, and a server without
// training jobs says how to export one.
import { eventually, expect } from '../lib/expect.mjs';
import { gpuKey } from '../lib/fleet_truth.mjs';
import { SLOW_RANK_SCORES } from '../lib/training_job.mjs';
import { withUi } from '../lib/ui_page.mjs';

// ui/src/pages/training/queries.ts STRAGGLER_THRESHOLD (the rule pack's TrainingStraggler threshold)
const THRESHOLD = 0.7;
const SCORE_TOLERANCE = 0.02;
// Every panel of a selected job (ui/src/pages/training: index.ts, panels.ts).
const JOB_PANELS = [
  'ranks',
  'loss',
  'tokens',
  'samples',
  'mfu',
  'step-time',
  'sections',
  'cuda-memory',
  'fragmentation',
  'checkpoints',
  'goodput',
  'learning-rate',
  'grad-norm',
  'grad-sync',
  'job-gpus',
];

const jobPath = (job, extra = '') => `/training?from=now-15m&var-job=${encodeURIComponent(job)}${extra}`;

/** Scrolls every panel into view (they load lazily), waits until the page is ready, returns { id: state }. */
async function loadAllPanels(page) {
  const ids = await page.$$eval('[data-panel]', (ps) => ps.map((p) => p.dataset.panel));
  for (const id of ids) {
    await page.$eval(`[data-panel="${id}"]`, (p) => p.scrollIntoView({ block: 'center' }));
    await page.waitForSelector(`[data-panel="${id}"]:not([data-state=loading])`, { state: 'attached', timeout: 15000 });
  }
  await page.waitForSelector('main[data-page=training][data-state=ready]', { state: 'attached', timeout: 15000 });
  return page.$$eval('[data-panel]', (ps) => Object.fromEntries(ps.map((p) => [p.dataset.panel, `${p.dataset.state}${p.dataset.state === 'error' ? `: ${p.textContent.trim().slice(0, 200)}` : ''}`])));
}

async function rankRows(page) {
  return page.$$eval('[data-testid=training-ranks] [data-testid=rank-row]', (rows) =>
    rows.map((r) => ({ rank: r.dataset.rank, score: Number(r.dataset.score), straggler: r.dataset.straggler, worst: r.dataset.worst ?? '' })),
  );
}

export const TRAINING_CHECKS = [
  {
    name: 'training-straggler',
    async run(ctx) {
      const server = ctx.fixture.main;
      const job = ctx.fixture.training;
      const slow = String(job.slowRank);
      await withUi(ctx, server, jobPath(job.job), 'training-straggler', async ({ page }) => {
        const states = await loadAllPanels(page);
        for (const id of JOB_PANELS) expect(states[id] === 'ready', () => `panel ${id} is "${states[id]}", expected ready with data (all: ${JSON.stringify(states)})`);

        const rows = await rankRows(page);
        expect(rows.length === job.ranks, `${rows.length} rank rows, the simulated job has ${job.ranks} ranks: ${JSON.stringify(rows)}`);
        const [first, ...rest] = rows;
        expect(first.rank === slow && first.straggler === 'true' && first.worst === 'true', `the first rank row should be the straggler rank ${slow}: ${JSON.stringify(rows)}`);
        // The rule pack's score where its record exists (or existed when the page queried), else the UI's fallback.
        const record = await server.api.query(`job:training_straggler_score:ratio1m{job="${job.job}",rank="${slow}"}`);
        const scores = [SLOW_RANK_SCORES.fallback, SLOW_RANK_SCORES.record];
        expect(
          scores.some((w) => Math.abs(first.score - w) <= SCORE_TOLERANCE),
          `rank ${slow}'s score is ${first.score}; the simulation makes it ${SLOW_RANK_SCORES.record.toFixed(3)} (rule pack) or ${SLOW_RANK_SCORES.fallback.toFixed(3)} (fallback)`,
        );
        ctx.note(`rank ${slow} score ${first.score} (${record.length ? `the rule pack records ${record[0].value.toFixed(3)}` : 'no record yet: fallback'})`);
        for (const r of rest) expect(r.straggler === 'false' && r.score >= THRESHOLD, `rank ${r.rank} is no straggler but shows ${JSON.stringify(r)}`);

        // Each rank's GPU clock event reasons are ones the API saw active on that GPU lately.
        const reasons = await page.$$eval('[data-testid=rank-row]', (rs) =>
          rs.map((r) => ({ rank: r.dataset.rank, reasons: r.querySelector('[data-testid=rank-gpu-reasons]')?.dataset.reasons ?? null })),
        );
        const lately = await server.api.query('max by (hostname, gpu, reason) (max_over_time(gpu_clock_event_reason_active{reason!="gpu_idle"}[2m])) == 1');
        for (const r of reasons) {
          const gpu = job.gpus[Number(r.rank)];
          expect(r.reasons !== null, `rank ${r.rank} has no [data-testid=rank-gpu-reasons] cell`);
          const active = new Set(lately.filter((x) => x.metric.hostname === gpu.node && x.metric.gpu === gpu.gpu).map((x) => x.metric.reason));
          for (const reason of r.reasons.split(',').filter(Boolean)) {
            expect(active.has(reason), `rank ${r.rank} shows clock event reason ${reason}, never active on its GPU ${gpuKey(gpu)} lately (${[...active].join(', ') || 'none'})`);
          }
        }
        ctx.note(`GPU clock event reasons per rank: ${reasons.map((r) => `${r.rank}=${r.reasons || 'none'}`).join(' ')}`);

        const note = await page.$eval('[data-panel=step-time] [data-testid=straggler-note]', (n) => n.dataset.ranks);
        expect(note === slow, `the step-time chart highlights ranks "${note}", expected "${slow}"`);
        const legend = await page.$$eval('[data-panel=step-time] .u-legend .u-series th', (ths) => ths.map((t) => t.textContent.trim()));
        expect(legend.some((t) => t.includes(`rank ${slow} (straggler)`)), `the step-time legend does not name rank ${slow} the straggler: ${legend.join(' | ')}`);

        const gpus = await page.$$eval('[data-testid=training-gpus] [data-testid=job-gpu]', (rows) =>
          rows.map((r) => ({ node: r.dataset.node, gpu: r.dataset.gpu, href: r.querySelector('a')?.getAttribute('href') ?? '' })),
        );
        const want = job.gpus.map(gpuKey).sort();
        const seen = gpus.map(gpuKey).sort();
        expect(JSON.stringify(seen) === JSON.stringify(want), `the job's GPUs are ${seen.join(' ')}, its ranks run on ${want.join(' ')}`);
        for (const g of gpus) {
          const u = new URL(g.href, server.base);
          expect(
            u.pathname === '/gpu' && u.searchParams.get('var-node') === g.node && u.searchParams.get('var-gpu') === g.gpu && !u.searchParams.has('var-job'),
            `GPU link ${g.href} should open /gpu for ${gpuKey(g)} without the job variable`,
          );
        }
      });
    },
  },
  {
    // Once the rule pack has evaluated its training group (the default
    // evaluation interval: up to a minute after the start), the page scores
    // with its record rather than the fallback.
    name: 'training-straggler-record',
    waitsForData: true,
    async run(ctx) {
      const server = ctx.fixture.main;
      const job = ctx.fixture.training;
      const slow = String(job.slowRank);
      const record = `job:training_straggler_score:ratio1m{job="${job.job}",rank="${slow}"}`;
      const value = await eventually(
        async () => {
          const r = await server.api.query(record);
          return r.length ? r[0].value : false;
        },
        { timeoutMs: 120000, intervalMs: 2000, describe: () => `the rule pack never recorded ${record}` },
      );
      expect(Math.abs(value - SLOW_RANK_SCORES.record) <= SCORE_TOLERANCE, `the rule pack scores rank ${slow} ${value}, the simulation makes it ${SLOW_RANK_SCORES.record.toFixed(3)}`);
      await withUi(ctx, server, jobPath(job.job), 'training-straggler-record', async ({ page }) => {
        const rows = await rankRows(page);
        const first = rows[0];
        expect(
          first && first.rank === slow && first.straggler === 'true' && Math.abs(first.score - value) <= SCORE_TOLERANCE,
          `with the record present the ranks table should show rank ${slow} first at ${value.toFixed(3)}: ${JSON.stringify(rows)}`,
        );
        for (const r of rows.slice(1)) expect(r.straggler === 'false', `rank ${r.rank} is no straggler but shows ${JSON.stringify(r)}`);
        // The rule pack's section scores name the slow section: the simulation slows rank 3's forward.
        const section = await page.$eval(`[data-testid=rank-row][data-rank="${slow}"] [data-testid=rank-section]`, (td) => td.dataset.section);
        expect(section === 'forward', `rank ${slow}'s slowest section shows as "${section}", the simulation slows its forward`);
      });
    },
  },
  {
    name: 'training-pickers',
    async run(ctx) {
      const server = ctx.fixture.main;
      const { training, trainingOther } = ctx.fixture;
      await withUi(ctx, server, '/training?from=now-15m', 'training-jobs', async ({ page }) => {
        const listed = await page.$$eval('[data-testid=training-job-link]', (as) => as.map((a) => a.dataset.job).sort());
        const want = [training.job, trainingOther.job].sort();
        expect(JSON.stringify(listed) === JSON.stringify(want), `the jobs list shows ${listed.join(', ')}, expected ${want.join(', ')}`);
        await page.selectOption('[data-testid=training-job]', training.job);
        await eventually(async () => new URL(page.url()).searchParams.get('var-job') === training.job, {
          timeoutMs: 10000,
          describe: () => `choosing ${training.job} left the URL at ${page.url()}`,
        });
        await page.waitForSelector('main[data-page=training][data-state=ready]', { state: 'attached', timeout: 15000 });
        const ranks = await eventually(
          async () => {
            const r = await page.$$eval('[data-testid=training-rank] option', (os) => os.map((o) => o.value).filter(Boolean));
            return r.length === training.ranks ? r : false;
          },
          { timeoutMs: 10000, describe: () => `the rank picker does not list the job's ${training.ranks} ranks` },
        );
        expect(ranks.join(',') === '0,1,2,3', `the rank picker lists ${ranks.join(',')}`);
        await page.selectOption('[data-testid=training-rank]', '2');
        await eventually(async () => new URL(page.url()).searchParams.get('rank') === '2', {
          timeoutMs: 10000,
          describe: () => `choosing rank 2 left the URL at ${page.url()}`,
        });
        await page.waitForSelector('main[data-page=training][data-state=ready]', { state: 'attached', timeout: 15000 });
        const legend = await page.$$eval('[data-panel=loss] .u-legend .u-series th', (ths) => ths.map((t) => t.textContent.trim()).filter((t) => t && t !== 'Time'));
        expect(legend.length === 1 && legend[0].includes('rank 2'), `with rank 2 chosen the loss chart shows ${legend.join(' | ')}`);
      });
      // The URL alone restores the selection.
      await withUi(ctx, server, jobPath(training.job, '&rank=2'), 'training-rank', async ({ page }) => {
        const job = await page.$eval('[data-testid=training-job]', (s) => s.value);
        const rank = await page.$eval('[data-testid=training-rank]', (s) => s.value);
        expect(job === training.job && rank === '2', `the URL's job and rank show as job "${job}", rank "${rank}"`);
        const selected = await page.$$eval('[data-testid=rank-row].is-selected', (rs) => rs.map((r) => r.dataset.rank));
        expect(selected.join(',') === '2', `the ranks table marks ranks ${selected.join(',')} as selected`);
      });
      // var-job naming no training job (the GPU agents' scrape job, kept from the GPU pages) says so.
      await withUi(ctx, server, jobPath('gpumon-agent'), 'training-unknown-job', async ({ page }) => {
        const notice = await page.waitForSelector('[data-testid=training-unknown-job]:not([hidden])', { state: 'attached', timeout: 10000 }).then((el) => el.textContent());
        expect(notice.includes('gpumon-agent'), `the notice for an unknown job reads "${notice}"`);
      });
      // A job without GPU labels: every GPU of its node stands in, no straggler.
      await withUi(ctx, server, jobPath(trainingOther.job), 'training-nodes', async ({ page }) => {
        const states = await loadAllPanels(page);
        expect(states['job-gpus'] === 'ready', `job-gpus is ${states['job-gpus']} for a job without GPU labels`);
        const nodes = new Set(trainingOther.gpus.map((g) => g.node));
        const gpus = await page.$$eval('[data-testid=job-gpu]', (rows) => rows.map((r) => r.dataset.node));
        expect(gpus.length >= trainingOther.ranks && gpus.every((n) => nodes.has(n)), `the job's GPUs are on ${gpus.join(', ')}, its nodes are ${[...nodes].join(', ')}`);
        const rows = await rankRows(page);
        expect(rows.length === trainingOther.ranks && rows.every((r) => r.straggler === 'false'), `a job without a straggler shows ${JSON.stringify(rows)}`);
        const note = await page.$eval('[data-panel=step-time] [data-testid=straggler-note]', (n) => n.dataset.ranks);
        expect(note === '', `the step-time chart of a job without a straggler highlights "${note}"`);
      });
    },
  },
  {
    name: 'training-empty',
    async run(ctx) {
      // The hot server has no training job.
      await withUi(ctx, ctx.fixture.hot, '/training', 'training-empty', async ({ page }) => {
        const text = await page
          .waitForSelector('[data-testid=training-empty]', { timeout: 10000 })
          .then((el) => el.textContent());
        expect(/clients\/python/.test(text), `the empty state does not say how to export a job: "${text}"`);
      });
    },
  },
];
