/**
 * GPU identity and ordering.
 *
 * Contract: a GPU is identified by (hostname, gpu) — the labels every GPU
 * series carries (docs/metrics.md); `gpuKey` is the string form used as a
 * map key. GPU indexes sort numerically ("10" after "9"), host names
 * naturally ("node-2" before "node-10").
 */

export function gpuKey(node: string, gpu: string): string {
  return `${node}\u0000${gpu}`;
}

export function compareGpuIndex(a: string, b: string): number {
  const na = Number(a);
  const nb = Number(b);
  if (Number.isFinite(na) && Number.isFinite(nb) && na !== nb) return na - nb;
  return a < b ? -1 : a > b ? 1 : 0;
}

export const compareNode: (a: string, b: string) => number = new Intl.Collator("en", { numeric: true }).compare;
