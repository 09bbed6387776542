/**
 * One chart panel of the Training page: a core Panel (lazy, one range
 * query) holding a TimeSeriesChart.
 *
 * Contract: `trainingChartPanel(def, ctx)` loads `def.query` over the page's
 * range at the page's step. Series tagged gm="score" are not drawn; on a
 * `straggler` panel each rank's last score picks the ranks under
 * STRAGGLER_THRESHOLD: their series are drawn in the critical colour and
 * named "rank N (straggler)", and a note under the chart
 * (`[data-testid=straggler-note][data-ranks=3,7]`) names them. The chart is
 * re-created only when its set of highlighted ranks changes.
 */
import { parseSampleValue, rangeQuery, type Labels, type MatrixSeries } from "../../core/api.ts";
import { h } from "../../core/dom.ts";
import { Panel } from "../../core/panel.ts";
import type { TimeRange } from "../../core/time.ts";
import { PALETTE, TimeSeriesChart } from "../../charts/timeseries.ts";
import type { TrainingPanelDef } from "./panels.ts";
import { STRAGGLER_THRESHOLD, type TrainingSelection } from "./queries.ts";
import { compareRanks, rankKey, stragglerRanks } from "./straggler.ts";

export interface TrainingChartContext {
  selection(): TrainingSelection;
  range(): TimeRange;
  step(): number;
  window(): number;
}

interface Loaded {
  matrix: MatrixSeries[];
  range: TimeRange;
  step: number;
}

/** The critical level colour of the theme (src/gpu/levels.css --gm-level-critical). */
const STRAGGLER_COLOR = "#e5484d";

function lastValue(s: MatrixSeries): number | undefined {
  const values = s.values ?? [];
  for (let i = values.length - 1; i >= 0; i--) {
    const x = parseSampleValue((values[i] as [number, string])[1]);
    if (Number.isFinite(x)) return x;
  }
  return undefined;
}

export function trainingChartPanel(def: TrainingPanelDef, ctx: TrainingChartContext): Panel<Loaded> {
  let chart: TimeSeriesChart | null = null;
  let chartKey = "";
  const container = h("div", { class: "gm-chart" });
  const note = h("p", { class: "gm-chart-note" });

  const render = (body: HTMLElement, data: Loaded) => {
    const plotted = data.matrix
      .filter((s) => s.metric["gm"] !== "score")
      .sort((a, b) => compareRanks(a.metric["rank"] ?? "", b.metric["rank"] ?? ""));
    const scores = data.matrix.filter((s) => s.metric["gm"] === "score").map((s) => ({ labels: s.metric, value: lastValue(s) }));
    const slow = def.straggler ? stragglerRanks(scores, STRAGGLER_THRESHOLD) : new Set<string>();
    const isSlow = (l: Labels) => slow.has(rankKey(l));
    const key = [...slow].sort().join(",");
    if (!chart || key !== chartKey) {
      chart?.destroy();
      container.replaceChildren();
      chartKey = key;
      chart = new TimeSeriesChart(container, {
        unit: def.unit,
        height: 220,
        stacked: def.stacked ?? false,
        seriesName: (l) => (isSlow(l) ? `${def.name(l)} (straggler)` : def.name(l)),
        color: def.straggler ? (l, i) => (isSlow(l) ? STRAGGLER_COLOR : (PALETTE[i % PALETTE.length] as string)) : undefined,
        ...(def.yMin !== undefined ? { yMin: def.yMin } : {}),
        ...(def.yMax !== undefined ? { yMax: def.yMax } : {}),
      });
    }
    if (def.straggler) {
      const ranks = plotted.filter((s) => isSlow(s.metric)).map((s) => s.metric["rank"] ?? "");
      note.replaceChildren(
        h(
          "span",
          { class: ranks.length ? "gm-straggler-note" : "", dataset: { testid: "straggler-note", ranks: ranks.join(",") } },
          ranks.length
            ? `Straggler${ranks.length > 1 ? "s" : ""}: rank ${ranks.join(", ")} (score under ${STRAGGLER_THRESHOLD} of the fastest rank)`
            : "No straggler: every rank within the threshold of the fastest.",
        ),
      );
    }
    body.append(container, note);
    chart.setData(plotted, { start: data.range.start, end: data.range.end, step: data.step });
  };

  return new Panel<Loaded>({
    id: def.id,
    title: def.title,
    description: def.description,
    className: `gm-training-panel${def.wide ? " span-2" : ""}`,
    emptyText: "No data for this job in the time range (the client exports it: see clients/python).",
    isEmpty: (d) => !d.matrix.some((s) => s.metric["gm"] !== "score"),
    load: async (signal) => {
      const range = ctx.range();
      const step = ctx.step();
      const matrix = await rangeQuery(def.query(ctx.selection(), ctx.window()), range.start, range.end, step, signal);
      return { matrix, range, step };
    },
    render,
  });
}
