// Does a semver range (the syntax of package.json `engines`, as npm reads it)
// admit a given release version?
//
// Contract: satisfies('18.19.0', '>=18 <19 || >=20') -> true. The version
// must be a plain release (MAJOR.MINOR.PATCH, no prerelease): that is what a
// Node.js binary reports, and it lets the bounds ignore npm's "-0" prerelease
// subtleties (for a release version "<2.0.0-0" and "<2.0.0" agree). Supported
// range syntax: `||` alternatives; space-separated comparators that must all
// hold; operators < <= > >= = (optionally followed by spaces); x-ranges
// (*, x, X, missing parts); tilde (~); caret (^); hyphen ranges (a - b);
// a leading "v". An empty range admits everything. Anything else throws, so
// a range this module cannot read is reported, never silently accepted.

/** [major, minor, patch] of a release version string; throws otherwise. */
export function parseVersion(text) {
  const m = /^v?(\d+)\.(\d+)\.(\d+)$/.exec(String(text).trim());
  if (!m) throw new Error(`not a release version: ${JSON.stringify(text)}`);
  return [Number(m[1]), Number(m[2]), Number(m[3])];
}

function compare(a, b) {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}

// A partial version: numbers where given, null for x/X/* or a missing part.
// A prerelease or build suffix on a full version is kept as `pre` (only a
// lower bound can carry it meaningfully; it orders before the release).
function parsePartial(text) {
  const m = /^v?(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/.exec(
    text,
  );
  if (!m) throw new Error(`cannot read version ${JSON.stringify(text)} in a range`);
  const part = (s) => (s === undefined || /^[xX*]$/.test(s) ? null : Number(s));
  const p = [part(m[1]), part(m[2]), part(m[3])];
  // "1.x.3" is not meaningful: once a part is wild, the rest are too.
  for (let i = 1; i < 3; i++) if (p[i - 1] === null) p[i] = null;
  return { parts: p, pre: m[4] !== undefined };
}

// The number of leading parts given (0..3).
function given(p) {
  return p.parts.findIndex((x) => x === null) === -1 ? 3 : p.parts.findIndex((x) => x === null);
}

// The smallest version above every version matching the first n parts.
function bumpAt(parts, n) {
  if (n === 0) return null; // no upper bound
  const out = [0, 0, 0];
  for (let i = 0; i < n - 1; i++) out[i] = parts[i];
  out[n - 1] = parts[n - 1] + 1;
  return out;
}

function floor(p) {
  return p.parts.map((x) => (x === null ? 0 : x));
}

// Comparators are { op: '>=' | '>' | '<' | '<=', v: [M, m, p], pre }.
function desugar(token) {
  const op = /^(<=|>=|<|>|=|~>|~|\^)?\s*(.*)$/.exec(token);
  const sign = op[1] || '';
  const p = parsePartial(op[2]);
  const n = given(p);
  const lo = floor(p);
  const hiExclusive = bumpAt(p.parts, n);
  const range = (upper) => [{ op: '>=', v: lo, pre: p.pre }, ...(upper ? [{ op: '<', v: upper }] : [])];
  switch (sign) {
    case '':
    case '=':
      return n === 3 ? [{ op: '>=', v: lo, pre: p.pre }, { op: '<=', v: lo }] : range(hiExclusive);
    case '>=':
      return [{ op: '>=', v: lo, pre: p.pre }];
    case '>':
      return n === 3 ? [{ op: '>', v: lo }] : n === 0 ? [{ op: '<', v: [0, 0, 0] }] : [{ op: '>=', v: hiExclusive }];
    case '<':
      return n === 0 ? [{ op: '<', v: [0, 0, 0] }] : [{ op: '<', v: lo }];
    case '<=':
      return n === 3 ? [{ op: '<=', v: lo }] : n === 0 ? [] : [{ op: '<', v: hiExclusive }];
    case '~':
    case '~>':
      // ~1.2.3 and ~1.2: same minor; ~1: same major.
      return range(bumpAt(p.parts, Math.min(n, 2)));
    case '^': {
      // Keep the first non-zero part given fixed (or the last part given, if all are zero).
      if (n === 0) return [];
      let k = p.parts.slice(0, n).findIndex((x) => x !== 0);
      if (k === -1) k = n - 1;
      return range(bumpAt(p.parts, k + 1));
    }
    default:
      throw new Error(`unknown operator ${sign}`);
  }
}

function holds(version, c) {
  const d = compare(version, c.v);
  switch (c.op) {
    case '>=':
      return d >= 0;
    case '>':
      return d > 0;
    case '<':
      return d < 0;
    case '<=':
      return d <= 0;
    default:
      throw new Error(`bad comparator ${c.op}`);
  }
}

// One `||` alternative as a list of comparators.
function parseAlternative(text) {
  const t = text.trim();
  const hyphen = /^(\S+)\s+-\s+(\S+)$/.exec(t);
  if (hyphen) {
    const a = parsePartial(hyphen[1]);
    const b = parsePartial(hyphen[2]);
    const nb = given(b);
    const upper = nb === 3 ? [{ op: '<=', v: floor(b) }] : nb === 0 ? [] : [{ op: '<', v: bumpAt(b.parts, nb) }];
    return [{ op: '>=', v: floor(a), pre: a.pre }, ...upper];
  }
  if (t === '') return [];
  // Glue an operator to the version after it: ">= 18" is one comparator.
  const tokens = t.replace(/(<=|>=|<|>|=|~>|~|\^)\s+/g, '$1').split(/\s+/);
  return tokens.flatMap(desugar);
}

/** True when the release `version` is in `range`; throws on unreadable input. */
export function satisfies(version, range) {
  const v = parseVersion(version);
  return String(range)
    .split('||')
    .some((alt) => parseAlternative(alt).every((c) => holds(v, c)));
}
