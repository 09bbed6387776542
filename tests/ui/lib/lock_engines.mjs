// Which packages of an npm lockfile refuse a given Node.js version?
//
// Contract: incompatiblePackages(lock, '18.19.0') returns one entry
// { name, version, engines } per package whose `engines.node` range (as npm
// records it in package-lock.json v2/v3 under "packages") does not admit the
// version, and one { name, version, engines, error } per package whose range
// cannot be read. A package that declares no Node engine is compatible. A v1
// lockfile (no "packages" map) records no engines at all, so it is an error
// rather than a silent pass.
import { satisfies } from './semver_range.mjs';

// engines is { node: '>=18' } in current packages; a few old ones publish
// an array like ["node >= 0.8"].
function nodeRange(engines) {
  if (engines === undefined || engines === null) return null;
  if (Array.isArray(engines)) {
    const entry = engines.find((e) => /^\s*node\b/.test(String(e)));
    return entry === undefined ? null : String(entry).replace(/^\s*node\s*/, '');
  }
  if (typeof engines === 'object') return engines.node === undefined ? null : String(engines.node);
  return null;
}

function packageName(path, entry) {
  if (entry.name) return entry.name;
  if (path === '') return '(root)';
  const i = path.lastIndexOf('node_modules/');
  return i === -1 ? path : path.slice(i + 'node_modules/'.length);
}

export function incompatiblePackages(lock, nodeVersion) {
  if (!lock || typeof lock.packages !== 'object') {
    throw new Error(
      `lockfileVersion ${lock && lock.lockfileVersion} has no "packages" map, so it records no engines; ` +
        'regenerate it with npm 7 or later',
    );
  }
  const bad = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    const range = nodeRange(entry.engines);
    if (range === null) continue;
    const row = { name: packageName(path, entry), version: entry.version, engines: range };
    try {
      if (!satisfies(nodeVersion, range)) bad.push(row);
    } catch (e) {
      bad.push({ ...row, error: e.message });
    }
  }
  return bad;
}
