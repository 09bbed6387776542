/**
 * Panels and page readiness.
 *
 * A Panel is a titled frame that loads its data with ONE request and renders
 * it. Contract:
 * - DOM: `<section class="panel" data-panel=<id> data-state=loading|ready|empty|error>`
 *   with a header (title, optional toolbar) and a body. `data-state` is
 *   `loading` until the first load finished (also while a lazy panel waits to
 *   be scrolled into view: it then also has `data-lazy=pending`).
 * - Lazy loading: a panel loads only once it is near the viewport
 *   (IntersectionObserver, 200px margin). `lazy: false` loads at once.
 * - `reload()` aborts the in-flight request (AbortController) and loads again
 *   when visible; a panel out of view is marked stale and reloads when it
 *   comes into view. The previous content stays until the new data arrives,
 *   so auto-refresh does not flicker. `destroy()` aborts and detaches.
 * - An aborted load is silent. A failed load shows the error text in the
 *   panel (`data-state=error`); nothing is written to the console, because the
 *   browser tests fail on console errors.
 * - Readiness: `beginPage(name, main)` starts tracking a page. Whenever every
 *   panel whose visibility is known-and-in-view (and every `trackTask`
 *   promise) has finished, `main[data-state=ready]` is set and
 *   `performance.mark("gpumon:ready:<name>")` is recorded; while anything is
 *   loading, `main[data-state=loading]`. A panel whose visibility is not yet
 *   known counts as loading, so a page is never "ready" before its first
 *   panels reported. `whenIdle()` resolves at the next ready point (the
 *   refresh loop uses it so refreshes never overlap).
 */
import { appendChildren, h, replaceChildren, type Child } from "./dom.ts";
import { isAbortError } from "./api.ts";

export type PanelState = "loading" | "ready" | "empty" | "error";

export interface PanelOptions<T> {
  /** stable id, becomes data-panel */
  id: string;
  title: Child;
  /** performs the panel's single request */
  load: (signal: AbortSignal) => Promise<T>;
  /** draws `data` into `body` (called after each successful, non-empty load) */
  render: (body: HTMLElement, data: T) => void;
  /** default: empty arrays are empty */
  isEmpty?: (data: T) => boolean;
  /** default true: load when scrolled into view */
  lazy?: boolean;
  /** extra class names for the section (layout: e.g. "span-2") */
  className?: string;
  /** elements placed at the right of the header */
  toolbar?: Child;
  /** text shown when the result is empty */
  emptyText?: string;
  /** optional description shown as the title tooltip */
  description?: string;
}

interface Tracked {
  busy(): boolean;
}

/** What a page needs of a panel regardless of its data type (for lists of panels). */
export interface PanelHandle {
  readonly el: HTMLElement;
  reload(): void;
  rerender(): void;
  destroy(): void;
}

// ---- readiness -------------------------------------------------------------

let pageName = "";
let mainEl: HTMLElement | null = null;
const tracked = new Set<Tracked>();
let tasks = 0;
let checkScheduled = false;
let idleWaiters: Array<() => void> = [];

/** Starts readiness tracking for a newly mounted page. */
export function beginPage(name: string, main: HTMLElement): void {
  pageName = name;
  mainEl = main;
  main.dataset.state = "loading";
  scheduleCheck();
}

/** Counts `p` as page work until it settles (for non-panel async rendering). */
export function trackTask<T>(p: Promise<T>): Promise<T> {
  tasks++;
  markBusy();
  const done = () => {
    tasks--;
    scheduleCheck();
  };
  p.then(done, done);
  return p;
}

/** Resolves when the page is next ready (immediately if it is ready now). */
export function whenIdle(): Promise<void> {
  if (!isBusy() && mainEl?.dataset.state === "ready") return Promise.resolve();
  return new Promise((resolve) => idleWaiters.push(resolve));
}

function isBusy(): boolean {
  if (tasks > 0) return true;
  for (const t of tracked) if (t.busy()) return true;
  return false;
}

function markBusy(): void {
  if (mainEl) mainEl.dataset.state = "loading";
}

function scheduleCheck(): void {
  if (checkScheduled) return;
  checkScheduled = true;
  // a macrotask: lets a render that finished synchronously paint its DOM first
  setTimeout(() => {
    checkScheduled = false;
    if (!mainEl) return;
    if (isBusy()) {
      mainEl.dataset.state = "loading";
      return;
    }
    if (mainEl.dataset.state !== "ready") {
      mainEl.dataset.state = "ready";
      performance.mark(`gpumon:ready:${pageName}`);
    }
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const w of waiters) w();
  }, 0);
}

// ---- visibility ------------------------------------------------------------

const visibilityHandlers = new WeakMap<Element, (visible: boolean) => void>();
let observer: IntersectionObserver | null = null;

function observe(el: Element, fn: (visible: boolean) => void): void {
  if (!observer) {
    observer = new IntersectionObserver(
      (entries) => {
        for (const e of entries) visibilityHandlers.get(e.target)?.(e.isIntersecting);
      },
      { rootMargin: "200px 0px" },
    );
  }
  visibilityHandlers.set(el, fn);
  observer.observe(el);
}

function unobserve(el: Element): void {
  visibilityHandlers.delete(el);
  observer?.unobserve(el);
}

// ---- panel -----------------------------------------------------------------

export class Panel<T> implements Tracked, PanelHandle {
  readonly el: HTMLElement;
  readonly body: HTMLElement;
  readonly header: HTMLElement;
  private readonly opts: PanelOptions<T>;
  private controller: AbortController | null = null;
  /** null = not reported by the observer yet */
  private visible: boolean | null = null;
  private stale = true;
  private loading = false;
  private destroyed = false;
  private lastData: T | undefined;

  constructor(opts: PanelOptions<T>) {
    this.opts = opts;
    this.header = h(
      "header",
      { class: "panel-header" },
      h("h2", { class: "panel-title", title: opts.description ?? null }, opts.title),
      opts.toolbar ? h("div", { class: "panel-toolbar" }, opts.toolbar) : null,
    );
    this.body = h("div", { class: "panel-body" });
    this.el = h(
      "section",
      { class: `panel ${opts.className ?? ""}`.trim(), dataset: { panel: opts.id, state: "loading" } },
      this.header,
      this.body,
    );
    tracked.add(this);
    if (opts.lazy === false) {
      this.visible = true;
      queueMicrotask(() => this.maybeLoad());
    } else {
      this.el.dataset.lazy = "pending";
      observe(this.el, (v) => {
        this.visible = v;
        if (v) this.maybeLoad();
        scheduleCheck();
      });
    }
    scheduleCheck();
  }

  get state(): PanelState {
    return (this.el.dataset.state as PanelState) ?? "loading";
  }

  /** The last successfully loaded data, if any. */
  get data(): T | undefined {
    return this.lastData;
  }

  busy(): boolean {
    if (this.destroyed) return false;
    if (this.visible === null) return true;
    return this.visible && (this.loading || this.stale);
  }

  /** Aborts any in-flight load and loads again (now if visible, else when visible). */
  reload(): void {
    if (this.destroyed) return;
    this.controller?.abort();
    this.controller = null;
    this.loading = false;
    this.stale = true;
    this.maybeLoad();
    scheduleCheck();
  }

  /** Re-renders the last data without a request (e.g. a display option changed). */
  rerender(): void {
    if (this.lastData !== undefined && !this.loading) this.show(this.lastData);
  }

  destroy(): void {
    this.destroyed = true;
    this.controller?.abort();
    this.controller = null;
    unobserve(this.el);
    tracked.delete(this);
    this.el.remove();
    scheduleCheck();
  }

  private maybeLoad(): void {
    if (this.destroyed || !this.visible || !this.stale || this.loading) return;
    this.stale = false;
    this.loading = true;
    delete this.el.dataset.lazy;
    this.el.dataset.state = "loading";
    this.el.classList.add("is-loading");
    markBusy();
    const controller = new AbortController();
    this.controller = controller;
    let p: Promise<T>;
    try {
      p = this.opts.load(controller.signal);
    } catch (err) {
      p = Promise.reject(err);
    }
    p.then(
      (data) => {
        if (controller !== this.controller || this.destroyed) return;
        this.finish();
        this.lastData = data;
        this.show(data);
      },
      (err: unknown) => {
        if (controller !== this.controller || this.destroyed) return;
        this.finish();
        if (isAbortError(err)) {
          this.stale = true;
          return;
        }
        this.showError(err);
      },
    );
  }

  private show(data: T): void {
    delete this.el.dataset.error;
    const empty = this.opts.isEmpty ? this.opts.isEmpty(data) : Array.isArray(data) && data.length === 0;
    if (empty) {
      replaceChildren(this.body, h("div", { class: "panel-empty" }, this.opts.emptyText ?? "No data"));
      this.el.dataset.state = "empty";
      return;
    }
    replaceChildren(this.body);
    try {
      this.opts.render(this.body, data);
      this.el.dataset.state = "ready";
    } catch (err) {
      this.showError(err);
    }
  }

  private finish(): void {
    this.loading = false;
    this.controller = null;
    this.el.classList.remove("is-loading");
    scheduleCheck();
  }

  private showError(err: unknown): void {
    const msg = err instanceof Error ? err.message : String(err);
    replaceChildren(this.body, h("div", { class: "panel-error", role: "alert" }, msg));
    this.el.dataset.state = "error";
    this.el.dataset.error = msg;
  }
}

/** Appends panels to a grid container. */
export function addPanels(grid: HTMLElement, panels: Array<{ el: HTMLElement }>): void {
  appendChildren(
    grid,
    panels.map((p) => p.el),
  );
}
