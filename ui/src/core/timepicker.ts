/**
 * The time-range picker and drag-zoom entry point.
 *
 * Contract:
 * - `createTimePicker()` returns the header control: a button
 *   `[data-testid=time-range]` showing the range ("Last 1 hour", or absolute
 *   times) that opens a menu with the PRESETS (5m..30d, each
 *   `[data-testid=time-preset][data-from=now-<d>]`), a custom From/To form
 *   (`now-2h`, `2024-05-01 10:00`, or epoch ms; `[data-testid=time-from]`,
 *   `[data-testid=time-to]`, `[data-testid=time-apply]`), and a zoom-out
 *   button (`[data-testid=time-zoom-out]`) that doubles the range.
 * - Every change writes `from`/`to` with pushState (Back undoes a zoom).
 * - `zoomTo(startSec, endSec)` sets an absolute range (epoch ms in the URL);
 *   charts call it when the user drags over a time span.
 */
import { h } from "./dom.ts";
import { getState, setState, subscribe } from "./state.ts";
import { absoluteRange, formatTimestamp, isRelative, parseUserTime, PRESETS, rangeLabel, resolveRange, zoomOut } from "./time.ts";

/** Sets an absolute range (seconds), e.g. from a chart's drag selection. */
export function zoomTo(startSec: number, endSec: number): void {
  if (!(endSec > startSec)) return;
  setState(absoluteRange(startSec, endSec), { push: true });
}

function editable(expr: string): string {
  if (isRelative(expr)) return expr;
  const n = Number(expr);
  return Number.isFinite(n) ? formatTimestamp(n / 1000) : expr;
}

export function createTimePicker(): HTMLElement {
  const label = h("span", { class: "time-label" });
  const button = h(
    "button",
    { type: "button", class: "btn time-button", "data-testid": "time-range", "aria-haspopup": "dialog" },
    label,
  );
  const fromInput = h("input", { type: "text", "data-testid": "time-from", "aria-label": "From", spellcheck: "false" });
  const toInput = h("input", { type: "text", "data-testid": "time-to", "aria-label": "To", spellcheck: "false" });
  const error = h("div", { class: "time-error", role: "alert" });
  const form = h(
    "form",
    {
      class: "time-custom",
      onSubmit: (ev: Event) => {
        ev.preventDefault();
        const now = Date.now();
        const f = fromInput.value.trim();
        const t = toInput.value.trim();
        const fs = parseUserTime(f, now);
        const ts = parseUserTime(t, now);
        if (Number.isNaN(fs) || Number.isNaN(ts) || fs >= ts) {
          error.textContent = "Enter a valid range: From before To (now-6h, 2024-05-01 10:00, or epoch ms).";
          return;
        }
        error.textContent = "";
        const from = isRelative(f) ? f : String(Math.round(fs * 1000));
        const to = isRelative(t) ? t : String(Math.round(ts * 1000));
        setState({ from, to }, { push: true });
        menu.hidden = true;
      },
    },
    h("h3", null, "Custom range"),
    h("label", null, "From", fromInput),
    h("label", null, "To", toInput),
    error,
    h("button", { type: "submit", class: "btn primary", "data-testid": "time-apply" }, "Apply"),
  );
  const presets = h(
    "ul",
    { class: "time-presets" },
    PRESETS.map((p) =>
      h(
        "li",
        null,
        h(
          "button",
          {
            type: "button",
            class: "link",
            "data-testid": "time-preset",
            "data-from": p.from,
            onClick: () => {
              setState({ from: p.from, to: p.to }, { push: true });
              menu.hidden = true;
            },
          },
          p.label,
        ),
      ),
    ),
  );
  const menu = h("div", { class: "time-menu", hidden: true, role: "dialog", "aria-label": "Time range" }, form, presets);
  const zoom = h(
    "button",
    {
      type: "button",
      class: "btn icon",
      "data-testid": "time-zoom-out",
      title: "Zoom out (double the range)",
      onClick: () => {
        const s = getState();
        setState(zoomOut(s.from, s.to, Date.now()), { push: true });
      },
    },
    "\u2212",
  );
  const wrap = h("div", { class: "time-picker" }, zoom, button, menu);

  const show = () => {
    const s = getState();
    label.textContent = rangeLabel(s.from, s.to, Date.now());
    const r = resolveRange(s.from, s.to, Date.now());
    button.title = `${formatTimestamp(r.start)} to ${formatTimestamp(r.end)}`;
    button.dataset.from = s.from;
    button.dataset.to = s.to;
    fromInput.value = editable(s.from);
    toInput.value = editable(s.to);
    for (const b of presets.querySelectorAll<HTMLElement>("button"))
      b.classList.toggle("active", b.dataset.from === s.from && s.to === "now");
  };
  button.addEventListener("click", () => {
    menu.hidden = !menu.hidden;
    if (!menu.hidden) show();
  });
  document.addEventListener("click", (ev) => {
    if (!menu.hidden && !wrap.contains(ev.target as Node)) menu.hidden = true;
  });
  document.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape") menu.hidden = true;
  });
  show();
  subscribe(show);
  return wrap;
}
