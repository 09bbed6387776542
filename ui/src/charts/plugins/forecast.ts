/**
 * uPlot plugin: the forecast overlay — a temperature trend extended to the
 * GPU's slowdown limit.
 *
 * Contract: `forecastOverlay(forecasts)` reads `forecasts()` at every
 * redraw. For each forecast it draws a dashed line in the series' colour
 * from the last reading (t0, v0) to (t0 + etaSeconds, limit), clipped to the
 * plot, with a dot where it meets the limit, and places a
 * `div[data-testid=forecast][data-eta-seconds][data-gpu]` label just above
 * that point (at the plot's right edge when the crossing lies beyond it) saying e.g.
 * "HBM reaches 95 °C slowdown limit in ~14 min". The x range must reach
 * into the future for the line to show (the GPU page extends its query
 * grid); forecasts are computed by the caller (src/pages/gpu/forecast.ts),
 * only for trends that rise toward the limit.
 */
import type uPlot from "uplot";
import { overlayLayer } from "./overlay.ts";
import "./plugins.css";

export interface Forecast {
  /** Index of the plotted series in uPlot (1-based, as u.series). */
  seriesIdx: number;
  gpu: string;
  t0: number;
  v0: number;
  limit: number;
  etaSeconds: number;
  text: string;
}

export function forecastOverlay(forecasts: () => readonly Forecast[]): uPlot.Plugin {
  return {
    hooks: {
      draw: (u: uPlot) => {
        const list = forecasts();
        const layer = overlayLayer(u, "gm-forecasts");
        const frag = document.createDocumentFragment();
        const { left, top, width, height } = u.bbox;
        const ctx = u.ctx;
        ctx.save();
        ctx.beginPath();
        ctx.rect(left, top, width, height);
        ctx.clip();
        const plotW = u.over.clientWidth || width / devicePixelRatio;
        const plotH = u.over.clientHeight || height / devicePixelRatio;
        list.forEach((f, i) => {
          const t1 = f.t0 + f.etaSeconds;
          const x0 = u.valToPos(f.t0, "x", true);
          const y0 = u.valToPos(f.v0, "y", true);
          const x1 = u.valToPos(t1, "x", true);
          const y1 = u.valToPos(f.limit, "y", true);
          const stroke = u.series[f.seriesIdx]?.stroke;
          const color = typeof stroke === "function" ? stroke(u, f.seriesIdx) : stroke;
          ctx.strokeStyle = typeof color === "string" ? color : "#f0a020";
          ctx.fillStyle = ctx.strokeStyle;
          ctx.lineWidth = 2 * devicePixelRatio;
          ctx.setLineDash([5 * devicePixelRatio, 4 * devicePixelRatio]);
          ctx.beginPath();
          ctx.moveTo(x0, y0);
          ctx.lineTo(x1, y1);
          ctx.stroke();
          ctx.setLineDash([]);
          ctx.beginPath();
          ctx.arc(x1, y1, 4 * devicePixelRatio, 0, 2 * Math.PI);
          ctx.fill();

          if (i > 0) return;
          const cssX = Math.min(plotW, Math.max(0, u.valToPos(t1, "x")));
          const cssY = Math.min(plotH, Math.max(0, u.valToPos(f.limit, "y")));
          const label = document.createElement("div");
          label.className = "gm-forecast-mark";
          label.dataset["etaSeconds"] = String(Math.round(f.etaSeconds));
          label.dataset["gpu"] = f.gpu;
          label.dataset["beyond"] = String(cssX >= plotW);
          label.textContent = f.text;
          label.title = `${f.text} (trend of the last minutes; see the rule pack's forecast records)`;
          label.style.setProperty("--gm-x", `${cssX}px`);
          // Above the limit line, so the label does not cover the readings below it.
          label.style.setProperty("--gm-y", `${Math.max(0, cssY - 20)}px`);
          frag.appendChild(label);
        });
        ctx.restore();
        layer.replaceChildren(frag);
      },
    },
  };
}
