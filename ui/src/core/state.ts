/**
 * Application state, kept in the URL so that every view is a shareable link.
 *
 * URL layout (Grafana style, see the UI contract):
 *   /<page>?from=now-1h&to=now&refresh=30s&var-cluster=a&var-node=n1&var-node=n2
 *          &var-gpu=3&var-job=j&<page params such as signal, group, expr, tab, display>
 *
 * Contract:
 * - `parseState(pathname, search)` and `serializeState(state)` are pure and
 *   inverse: parse(serialize(s)) equals s for every normalised state, and
 *   serialize(parse(url)) is the canonical form of url (tested in
 *   tests-unit/). Canonical: from, to, then refresh (omitted when `off`),
 *   then var-* in VARIABLES order (omitted when empty = "All"), then page
 *   params sorted by name (empty values omitted).
 * - Defaults: page `fleet` (also for `/`), from `now-1h`, to `now`, refresh
 *   `off`; unknown refresh values become `off`.
 * - Variables hold lists; an empty list means "All". Only `node` is
 *   multi-select in the UI, but all are lists so the URL form is uniform.
 * - The store (`getState`, `setState`, `subscribe`) is the single source of
 *   truth at run time. `setState` writes the URL with history.replaceState,
 *   or pushState when `{ push: true }` (navigation, time-range changes: the
 *   Back button returns to them). Browser Back/Forward (popstate) re-reads the
 *   URL and notifies subscribers. Listeners are called synchronously after
 *   each change with (next, prev); nothing is called when nothing changed.
 * - The store touches `window` only when used, so the pure functions run in
 *   Node for the unit tests.
 */

export const VARIABLES = ["cluster", "node", "gpu", "job"] as const;
export type VariableName = (typeof VARIABLES)[number];
export type Vars = Record<VariableName, string[]>;

export const REFRESH_INTERVALS = ["off", "5s", "10s", "30s", "1m", "5m"] as const;
export type RefreshInterval = (typeof REFRESH_INTERVALS)[number];

export const PAGES = ["fleet", "gpu", "training", "alerts", "explore", "targets", "rules", "status"] as const;

export interface AppState {
  /** first path segment, e.g. "fleet"; unknown pages are kept (the router shows "not found") */
  page: string;
  from: string;
  to: string;
  refresh: RefreshInterval;
  vars: Vars;
  /** page parameters (signal, group, expr, tab, display, ...) */
  params: Record<string, string>;
}

export const DEFAULT_FROM = "now-1h";
export const DEFAULT_TO = "now";
export const DEFAULT_PAGE = "fleet";

export function emptyVars(): Vars {
  return { cluster: [], node: [], gpu: [], job: [] };
}

export function defaultState(page = DEFAULT_PAGE): AppState {
  return { page, from: DEFAULT_FROM, to: DEFAULT_TO, refresh: "off", vars: emptyVars(), params: {} };
}

const RESERVED = new Set(["from", "to", "refresh"]);

/** Parses a location (pathname + search) into a state. */
export function parseState(pathname: string, search: string): AppState {
  const seg = pathname.replace(/^\/+/, "").split("/")[0] ?? "";
  const state = defaultState(seg === "" ? DEFAULT_PAGE : decodeURIComponent(seg));
  const sp = new URLSearchParams(search);
  const from = sp.get("from");
  const to = sp.get("to");
  if (from) state.from = from;
  if (to) state.to = to;
  const refresh = sp.get("refresh");
  if (refresh && (REFRESH_INTERVALS as readonly string[]).includes(refresh)) state.refresh = refresh as RefreshInterval;
  for (const name of VARIABLES) {
    const values = sp.getAll(`var-${name}`).filter((v) => v !== "" && v !== "All" && v !== "$__all");
    state.vars[name] = dedupe(values);
  }
  for (const [k, v] of sp) {
    if (RESERVED.has(k) || k.startsWith("var-") || v === "") continue;
    state.params[k] = v;
  }
  return state;
}

/** Serialises a state to `/<page>?<query>` in canonical order. */
export function serializeState(state: AppState): string {
  const sp = new URLSearchParams();
  sp.set("from", state.from || DEFAULT_FROM);
  sp.set("to", state.to || DEFAULT_TO);
  if (state.refresh !== "off") sp.set("refresh", state.refresh);
  for (const name of VARIABLES) for (const v of state.vars[name] ?? []) sp.append(`var-${name}`, v);
  for (const k of Object.keys(state.params).sort()) {
    const v = state.params[k];
    if (v !== undefined && v !== "" && !RESERVED.has(k) && !k.startsWith("var-")) sp.set(k, v);
  }
  return `/${encodeURIComponent(state.page)}?${sp.toString()}`;
}

/** Deep equality of two states (vars order-sensitive, params order-insensitive). */
export function sameState(a: AppState, b: AppState): boolean {
  return serializeState(a) === serializeState(b);
}

function dedupe(values: string[]): string[] {
  return [...new Set(values)];
}

export function cloneState(s: AppState): AppState {
  return {
    ...s,
    vars: { cluster: [...s.vars.cluster], node: [...s.vars.node], gpu: [...s.vars.gpu], job: [...s.vars.job] },
    params: { ...s.params },
  };
}

// ---- run-time store -------------------------------------------------------

export type StateListener = (next: AppState, prev: AppState) => void;
export interface SetOptions {
  /** pushState instead of replaceState (a new history entry) */
  push?: boolean;
}
export type StatePatch = Partial<Omit<AppState, "vars">> & { vars?: Partial<Vars> };

let current: AppState | null = null;
const listeners = new Set<StateListener>();
let popstateBound = false;

function ensureLoaded(): AppState {
  if (current) return current;
  current = parseState(window.location.pathname, window.location.search);
  if (!popstateBound) {
    popstateBound = true;
    window.addEventListener("popstate", () => {
      const prev = current ?? defaultState();
      current = parseState(window.location.pathname, window.location.search);
      if (!sameState(prev, current)) notify(current, prev);
    });
  }
  return current;
}

function notify(next: AppState, prev: AppState): void {
  for (const fn of [...listeners]) fn(next, prev);
}

/** The current state (a copy; mutate it only through setState). */
export function getState(): AppState {
  return cloneState(ensureLoaded());
}

/**
 * Applies a patch (or a function of the current state), writes the URL and
 * notifies listeners. `params` in a patch REPLACES all page params; use
 * `setParams` to change some of them.
 */
export function setState(patch: StatePatch | ((s: AppState) => AppState), opts: SetOptions = {}): void {
  const prev = ensureLoaded();
  let next: AppState;
  if (typeof patch === "function") next = patch(cloneState(prev));
  else {
    next = cloneState(prev);
    const { vars, ...rest } = patch;
    Object.assign(next, rest);
    if (vars) for (const k of VARIABLES) if (vars[k]) next.vars[k] = dedupe([...(vars[k] as string[])]);
    if (rest.params) next.params = { ...rest.params };
  }
  const url = serializeState(next);
  const changed = url !== serializeState(prev);
  current = parseState(...splitUrl(url));
  const here = window.location.pathname + window.location.search;
  if (here !== url) {
    if (opts.push) window.history.pushState(null, "", url);
    else window.history.replaceState(null, "", url);
  }
  if (changed) notify(cloneState(current), cloneState(prev));
}

/** Sets (string) or removes (null/undefined/"") some page params, keeping the others. */
export function setParams(params: Record<string, string | null | undefined>, opts: SetOptions = {}): void {
  setState((s) => {
    for (const [k, v] of Object.entries(params)) {
      if (v === null || v === undefined || v === "") delete s.params[k];
      else s.params[k] = v;
    }
    return s;
  }, opts);
}

/** Subscribes to state changes; returns the unsubscribe function. */
export function subscribe(fn: StateListener): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

function splitUrl(url: string): [string, string] {
  const i = url.indexOf("?");
  return i < 0 ? [url, ""] : [url.slice(0, i), url.slice(i)];
}

/** Test hook: forget the loaded state (next access re-reads the URL). */
export function resetStoreForTests(): void {
  current = null;
  listeners.clear();
}
