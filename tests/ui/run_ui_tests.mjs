#!/usr/bin/env node
// Real-browser tests of gpumon's built-in web UI.
//
// usage: node run_ui_tests.mjs --gpumon PATH --source-dir REPO
//            [--chromium /usr/bin/chromium] [--node-modules REPO/ui/node_modules]
//            [--artifacts DIR] [--artifacts-default DIR] [--only check,check]
//
// Starts three `gpumon server --simulate h200x8` processes on loopback
// (lib/fixture.mjs says what each is for), one headless Chromium with a fresh
// profile, and runs every check in checks/ against them, several at once,
// each in its own browser context. Every page a check opens fails the check
// on any console error, page error, CSP violation, failed request or
// request leaving the server (lib/browser.mjs). A screenshot of each page
// goes to the artifacts directory: --artifacts, else $GPUMON_UI_ARTIFACTS,
// else --artifacts-default (ctest passes <build>/tests/ui/ui-artifacts),
// else $TMPDIR/gpumon-ui-artifacts; the path is printed.
//
// Exits 0 when every check passed, 1 when one failed, 77 (skip) when
// chromium or ui/node_modules/playwright-core is absent.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { launchChromium, loadPlaywright } from './lib/browser.mjs';
import { CheckFailure } from './lib/expect.mjs';
import { startFixture } from './lib/fixture.mjs';
import { CHECKS } from './checks/index.mjs';

const SKIP = 77;
// Checks that run at once: each holds a page that renders and queries; the
// CI machines have 2 cores.
const PARALLEL = 3;

function option(name, fallback) {
  const i = process.argv.indexOf(name);
  return i !== -1 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

function skip(why) {
  console.log(`SKIP ui browser tests: ${why}`);
  process.exit(SKIP);
}

const gpumon = option('--gpumon');
const sourceDir = option('--source-dir');
if (!gpumon || !sourceDir) {
  console.error('usage: run_ui_tests.mjs --gpumon PATH --source-dir REPO [--artifacts DIR] [--only a,b]');
  process.exit(2);
}
const chromiumPath = option('--chromium', process.env.CHROMIUM || '/usr/bin/chromium');
const nodeModules = option('--node-modules', join(sourceDir, 'ui', 'node_modules'));
const artifacts = resolve(
  option('--artifacts', process.env.GPUMON_UI_ARTIFACTS || option('--artifacts-default', join(tmpdir(), 'gpumon-ui-artifacts'))),
);
const only = option('--only', '')
  .split(',')
  .filter(Boolean);

if (!existsSync(chromiumPath)) skip(`${chromiumPath} not found (install Debian's chromium)`);
if (!existsSync(join(nodeModules, 'playwright-core', 'package.json'))) skip(`${nodeModules}/playwright-core not found (run npm ci in ui/)`);
if (!existsSync(gpumon)) {
  console.log(`FAIL ui browser tests: gpumon binary not found: ${gpumon}`);
  process.exit(1);
}
const unknown = only.filter((n) => !CHECKS.some((c) => c.name === n));
if (unknown.length) {
  console.error(`unknown check(s): ${unknown.join(', ')}; known: ${CHECKS.map((c) => c.name).join(', ')}`);
  process.exit(2);
}
const selected = CHECKS.filter((c) => only.length === 0 || only.includes(c.name));

mkdirSync(artifacts, { recursive: true });
console.log(`screenshots: ${artifacts}`);

const t0 = Date.now();
const elapsed = () => `${((Date.now() - t0) / 1000).toFixed(1)} s`;
const tmp = mkdtempSync(join(tmpdir(), 'gpumon-ui-test-'));
let fixture;
let browser;
const results = [];

async function runCheck(check, ctx) {
  const started = Date.now();
  const notes = [];
  try {
    await check.run({ ...ctx, note: (m) => notes.push(m) });
    results.push({ name: check.name, ok: true, notes, seconds: (Date.now() - started) / 1000 });
  } catch (e) {
    const message = e instanceof CheckFailure ? e.message : `${e.stack || e}`;
    results.push({ name: check.name, ok: false, message, notes, seconds: (Date.now() - started) / 1000 });
  }
  const r = results[results.length - 1];
  console.log(`${r.ok ? 'ok  ' : 'FAIL'} ${r.name} (${r.seconds.toFixed(1)} s, at ${elapsed()})${r.ok ? '' : `\n     ${r.message.replace(/\n/g, '\n     ')}`}`);
  for (const n of r.notes) console.log(`     ${n}`);
}

// Runs the checks PARALLEL at a time, in order. Checks marked `waitsForData`
// spend most of their time waiting for the simulation to reach a state (a
// GPU overheating) before they open a page: they start at once, beside the
// others, so their waits overlap the rest.
async function runAll(checks, ctx) {
  const queue = checks.filter((c) => !c.waitsForData);
  const worker = async () => {
    for (let c = queue.shift(); c; c = queue.shift()) await runCheck(c, ctx);
  };
  await Promise.all([
    ...checks.filter((c) => c.waitsForData).map((c) => runCheck(c, ctx)),
    ...Array.from({ length: Math.min(PARALLEL, queue.length) }, worker),
  ]);
}

let exitCode = 1;
try {
  const playwright = await loadPlaywright(nodeModules);
  const [fx, br] = await Promise.all([startFixture({ gpumon, sourceDir, tmp }), launchChromium(playwright, chromiumPath)]);
  fixture = fx;
  browser = br;
  console.log(`servers up and Chromium ${browser.version()} started at ${elapsed()}`);
  await runAll(selected, { browser, fixture, artifacts, t0 });
  const failed = results.filter((r) => !r.ok);
  console.log(`${results.length - failed.length}/${results.length} checks passed in ${elapsed()}`);
  exitCode = failed.length ? 1 : 0;
  if (failed.length) console.log(`FAIL ui browser tests: ${failed.map((r) => r.name).join(', ')}`);
  else console.log('PASS ui browser tests');
} catch (e) {
  console.log(`FAIL ui browser tests: ${e.stack || e}`);
} finally {
  if (browser) await browser.close().catch(() => {});
  if (fixture) await fixture.stop();
  rmSync(tmp, { recursive: true, force: true });
}
process.exit(exitCode);
