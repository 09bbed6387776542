/**
 * A DOM layer over a uPlot plotting area, for plugins that mark time spans
 * or points with elements people can hover (tooltips) and tests can find.
 *
 * Contract: `overlayLayer(u, className)` returns a div filling `u.over`
 * (the plotting area, CSS pixels), created once per chart. The layer does
 * not take pointer events itself; its children decide (CSS). `spanBox`
 * converts a time span to a left/width in the layer's pixels, clipped to the
 * plot, or null when the span is outside it. Positions are set through the
 * CSSOM (allowed by the strict CSP), never as style strings.
 */
import type uPlot from "uplot";

export function overlayLayer(u: uPlot, className: string): HTMLDivElement {
  const existing = u.over.querySelector<HTMLDivElement>(`:scope > .${className}`);
  if (existing) return existing;
  const layer = document.createElement("div");
  layer.className = `gm-overlay ${className}`;
  u.over.appendChild(layer);
  return layer;
}

export interface SpanBox {
  left: number;
  width: number;
}

/** The pixel box of [start, end] (seconds) on the x scale, clipped; null if not visible. */
export function spanBox(u: uPlot, start: number, end: number): SpanBox | null {
  const plotWidth = u.over.clientWidth || u.bbox.width / devicePixelRatio;
  const a = Math.max(0, u.valToPos(start, "x"));
  const b = Math.min(plotWidth, u.valToPos(end, "x"));
  if (!Number.isFinite(a) || !Number.isFinite(b) || b <= a) return null;
  return { left: a, width: Math.max(2, b - a) };
}

export function place(el: HTMLElement, box: SpanBox): void {
  el.style.setProperty("left", `${box.left}px`);
  el.style.setProperty("width", `${box.width}px`);
}
