/**
 * The template-variable bar (Grafana style): cluster, node (multi-select),
 * gpu, job.
 *
 * Contract:
 * - Values come from `/api/v1/label/<label>/values?match[]=gpu_info{...}`
 *   over the selected time range, where <label> is the variable's label
 *   (node -> `hostname`, see promql.ts VARIABLE_LABELS) and the matchers are
 *   the selections of the variables before it (cluster -> node -> gpu -> job),
 *   so choosing a cluster narrows the node list.
 * - DOM: each variable is `<div class="var" data-testid="var-<name>"
 *   data-values="<comma-joined selection, empty = All>">`. Single-select
 *   variables contain a `<select>` whose first option is "All" (value "").
 *   The node variable contains a `<button>` opening a list of
 *   `<input type=checkbox value=<node>>` plus an "All" checkbox
 *   (`value=""`). A variable with no values (and no selection) is hidden.
 * - Selecting writes the URL (`var-<name>`, replaceState) through the state
 *   store; the bar follows state changes made elsewhere (links, Back).
 * - Values are re-fetched when the time range or an upstream selection
 *   changes, never on auto-refresh ticks.
 */
import { labelValues, isAbortError } from "./api.ts";
import { h, replaceChildren } from "./dom.ts";
import { VARIABLE_LABELS, varMatchers } from "./promql.ts";
import { getState, setState, subscribe, VARIABLES, type AppState, type VariableName } from "./state.ts";
import { resolveRange } from "./time.ts";

const TITLES: Record<VariableName, string> = { cluster: "Cluster", node: "Node", gpu: "GPU", job: "Job" };
const MULTI: ReadonlySet<VariableName> = new Set(["node"]);

/** Natural sort: "node-2" before "node-10", "3" before "12". */
export function naturalCompare(a: string, b: string): number {
  return a.localeCompare(b, undefined, { numeric: true, sensitivity: "base" });
}

interface VarControl {
  el: HTMLElement;
  setOptions(values: string[]): void;
  setSelection(values: string[]): void;
}

function singleSelect(name: VariableName): VarControl {
  const select = h("select", {
    "aria-label": TITLES[name],
    onChange: () => setState((s) => ({ ...s, vars: { ...s.vars, [name]: select.value ? [select.value] : [] } })),
  });
  let selection: string[] = [];
  let options: string[] = [];
  const render = () => {
    const all = [...new Set([...options, ...selection])].sort(naturalCompare);
    replaceChildren(
      select,
      h("option", { value: "" }, "All"),
      all.map((v) => h("option", { value: v }, v)),
    );
    select.value = selection[0] ?? "";
  };
  return {
    el: select,
    setOptions(values) {
      options = values;
      render();
    },
    setSelection(values) {
      selection = values;
      render();
    },
  };
}

function multiSelect(name: VariableName): VarControl {
  let selection: string[] = [];
  let options: string[] = [];
  const button = h("button", { type: "button", class: "var-button", "aria-haspopup": "listbox" });
  const list = h("div", { class: "var-menu", role: "listbox", hidden: true });
  const apply = (values: string[]) =>
    setState((s) => ({ ...s, vars: { ...s.vars, [name]: values } }));
  const render = () => {
    const all = [...new Set([...options, ...selection])].sort(naturalCompare);
    button.textContent =
      selection.length === 0 ? "All" : selection.length === 1 ? (selection[0] as string) : `${selection[0]} +${selection.length - 1}`;
    const allBox = h("input", {
      type: "checkbox",
      value: "",
      checked: selection.length === 0,
      onChange: () => apply([]),
    });
    replaceChildren(
      list,
      h("label", { class: "var-option" }, allBox, "All"),
      all.map((v) =>
        h(
          "label",
          { class: "var-option" },
          h("input", {
            type: "checkbox",
            value: v,
            checked: selection.includes(v),
            onChange: (ev: Event) => {
              const on = (ev.target as HTMLInputElement).checked;
              apply(on ? [...selection, v] : selection.filter((x) => x !== v));
            },
          }),
          v,
        ),
      ),
    );
  };
  button.addEventListener("click", () => {
    list.hidden = !list.hidden;
  });
  document.addEventListener("click", (ev) => {
    if (!list.hidden && !wrapper.contains(ev.target as Node)) list.hidden = true;
  });
  document.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape") list.hidden = true;
  });
  const wrapper = h("div", { class: "var-multi" }, button, list);
  return {
    el: wrapper,
    setOptions(values) {
      options = values;
      render();
    },
    setSelection(values) {
      selection = values;
      render();
    },
  };
}

/** Creates the variable bar; it loads and follows the state by itself. */
export function createVariableBar(): HTMLElement {
  const controls = new Map<VariableName, { wrap: HTMLElement; ctl: VarControl; count: number }>();
  const bar = h("div", { class: "var-bar", role: "group", "aria-label": "Variables" });
  for (const name of VARIABLES) {
    const ctl = MULTI.has(name) ? multiSelect(name) : singleSelect(name);
    const wrap = h(
      "div",
      { class: "var", "data-testid": `var-${name}`, hidden: true },
      h("span", { class: "var-label" }, TITLES[name]),
      ctl.el,
    );
    controls.set(name, { wrap, ctl, count: 0 });
    bar.appendChild(wrap);
  }

  const showSelection = (s: AppState) => {
    for (const name of VARIABLES) {
      const c = controls.get(name);
      if (!c) continue;
      c.ctl.setSelection(s.vars[name]);
      c.wrap.dataset.values = s.vars[name].join(",");
      c.wrap.hidden = c.count === 0 && s.vars[name].length === 0;
    }
  };

  let controller: AbortController | null = null;
  const load = async (s: AppState) => {
    controller?.abort();
    const ctrl = new AbortController();
    controller = ctrl;
    const range = resolveRange(s.from, s.to, Date.now());
    for (let i = 0; i < VARIABLES.length; i++) {
      const name = VARIABLES[i] as VariableName;
      const upstream = VARIABLES.slice(i);
      const sel = varMatchers(s.vars, upstream);
      try {
        const values = await labelValues(
          VARIABLE_LABELS[name],
          [`gpu_info{${sel}}`],
          Math.floor(range.start),
          Math.ceil(range.end),
          ctrl.signal,
        );
        const c = controls.get(name);
        if (!c || ctrl.signal.aborted) return;
        c.count = values.length;
        c.ctl.setOptions(values);
      } catch (err) {
        if (isAbortError(err)) return;
        // a variable whose values cannot be listed keeps its selection and stays usable
        const c = controls.get(name);
        if (c) c.wrap.title = `could not list values: ${err instanceof Error ? err.message : String(err)}`;
      }
    }
    showSelection(getState());
  };

  const initial = getState();
  showSelection(initial);
  void load(initial);
  subscribe((next, prev) => {
    showSelection(next);
    const upstreamChanged = VARIABLES.some((v) => next.vars[v].join("\u0000") !== prev.vars[v].join("\u0000"));
    if (next.from !== prev.from || next.to !== prev.to || upstreamChanged) void load(next);
  });
  return bar;
}
