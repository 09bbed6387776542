/**
 * uPlot plugin: silenced windows — hatched regions where an Alertmanager
 * silence covered the GPU's alerts.
 *
 * Contract: `silencedWindows(regions)` reads `regions()` (./regions.ts
 * `silenceRegions`) at every redraw. Each visible region is a
 * `div[data-testid=silence][data-silence-id]` in the plot's overlay, hatched
 * (plugins.css; overlapping silences overlay their hatching), with a tooltip
 * naming its matchers, author, comment and time span.
 */
import type uPlot from "uplot";
import type { SilenceRegion } from "./regions.ts";
import { overlayLayer, place, spanBox } from "./overlay.ts";
import { formatClock } from "../../gpu/format.ts";
import "./plugins.css";

function matcherText(m: SilenceRegion["silence"]["matchers"][number]): string {
  const op = m.isRegex ? (m.isEqual === false ? "!~" : "=~") : m.isEqual === false ? "!=" : "=";
  return `${m.name}${op}"${m.value}"`;
}

export function silencedWindows(regions: () => readonly SilenceRegion[]): uPlot.Plugin {
  return {
    hooks: {
      draw: (u: uPlot) => {
        const layer = overlayLayer(u, "gm-silences");
        const frag = document.createDocumentFragment();
        for (const r of regions()) {
          const box = spanBox(u, r.start, r.end);
          if (!box) continue;
          const s = r.silence;
          const el = document.createElement("div");
          el.className = "gm-silence";
          el.dataset["testid"] = "silence";
          el.dataset["silenceId"] = s.id;
          el.title =
            `Silenced {${s.matchers.map(matcherText).join(", ")}}` +
            `\nby ${s.createdBy || "unknown"}: ${s.comment || "no comment"}` +
            `\n${formatClock(Date.parse(s.startsAt))} – ${formatClock(Date.parse(s.endsAt))}`;
          place(el, box);
          frag.appendChild(el);
        }
        layer.replaceChildren(frag);
      },
    },
  };
}
