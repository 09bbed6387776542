/**
 * Auto-refresh without request storms.
 *
 * Contract:
 * - `RefreshLoop(tick)` calls `tick()` every `interval` seconds, measured from
 *   the END of the previous tick: a slow server never gets overlapping
 *   refreshes. `tick` resolves when the refresh it started has finished
 *   (the router waits for `whenIdle()`).
 * - While the document is hidden nothing runs; when it becomes visible again
 *   and a refresh is due, one refresh runs at once.
 * - `setInterval(0)` (or "off") stops the loop; changing the interval
 *   restarts the wait with the new interval.
 * - `createRefreshPicker()` is the header control: a `<select
 *   data-testid=refresh>` bound to the URL's `refresh` param, plus a
 *   "refresh now" button (`data-testid=refresh-now`) that calls `onNow`.
 */
import { h } from "./dom.ts";
import { getState, REFRESH_INTERVALS, setState, subscribe, type RefreshInterval } from "./state.ts";
import { parseDuration } from "./time.ts";

export class RefreshLoop {
  private intervalMs = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private running = false;
  private due = false;
  private readonly onVisibility = () => {
    if (!document.hidden && this.due) void this.fire();
  };

  constructor(private readonly tick: () => Promise<void>) {
    document.addEventListener("visibilitychange", this.onVisibility);
  }

  /** Seconds between the end of one refresh and the start of the next; 0 = off. */
  setInterval(seconds: number): void {
    const ms = Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 0;
    if (ms === this.intervalMs) return;
    this.intervalMs = ms;
    this.schedule();
  }

  stop(): void {
    this.intervalMs = 0;
    this.schedule();
  }

  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.due = false;
    if (this.intervalMs === 0 || this.running) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.due = true;
      if (!document.hidden) void this.fire();
    }, this.intervalMs);
  }

  private async fire(): Promise<void> {
    if (this.running) return;
    this.due = false;
    this.running = true;
    try {
      await this.tick();
    } finally {
      this.running = false;
      this.schedule();
    }
  }
}

export function refreshSeconds(r: RefreshInterval): number {
  return r === "off" ? 0 : parseDuration(r);
}

/** Header control for the auto-refresh interval (module contract). */
export function createRefreshPicker(onNow: () => void): HTMLElement {
  const select = h(
    "select",
    {
      "data-testid": "refresh",
      "aria-label": "Auto-refresh interval",
      title: "Auto-refresh",
      onChange: () => setState({ refresh: select.value as RefreshInterval }),
    },
    REFRESH_INTERVALS.map((r) => h("option", { value: r }, r === "off" ? "Off" : r)),
  );
  select.value = getState().refresh;
  subscribe((s) => {
    if (select.value !== s.refresh) select.value = s.refresh;
  });
  const now = h(
    "button",
    { class: "btn icon", type: "button", "data-testid": "refresh-now", title: "Refresh now", onClick: onNow },
    "\u21bb",
  );
  return h("div", { class: "refresh-picker" }, now, select);
}
