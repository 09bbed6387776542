// Summaries and the markdown table of the UI benchmark.
//
// Contract: summarize(samples) reduces measure.mjs results to medians and
// p90s (nearest rank); renderTable(report) prints one row per page and mode,
// then the gpumon / Prometheus ratios for equal work (table vs table, graph
// vs graph, and the Fleet page vs Prometheus' table of the same GPUs).

export function percentile(values, p) {
  const s = [...values].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

export function summarize(samples) {
  const col = (k) => samples.map((s) => s[k]);
  return {
    n: samples.length,
    readyMedianMs: percentile(col('readyMs'), 50),
    readyP90Ms: percentile(col('readyMs'), 90),
    requestsMedian: percentile(col('requests'), 50),
    slowestApiMedianMs: percentile(col('slowestApiMs'), 50),
    transferKiBMedian: percentile(col('transferBytes'), 50) / 1024,
    heapMiBMedian: percentile(col('heapBytes'), 50) / 1048576,
  };
}

function row(cells) {
  return `| ${cells.join(' | ')} |`;
}

export function renderTable(report) {
  const lines = [
    `${report.gpus} GPUs (${report.nodes} nodes), ${report.runs} loads per row, scrape interval ${report.scrapeInterval}, Chromium ${report.chromium}, load average ${report.loadAverage} at the start, ${report.loadAverageEnd} at the end (1-minute load while loading pages: ${report.loadDuringLoads.min.toFixed(1)}-${report.loadDuringLoads.max.toFixed(1)}, median ${report.loadDuringLoads.median.toFixed(1)})${report.buildsRunning ? ' (builds were running)' : ''}`,
    '',
    row(['UI', 'page', 'load', 'ready, median', 'ready, p90', 'slowest API request', 'requests', 'transferred', 'JS heap']),
    row(['---', '---', '---', '---:', '---:', '---:', '---:', '---:', '---:']),
  ];
  for (const r of report.results) {
    lines.push(
      row([
        r.ui,
        r.page,
        r.mode,
        `${r.readyMedianMs.toFixed(0)} ms`,
        `${r.readyP90Ms.toFixed(0)} ms`,
        Number.isFinite(r.slowestApiMedianMs) ? `${r.slowestApiMedianMs.toFixed(0)} ms` : '-',
        String(r.requestsMedian),
        `${r.transferKiBMedian.toFixed(1)} KiB`,
        `${r.heapMiBMedian.toFixed(1)} MiB`,
      ]),
    );
  }
  lines.push('', ...[...new Map(report.results.map((r) => [r.page, r.what]))].map(([page, what]) => `- ${page}: ${what}`));
  const find = (page, mode) => report.results.find((r) => r.page === page && r.mode === mode);
  const pairs = [
    ['explore-table', 'prometheus-table'],
    ['explore-graph', 'prometheus-graph'],
    ['fleet', 'prometheus-table'],
  ];
  const ratios = [];
  for (const [ours, theirs] of pairs) {
    for (const mode of ['cold', 'warm']) {
      const a = find(ours, mode);
      const b = find(theirs, mode);
      if (a && b) ratios.push(`${ours} / ${theirs} (${mode}): ${(a.readyMedianMs / b.readyMedianMs).toFixed(2)}`);
    }
  }
  if (ratios.length) lines.push('', 'Ratios of median ready times (below 1: gpumon faster):', '', ...ratios.map((r) => `- ${r}`));
  return lines.join('\n');
}
