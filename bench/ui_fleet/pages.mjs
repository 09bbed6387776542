// The pages the UI benchmark loads, and how each one's readiness is seen.
//
// Contract: PAGES({ gpumonBase, promBase, gpuTotal }) returns
// [{ name, ui, what, url, base, viewport, readiness }]; readiness is what
// measure.mjs waits for. Pages of a server that is not running (promBase
// null) have base null and are left out by the caller. The Explore and
// Prometheus pages run the same query over every GPU (one series each), so
// their times compare the two UIs on equal work.

const VIEWPORT = { width: 1440, height: 900 };
const QUERY = 'gpu_temperature_celsius';
const NODE = 'sim-node-0000';

// Run in the page on every animation frame (measure.mjs): the frame's time
// once the table has a row (or the graph a line) per series, else false.
function gpumonTableRows(n) {
  return document.querySelectorAll('[data-testid=result-row]').length >= n && performance.now();
}
function prometheusTableRows(n) {
  const t = document.querySelector('table.console_table');
  return t !== null && t.querySelectorAll('tbody tr').length >= n && performance.now();
}
function prometheusGraphLines(n) {
  return document.querySelectorAll('.rickshaw_graph svg path.path').length >= n && performance.now();
}

// Run in the page once it is ready: null, or what is missing.
function fleetShowsEveryGpu(n) {
  const cells = document.querySelectorAll('[data-testid=fleet-heatmap] [data-testid=gpu-cell]').length;
  return cells === n ? null : `the heatmap has ${cells} cells for ${n} GPUs`;
}
function gpuPageDrewCharts() {
  const charts = document.querySelectorAll('.uplot').length;
  return charts > 0 ? null : 'the GPU page drew no chart';
}

export function PAGES({ gpumonBase, promBase, gpuTotal }) {
  const gpumon = (name, what, path, readiness) => ({ name, ui: 'gpumon', what, url: `${gpumonBase}${path}`, base: gpumonBase, viewport: VIEWPORT, readiness });
  const prom = (name, what, path, readiness) => ({ name, ui: 'prometheus', what, url: `${promBase}${path}`, base: promBase, viewport: VIEWPORT, readiness });
  const q = encodeURIComponent(QUERY);
  return [
    gpumon('fleet', `Fleet page: heatmap of ${gpuTotal} GPUs, stat tiles, worst GPUs`, '/fleet', {
      mark: 'gpumon:ready:fleet',
      verify: fleetShowsEveryGpu,
      arg: gpuTotal,
    }),
    gpumon('gpu', 'GPU page: one GPU, 1 h of its signals', `/gpu?var-node=${NODE}&var-gpu=0`, { mark: 'gpumon:ready:gpu', verify: gpuPageDrewCharts }),
    gpumon('node', 'GPU page: one node (8 GPUs), 1 h', `/gpu?var-node=${NODE}`, { mark: 'gpumon:ready:gpu', verify: gpuPageDrewCharts }),
    gpumon('explore-table', `Explore, table of ${QUERY} (${gpuTotal} series)`, `/explore?expr=${q}&tab=table`, { predicate: gpumonTableRows, arg: gpuTotal }),
    gpumon('explore-graph', `Explore, graph of ${QUERY} (${gpuTotal} series, 1 h)`, `/explore?expr=${q}&tab=graph`, { mark: 'gpumon:ready:explore' }),
    prom('prometheus-table', `Prometheus 2.42 classic UI, console table of ${QUERY} (${gpuTotal} series)`, `/classic/graph?g0.expr=${q}&g0.tab=1`, {
      predicate: prometheusTableRows,
      arg: gpuTotal,
    }),
    prom('prometheus-graph', `Prometheus 2.42 classic UI, graph of ${QUERY} (${gpuTotal} series, 1 h)`, `/classic/graph?g0.expr=${q}&g0.tab=0&g0.range_input=1h`, {
      predicate: prometheusGraphLines,
      arg: gpuTotal,
    }),
  ];
}
