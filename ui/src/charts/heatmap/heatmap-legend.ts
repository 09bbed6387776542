/**
 * The legend of the GPU heatmap: the colour scale of ok cells with its two
 * ends, then one swatch per threshold level with the rule it comes from.
 * Pure rendering; the entries come from the signal definition
 * (src/gpu/signals.ts).
 */
import { h } from "../../core/dom.ts";
import type { LegendEntry } from "../../gpu/signals.ts";

export function heatmapLegend(scaleEnds: readonly [string, string], entries: readonly LegendEntry[]): HTMLElement {
  const scale = h("span", { class: "gm-legend-scale", "aria-hidden": "true" });
  for (let i = 0; i < 10; i++) scale.appendChild(h("span", null));
  return h(
    "div",
    { class: "gm-legend", dataset: { testid: "heatmap-legend" } },
    h("span", { class: "gm-legend-item" }, scaleEnds[0], scale, scaleEnds[1]),
    entries.map((e) =>
      h(
        "span",
        { class: "gm-legend-item", dataset: { level: e.level } },
        h("span", { class: "gm-legend-swatch", dataset: { level: e.level } }),
        e.text,
      ),
    ),
    h(
      "span",
      { class: "gm-legend-item" },
      h("span", { class: "gm-legend-swatch", dataset: { level: "alert" } }),
      "a firing alert on the GPU",
    ),
  );
}
