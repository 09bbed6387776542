// What the server knows about the simulated fleet, asked through its API: the
// ground truth the UI's pages are compared with.

/** Every GPU the server reports, as [{ node, gpu }] sorted by node then index. */
export async function gpusOf(api) {
  const rows = await api.query('count by (hostname, gpu) (gpu_info)');
  return rows
    .map((r) => ({ node: r.metric.hostname, gpu: r.metric.gpu }))
    .sort((a, b) => a.node.localeCompare(b.node) || Number(a.gpu) - Number(b.gpu));
}

/** A `${node}/${gpu}` key, for comparing sets of GPUs. */
export const gpuKey = (x) => `${x.node}/${x.gpu}`;

/** One value per GPU of an instant query, as a Map keyed by gpuKey. */
export async function perGpu(api, expr) {
  const rows = await api.query(expr);
  return new Map(rows.map((r) => [gpuKey({ node: r.metric.hostname, gpu: r.metric.gpu }), r.value]));
}
