/**
 * Entry point of the gpumon web UI: builds the shell (nav, variable bar,
 * time and refresh pickers, <main>), imports every page module (each calls
 * registerPage at load) and starts the router.
 */
import "uplot/dist/uPlot.min.css";
import "./styles/theme.css";
import "./styles/shell.css";
import "./styles/panels.css";
import "./styles/pages.css";

import "./pages/fleet/index.ts";
import "./pages/gpu/index.ts";
import "./pages/training/index.ts";
import "./pages/alerts/index.ts";
import "./pages/explore/index.ts";
import "./pages/targets/index.ts";
import "./pages/rules/index.ts";
import "./pages/status/index.ts";

import { h } from "./core/dom.ts";
import { createRefreshPicker } from "./core/refresh.ts";
import { hrefFor, registeredPages, startRouter } from "./core/router.ts";
import { getState, subscribe } from "./core/state.ts";
import { createTimePicker } from "./core/timepicker.ts";
import { createVariableBar } from "./core/variables.ts";

function buildNav(): HTMLElement {
  const links = registeredPages().map((p) =>
    h("a", { href: `/${p.name}`, "data-page": p.name, class: "nav-link" }, p.title),
  );
  const sync = () => {
    const s = getState();
    for (const a of links) {
      const name = a.dataset.page as string;
      // keep time range, refresh and variables when switching pages
      a.href = hrefFor(name);
      a.classList.toggle("active", name === s.page);
      if (name === s.page) a.setAttribute("aria-current", "page");
      else a.removeAttribute("aria-current");
    }
  };
  const brand = h("a", { class: "brand", href: "/fleet" }, h("span", { class: "brand-mark" }), "gpumon");
  const syncAll = () => {
    sync();
    brand.href = hrefFor("fleet");
  };
  syncAll();
  subscribe(syncAll);
  return h("nav", { class: "nav", "aria-label": "Pages" }, brand, links);
}

function boot(): void {
  const app = document.getElementById("app");
  if (!app) return;
  const main = h("main", { class: "page", id: "main" });
  let refreshNow = () => {};
  const toolbar = h(
    "div",
    { class: "toolbar" },
    createVariableBar(),
    h("div", { class: "toolbar-right" }, createTimePicker(), createRefreshPicker(() => refreshNow())),
  );
  app.append(h("header", { class: "shell-header" }, buildNav(), toolbar), main);
  refreshNow = startRouter(main).refreshNow;
}

boot();
