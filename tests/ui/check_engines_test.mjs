#!/usr/bin/env node
// Self-test of check_engines.mjs: the range reader against hand-worked npm
// ranges, and the checker against two fixture lockfiles, one of which holds a
// package that requires Node >= 20 and must be rejected.
//
// usage: node check_engines_test.mjs   (exits 0 on pass, 1 on failure)
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { satisfies } from './lib/semver_range.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const failures = [];

// [range, does 18.19.0 satisfy it?]
const CASES = [
  ['', true],
  ['*', true],
  ['>=18', true],
  ['>= 18.19', true],
  ['>=18.19.1', false],
  ['>=20', false],
  ['>=20.0.0', false],
  ['>18', false], // npm: >18 is >=19.0.0
  ['>18.19.0', false],
  ['>18.18', true],
  ['>18.19', false],
  ['<19', true],
  ['<18.19', false],
  ['<=18', true],
  ['<=18.18', false],
  ['18', true],
  ['18.x', true],
  ['18.19.x', true],
  ['=18.19.0', true],
  ['18.20.0', false],
  ['^18.0.0', true],
  ['^18.20.0', false],
  ['^16 || ^18 || >=20', true],
  ['^14.18.0 || >=16.0.0', true],
  ['^20.9.0 || >=22', false],
  ['~18.19.0', true],
  ['~18.18', false],
  ['~18', true],
  ['^0.10.0', false],
  ['^0.0.3', false],
  ['^0.x', false],
  ['>=12 <13 || >=14', true],
  ['>=16 <18', false],
  ['16 - 18', true],
  ['16 - 18.18', false],
  ['18.19.0 - 20', true],
  ['v18', true],
  ['>=18.0.0-rc.1', true],
  ['>= 12.22.0 < 13 || >= 14.17.0 < 15 || >= 16', true],
];
for (const [range, expected] of CASES) {
  let got;
  try {
    got = satisfies('18.19.0', range);
  } catch (e) {
    got = `error: ${e.message}`;
  }
  if (got !== expected) failures.push(`satisfies('18.19.0', '${range}'): expected ${expected}, got ${got}`);
}
// A range the reader cannot parse is an error, never a silent yes.
try {
  satisfies('18.19.0', '>=eighteen');
  failures.push("satisfies('18.19.0', '>=eighteen') did not throw");
} catch {
  /* expected */
}

function runChecker(fixture) {
  const r = spawnSync(process.execPath, [join(here, 'check_engines.mjs'), '--lock', join(here, 'fixtures', fixture)], {
    encoding: 'utf8',
  });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

const rejected = runChecker('lock-requires-node20.json');
if (rejected.status !== 1 || !/needs-node20@1\.62\.1/.test(rejected.out) || /ok-node18|ok-no-engines/.test(rejected.out)) {
  failures.push(`lock-requires-node20.json: expected exit 1 naming only needs-node20, got ${rejected.status}:\n${rejected.out}`);
}
const accepted = runChecker('lock-node18.json');
if (accepted.status !== 0) failures.push(`lock-node18.json: expected exit 0, got ${accepted.status}:\n${accepted.out}`);

if (failures.length > 0) {
  for (const f of failures) console.log(`  ${f}`);
  console.log(`FAIL check_engines_test: ${failures.length} failure(s)`);
  process.exit(1);
}
console.log(`PASS check_engines_test (${CASES.length} ranges, 2 fixture lockfiles)`);
