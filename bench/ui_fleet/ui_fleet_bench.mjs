#!/usr/bin/env node
// How fast does the built-in UI show a 1,000-GPU fleet? A real headless
// Chromium against `gpumon server` scraping `gpumon simulate`.
//
// usage: node bench/ui_fleet/ui_fleet_bench.mjs --gpumon build/bin/gpumon
//            [--nodes 125] [--gpus 8] [--runs 10] [--warmup 60]
//            [--scrape-interval 15s] [--prometheus /usr/bin/prometheus | --prometheus none]
//            [--chromium /usr/bin/chromium] [--node-modules ui/node_modules] [--json FILE]
//
// Starts, on loopback only: `gpumon simulate --nodes N --gpus G` (node i at
// /node/<i>/metrics); `gpumon server --config` with one scrape target per
// node and the rule pack (rules/*.rules.yml), in a temporary --data
// directory; and, for a side-by-side reference, the Debian `prometheus`
// scraping the same nodes. Once both hold every GPU and `--warmup` seconds
// of data (so the rule pack has evaluated a few times), it loads each page
// --runs times cold (a new browser context: empty cache) and --runs times
// warm (the same context again: cached assets), and reports per page the
// time from navigation start to ready (median, p90), the requests and bytes
// transferred up to then, and the JS heap the page keeps (lib: measure.mjs).
//
// "Ready" is the UI's own mark `gpumon:ready:<page>` (every panel in view
// has finished). Prometheus' classic UI has no such mark, so both UIs are
// also timed by the same DOM test for the same 1,000-series query: the table
// has a row per series, or the graph has a line per series (checked on every
// animation frame). The slowest API request of each load is reported too:
// the part of the time the server's queries take. Progress goes to stderr,
// a markdown table to stdout.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { Child } from '../../tests/ui/lib/child.mjs';
import { freePort } from '../../tests/ui/lib/ports.mjs';
import { waitHttp } from '../../tests/ui/lib/gpumon_server.mjs';
import { PromApi } from '../../tests/ui/lib/prom_api.mjs';
import { launchChromium, loadPlaywright } from '../../tests/ui/lib/browser.mjs';
import { measureLoad } from './measure.mjs';
import { PAGES } from './pages.mjs';
import { summarize, renderTable } from './report.mjs';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

function option(name, fallback) {
  const i = process.argv.indexOf(name);
  return i !== -1 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

const opts = {
  gpumon: option('--gpumon', join(repo, 'build', 'bin', 'gpumon')),
  nodes: Number(option('--nodes', '125')),
  gpus: Number(option('--gpus', '8')),
  runs: Number(option('--runs', '10')),
  warmupS: Number(option('--warmup', '60')),
  scrapeInterval: option('--scrape-interval', '15s'),
  prometheus: option('--prometheus', '/usr/bin/prometheus'),
  chromium: option('--chromium', '/usr/bin/chromium'),
  nodeModules: option('--node-modules', join(repo, 'ui', 'node_modules')),
  json: option('--json', null),
};
const progress = (m) => process.stderr.write(`${m}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function writeScrapeConfig(path, simPort, nodes, { ruleGlob }) {
  const lines = [
    'global:',
    `  scrape_interval: ${opts.scrapeInterval}`,
    `  scrape_timeout: ${opts.scrapeInterval === '1s' ? '1s' : '5s'}`,
    `  evaluation_interval: ${opts.scrapeInterval}`,
  ];
  if (ruleGlob) lines.push('rule_files:', `  - '${ruleGlob}'`);
  lines.push('scrape_configs:', '  - job_name: gpumon_sim', '    static_configs:');
  for (let i = 0; i < nodes; i++) {
    const name = `sim-node-${String(i).padStart(4, '0')}`;
    lines.push(`      - targets: ['127.0.0.1:${simPort}']`, `        labels: {__metrics_path__: '/node/${i}/metrics', instance: '${name}'}`);
  }
  writeFileSync(path, `${lines.join('\n')}\n`);
}

async function waitForGpus(api, want, label) {
  const deadline = Date.now() + 180000;
  let got = 0;
  while (Date.now() < deadline) {
    try {
      got = await api.scalar('count(gpu_info)');
    } catch {
      got = 0;
    }
    if (got === want) return;
    await sleep(1000);
  }
  throw new Error(`${label} holds ${got} GPUs after 3 minutes, expected ${want}`);
}

function builds() {
  try {
    return execFileSync('pgrep', ['-fa', 'ninja|cc1plus'], { encoding: 'utf8' }).trim();
  } catch {
    return ''; // pgrep exits 1 when nothing matches
  }
}

async function main() {
  const gpuTotal = opts.nodes * opts.gpus;
  for (const [what, p] of [['gpumon', opts.gpumon], ['chromium', opts.chromium], ['playwright-core', join(opts.nodeModules, 'playwright-core')]]) {
    if (!existsSync(p)) throw new Error(`${what} not found at ${p}`);
  }
  const withPrometheus = opts.prometheus !== 'none' && existsSync(opts.prometheus);
  if (opts.prometheus !== 'none' && !withPrometheus) progress(`no Prometheus at ${opts.prometheus}: gpumon only`);
  const tmp = mkdtempSync(join(tmpdir(), 'gpumon-ui-bench-'));
  const children = [];
  let browser;
  try {
    const simPort = await freePort();
    const sim = new Child([opts.gpumon, 'simulate', '--nodes', opts.nodes, '--gpus', opts.gpus, '--interval', opts.scrapeInterval, '--listen', `127.0.0.1:${simPort}`], { name: 'gpumon simulate' });
    children.push(sim);
    await waitHttp(`http://127.0.0.1:${simPort}/node/0/metrics`, { child: sim, timeoutMs: 60000 });
    progress(`simulator: ${opts.nodes} nodes x ${opts.gpus} GPUs on :${simPort}`);

    const gpumonConfig = join(tmp, 'gpumon.yml');
    writeScrapeConfig(gpumonConfig, simPort, opts.nodes, { ruleGlob: join(repo, 'rules', '*.rules.yml') });
    const serverPort = await freePort();
    const server = new Child([opts.gpumon, 'server', '--config', gpumonConfig, '--data', join(tmp, 'gpumon-data'), '--listen', `127.0.0.1:${serverPort}`], { name: 'gpumon server' });
    children.push(server);
    const gpumonBase = `http://127.0.0.1:${serverPort}`;
    await waitHttp(`${gpumonBase}/-/ready`, { child: server, timeoutMs: 60000 });

    let promBase = null;
    if (withPrometheus) {
      const promConfig = join(tmp, 'prometheus.yml');
      writeScrapeConfig(promConfig, simPort, opts.nodes, {});
      const promPort = await freePort();
      const prom = new Child([opts.prometheus, `--config.file=${promConfig}`, `--storage.tsdb.path=${join(tmp, 'prom-data')}`, `--web.listen-address=127.0.0.1:${promPort}`], { name: 'prometheus' });
      children.push(prom);
      promBase = `http://127.0.0.1:${promPort}`;
      await waitHttp(`${promBase}/-/ready`, { child: prom, timeoutMs: 60000 });
    }
    progress(`waiting for ${gpuTotal} GPUs in gpumon${promBase ? ' and Prometheus' : ''}...`);
    await Promise.all([waitForGpus(new PromApi(gpumonBase), gpuTotal, 'gpumon server'), promBase && waitForGpus(new PromApi(promBase), gpuTotal, 'Prometheus')]);
    for (let left = opts.warmupS; left > 0; left -= 10) {
      progress(`warm-up: ${left} s of data collection left`);
      await sleep(Math.min(10, left) * 1000);
    }

    const playwright = await loadPlaywright(opts.nodeModules);
    browser = await launchChromium(playwright, opts.chromium);
    const running = builds();
    const load = loadavg().map((x) => x.toFixed(2)).join(' ');
    progress(`Chromium ${browser.version()}; load average ${load}${running ? '; BUILDS RUNNING (results are under load)' : '; no builds running'}`);

    const pages = PAGES({ gpumonBase, promBase, gpuTotal }).filter((p) => p.base);
    const results = [];
    // The 1-minute load average while the pages load (this run's own
    // processes included: simulator, both servers, the browser).
    const loadSamples = [loadavg()[0]];
    const sampler = setInterval(() => loadSamples.push(loadavg()[0]), 5000);
    for (const p of pages) {
      // Cold and warm loads alternate, so that the servers' periodic work
      // (scrapes, rule evaluations) falls on both alike. A warm load reuses
      // one context whose HTTP cache a first, unmeasured load filled; a cold
      // load gets a new context with an empty cache.
      const samples = { cold: [], warm: [] };
      const warmContext = await browser.newContext({ viewport: p.viewport });
      try {
        await measureLoad(warmContext, p.url, p.readiness);
        for (let i = 1; i <= opts.runs; i++) {
          for (const mode of ['cold', 'warm']) {
            const context = mode === 'warm' ? warmContext : await browser.newContext({ viewport: p.viewport });
            try {
              const m = await measureLoad(context, p.url, p.readiness);
              samples[mode].push(m);
              progress(`${p.name} ${mode} ${i}/${opts.runs}: ${m.readyMs.toFixed(0)} ms (slowest API request ${m.slowestApiMs.toFixed(0)} ms), ${m.requests} requests, ${(m.transferBytes / 1024).toFixed(0)} KiB, heap ${(m.heapBytes / 1048576).toFixed(1)} MiB`);
            } finally {
              if (context !== warmContext) await context.close();
            }
          }
        }
      } finally {
        await warmContext.close();
      }
      for (const mode of ['cold', 'warm']) results.push({ page: p.name, ui: p.ui, what: p.what, mode, ...summarize(samples[mode]) });
    }
    clearInterval(sampler);
    const loadEnd = loadavg().map((x) => x.toFixed(2)).join(' ');
    const runningEnd = builds();
    const report = {
      nodes: opts.nodes,
      gpus: gpuTotal,
      runs: opts.runs,
      scrapeInterval: opts.scrapeInterval,
      chromium: browser.version(),
      loadAverage: load,
      loadAverageEnd: loadEnd,
      loadDuringLoads: { min: Math.min(...loadSamples), median: loadSamples.sort((a, b) => a - b)[loadSamples.length >> 1], max: Math.max(...loadSamples) },
      buildsRunning: Boolean(running || runningEnd),
      results,
    };
    process.stdout.write(`${renderTable(report)}\n`);
    if (opts.json) writeFileSync(opts.json, JSON.stringify(report, null, 2));
  } finally {
    if (browser) await browser.close().catch(() => {});
    for (const c of children.reverse()) await c.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((e) => {
  progress(`ui_fleet_bench failed: ${e.stack || e}`);
  process.exit(1);
});
