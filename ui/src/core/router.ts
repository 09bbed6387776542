/**
 * Client-side routing (History API) and the page registry.
 *
 * Contract:
 * - Pages register with `registerPage(name, factory, {title})`, normally at
 *   module load (main.ts imports every page module). A page is shown at
 *   `/<name>`; `/` shows `fleet` (the URL is rewritten to /fleet).
 * - The router owns `<main data-page=<name>>`: on a page change it calls the
 *   old page's `unmount()`, empties main, and calls `factory().mount(main, ctx)`;
 *   readiness tracking restarts (`beginPage`, see panel.ts).
 * - Every later state change (time range, variables, page params, popstate)
 *   calls `page.update(ctx)` with `reason: "state"` and `prev`; each
 *   auto-refresh tick calls it with `reason: "refresh"`. `ctx.range` is
 *   resolved afresh for every call, so relative ranges move with `now`.
 *   A page decides what to reload (usually `panel.reload()` for each panel).
 * - Same-origin `<a href>` clicks to a registered page path (no modifier keys,
 *   no target) are handled in-app with pushState. Build links with `hrefFor`
 *   so they keep the time range, refresh and variables.
 */
import { h, replaceChildren } from "./dom.ts";
import { beginPage, whenIdle } from "./panel.ts";
import { RefreshLoop, refreshSeconds } from "./refresh.ts";
import {
  cloneState,
  getState,
  parseState,
  serializeState,
  setState,
  subscribe,
  VARIABLES,
  type AppState,
  type SetOptions,
} from "./state.ts";
import { resolveRange, type TimeRange } from "./time.ts";

export interface PageContext {
  state: AppState;
  /** the resolved time range (epoch seconds) */
  range: TimeRange;
  reason: "mount" | "state" | "refresh";
  /** the state before this change (reason "state" only) */
  prev?: AppState;
}

export interface Page {
  mount(root: HTMLElement, ctx: PageContext): void;
  update(ctx: PageContext): void;
  unmount(): void;
}

export type PageFactory = () => Page;

export interface PageMeta {
  title: string;
  /** nav order; lower first */
  order?: number;
}

interface Registered {
  name: string;
  factory: PageFactory;
  meta: PageMeta;
}

const registry = new Map<string, Registered>();
let onRegister: ((name: string) => void) | null = null;

export function registerPage(name: string, factory: PageFactory, meta: PageMeta = { title: name }): void {
  registry.set(name, { name, factory, meta });
  onRegister?.(name);
}

/** Registered pages, by nav order. */
export function registeredPages(): Array<{ name: string; title: string }> {
  return [...registry.values()]
    .sort((a, b) => (a.meta.order ?? 100) - (b.meta.order ?? 100))
    .map((r) => ({ name: r.name, title: r.meta.title }));
}

export interface HrefOptions {
  /** keep variables (default true) */
  keepVars?: boolean;
  /** variable overrides, e.g. { node: ["n1"], gpu: ["3"] } */
  vars?: Partial<Record<(typeof VARIABLES)[number], string[]>>;
}

/** A link to `page` with page params `params`, keeping time range, refresh and (by default) variables. */
export function hrefFor(page: string, params: Record<string, string> = {}, opts: HrefOptions = {}): string {
  const s = cloneState(getState());
  s.page = page;
  s.params = { ...params };
  if (opts.keepVars === false) for (const v of VARIABLES) s.vars[v] = [];
  if (opts.vars) for (const v of VARIABLES) if (opts.vars[v]) s.vars[v] = [...(opts.vars[v] as string[])];
  return serializeState(s);
}

/** Navigates in-app to a URL produced by hrefFor (or any /<page>?... URL). */
export function navigate(url: string, opts: SetOptions = { push: true }): void {
  const u = new URL(url, window.location.href);
  const next = parseState(u.pathname, u.search);
  setState(() => next, opts);
}

function currentRange(s: AppState): TimeRange {
  return resolveRange(s.from, s.to, Date.now());
}

class NotFoundPage implements Page {
  constructor(private readonly name: string) {}
  mount(root: HTMLElement): void {
    replaceChildren(
      root,
      h("div", { class: "page-message" }, h("h1", null, "Page not found"), h("p", null, `No page named "${this.name}".`)),
    );
  }
  update(): void {}
  unmount(): void {}
}

/**
 * Starts routing into `main`. Returns a function that refreshes the current
 * page now (for the "refresh now" button).
 */
export function startRouter(main: HTMLElement): { refreshNow: () => void } {
  let pageName = "";
  let page: Page | null = null;

  const mountFor = (state: AppState) => {
    page?.unmount();
    replaceChildren(main);
    pageName = state.page;
    main.dataset.page = pageName;
    const reg = registry.get(pageName);
    page = reg ? reg.factory() : new NotFoundPage(pageName);
    document.title = `${reg?.meta.title ?? "Not found"} · gpumon`;
    beginPage(pageName, main);
    page.mount(main, { state, range: currentRange(state), reason: "mount" });
    window.scrollTo(0, 0);
  };

  // canonicalise the URL (`/` -> `/fleet?from=now-1h&to=now`) without a new history entry
  const initial = getState();
  setState(() => initial, { push: false });
  mountFor(getState());

  subscribe((next, prev) => {
    if (next.page !== pageName) mountFor(next);
    else page?.update({ state: next, range: currentRange(next), reason: "state", prev });
  });

  // A page module registered after start (never in practice) still shows.
  onRegister = (name) => {
    if (name === pageName) mountFor(getState());
  };

  const refreshTick = async () => {
    const s = getState();
    page?.update({ state: s, range: currentRange(s), reason: "refresh" });
    await whenIdle();
  };
  const loop = new RefreshLoop(refreshTick);
  loop.setInterval(refreshSeconds(getState().refresh));
  subscribe((s) => loop.setInterval(refreshSeconds(s.refresh)));

  document.addEventListener("click", (ev) => {
    if (ev.defaultPrevented || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
    const a = (ev.target as Element | null)?.closest?.("a[href]") as HTMLAnchorElement | null;
    if (!a || (a.target && a.target !== "_self") || a.hasAttribute("download")) return;
    const u = new URL(a.href, window.location.href);
    if (u.origin !== window.location.origin) return;
    const seg = u.pathname.replace(/^\/+/, "").split("/")[0] ?? "";
    if (!registry.has(seg) && seg !== "") return;
    ev.preventDefault();
    navigate(u.pathname + u.search);
  });

  return { refreshNow: () => void refreshTick() };
}
