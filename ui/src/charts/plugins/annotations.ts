/**
 * uPlot plugin: alert annotations — a shaded region per alert from when it
 * fired to when it resolved.
 *
 * Contract: `alertAnnotations(regions)` reads `regions()` (./regions.ts
 * `alertRegions`) at every redraw, so a chart picks up annotations that
 * arrive after its data (call `u.redraw(false)`). Each visible region is a
 * `div[data-testid=annotation][data-alertname][data-state][data-severity]`
 * in the plot's overlay with a `title` tooltip (alert, severity, labels,
 * from–to); critical and warning regions take the level colours, pending
 * ones are lighter (plugins.css). The shading is faint and lets the cursor
 * through; each alert has a lane (a thin bar at the top of the plot) that
 * carries the same tooltip, so overlapping alerts stay readable. `describe` names the GPU in the tooltip
 * when a chart shows several.
 */
import type uPlot from "uplot";
import type { AlertRegion } from "./regions.ts";
import { overlayLayer, place, spanBox } from "./overlay.ts";
import { formatClock } from "../../gpu/format.ts";
import "./plugins.css";

export function regionTitle(r: AlertRegion): string {
  const who = [r.labels["hostname"], r.labels["gpu"] !== undefined ? `GPU ${r.labels["gpu"]}` : null].filter(Boolean).join(" · ");
  const until = r.open ? `still ${r.state}` : `until ${formatClock(r.end * 1000)}`;
  return `${r.alertname} (${r.severity || "no severity"}, ${r.state})${who ? ` on ${who}` : ""}\nfrom ${formatClock(r.start * 1000)} ${until}`;
}

/** Lane of an alert: one row of markers per alert name and severity (and GPU, in node views). */
function laneKey(r: AlertRegion): string {
  return `${r.alertname}\u0000${r.severity}\u0000${r.labels["gpu"] ?? ""}`;
}

export function alertAnnotations(regions: () => readonly AlertRegion[]): uPlot.Plugin {
  return {
    hooks: {
      draw: (u: uPlot) => {
        const layer = overlayLayer(u, "gm-annotations");
        const frag = document.createDocumentFragment();
        const all = regions();
        const lanes = new Map<string, number>();
        for (const r of all) if (!lanes.has(laneKey(r))) lanes.set(laneKey(r), lanes.size);
        // Lanes share the top of the plot; many alerts get thinner lanes.
        const laneHeight = lanes.size > 8 ? 3 : 5;
        for (const r of all) {
          const box = spanBox(u, r.start, r.end);
          if (!box) continue;
          const el = document.createElement("div");
          el.className = "gm-annotation";
          el.dataset["testid"] = "annotation";
          el.dataset["alertname"] = r.alertname;
          el.dataset["state"] = r.state;
          el.dataset["severity"] = r.severity;
          if (r.labels["gpu"] !== undefined) el.dataset["gpu"] = r.labels["gpu"];
          el.title = regionTitle(r);
          place(el, box);
          // The lane marker is what the pointer hovers; the shading below it lets the cursor through.
          const marker = document.createElement("div");
          marker.className = "gm-annotation-lane";
          marker.title = el.title;
          marker.style.setProperty("top", `${(lanes.get(laneKey(r)) ?? 0) * (laneHeight + 1)}px`);
          marker.style.setProperty("height", `${laneHeight}px`);
          el.appendChild(marker);
          frag.appendChild(el);
        }
        layer.replaceChildren(frag);
      },
    },
  };
}
