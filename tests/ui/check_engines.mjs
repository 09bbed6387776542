#!/usr/bin/env node
// Every package in ui/package-lock.json must run on Debian 12's Node.js
// (18.19): the UI is built by the normal build with the distribution's
// `nodejs`, so a dependency that declares engines.node >= 20 would break a
// fresh Debian 12 build even though it works on a developer's newer Node.
//
// usage: node check_engines.mjs --lock ui/package-lock.json [--node 18.19.0]
// Exits 0 when every package admits the version (or declares no engine),
// 1 listing each package that does not, 77 when the lockfile is absent.
import { existsSync, readFileSync } from 'node:fs';
import { incompatiblePackages } from './lib/lock_engines.mjs';

const SKIP = 77;

function option(name, fallback) {
  const i = process.argv.indexOf(name);
  return i !== -1 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

const lockPath = option('--lock', null);
const nodeVersion = option('--node', '18.19.0');
if (!lockPath) {
  console.error('usage: check_engines.mjs --lock PATH [--node VERSION]');
  process.exit(2);
}
if (!existsSync(lockPath)) {
  console.log(`SKIP check_engines: ${lockPath} does not exist`);
  process.exit(SKIP);
}
let bad;
try {
  const lock = JSON.parse(readFileSync(lockPath, 'utf8'));
  bad = incompatiblePackages(lock, nodeVersion);
  console.log(`${Object.keys(lock.packages).length} packages in ${lockPath} checked against Node ${nodeVersion}`);
} catch (e) {
  console.log(`FAIL check_engines: ${lockPath}: ${e.message}`);
  process.exit(1);
}
if (bad.length > 0) {
  for (const b of bad) {
    const why = b.error ? `unreadable range (${b.error})` : `does not admit ${nodeVersion}`;
    console.log(`  ${b.name}@${b.version}: engines.node "${b.engines}" ${why}`);
  }
  console.log(`FAIL check_engines: ${bad.length} package(s) would not run on Node ${nodeVersion}`);
  process.exit(1);
}
console.log('PASS check_engines');
