/**
 * Tiny DOM construction helper.
 *
 * Contract:
 * - `h(tag, attrs, ...children)` creates an element. Attributes:
 *   - `class` sets className; `dataset` (object) sets data-* attributes;
 *   - `style` must be an object: it is applied through the CSSOM
 *     (`el.style.setProperty`), never as a `style="..."` attribute, because the
 *     strict Content-Security-Policy (`style-src 'self'`) blocks the latter;
 *   - a function value under a key `onXxx` becomes `addEventListener("xxx")`;
 *   - `true` sets an empty attribute, `false`/`null`/`undefined` omit it;
 *     anything else is stringified. DOM properties that are not reflected as
 *     attributes (`value`, `checked`, `selected`) are assigned as properties.
 * - Children may be nodes, strings, numbers, nested arrays, or
 *   null/undefined/false (skipped). Strings become text nodes (never HTML).
 * - No inline HTML parsing anywhere: the UI never uses innerHTML with data.
 */

export type Child = Node | string | number | null | undefined | false | Child[];

export type AttrValue = string | number | boolean | null | undefined;
export interface Attrs {
  class?: string;
  dataset?: Record<string, AttrValue>;
  style?: Record<string, string | number | null | undefined>;
  [name: string]: unknown;
}

const PROPERTY_ATTRS = new Set(["value", "checked", "selected", "disabled", "indeterminate"]);

export function appendChildren(el: Node, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) appendChildren(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

export function applyStyle(el: HTMLElement | SVGElement, style: Attrs["style"]): void {
  if (!style) return;
  for (const [k, v] of Object.entries(style)) {
    if (v === null || v === undefined) el.style.removeProperty(k);
    else el.style.setProperty(k, String(v));
  }
}

function applyAttrs(el: HTMLElement, attrs: Attrs): void {
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) {
      if (PROPERTY_ATTRS.has(key)) (el as unknown as Record<string, unknown>)[key] = false;
      continue;
    }
    if (key === "class") el.className = String(value);
    else if (key === "style") applyStyle(el, value as Attrs["style"]);
    else if (key === "dataset") {
      for (const [dk, dv] of Object.entries(value as Record<string, AttrValue>)) {
        if (dv !== null && dv !== undefined && dv !== false) el.dataset[dk] = dv === true ? "" : String(dv);
      }
    } else if (typeof value === "function" && key.startsWith("on")) {
      el.addEventListener(key.slice(2).toLowerCase(), value as EventListener);
    } else if (PROPERTY_ATTRS.has(key)) {
      (el as unknown as Record<string, unknown>)[key] = value;
    } else el.setAttribute(key, value === true ? "" : String(value));
  }
}

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Attrs | null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (attrs) applyAttrs(el, attrs);
  appendChildren(el, children);
  return el;
}

/** Removes every child of `el`. */
export function clear(el: Node): void {
  while (el.firstChild) el.removeChild(el.firstChild);
}

/** Replaces the children of `el` with `children`. */
export function replaceChildren(el: Node, ...children: Child[]): void {
  clear(el);
  appendChildren(el, children);
}
