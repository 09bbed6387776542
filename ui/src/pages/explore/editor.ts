/**
 * The PromQL editor: CodeMirror 6 with @prometheus-io/codemirror-promql.
 *
 * Contract:
 * - `createPromQLEditor(host, { value, onRun, onChange })` mounts an editor
 *   into an open shadow root of `host`. Why a shadow root: CodeMirror injects
 *   its styles at run time; in a shadow root they go into an adopted
 *   (constructable) stylesheet, which the strict CSP (`style-src 'self'`)
 *   allows, instead of a `<style>` element, which it blocks.
 * - Highlighting, linting (syntax errors, as the server's parser reports
 *   them) and autocompletion of functions, keywords, and of metric names,
 *   label names and label values fetched from this server (same origin,
 *   /api/v1/labels, /api/v1/label/<n>/values, /api/v1/series,
 *   /api/v1/metadata) through completion-client.ts. Completion errors are
 *   swallowed (a failing endpoint must not produce console errors).
 * - Enter, Shift+Enter or Ctrl+Enter runs the query via `onRun` (while the
 *   completion menu is open, Enter accepts the completion instead);
 *   Alt+Enter inserts a newline for long expressions.
 */
import { autocompletion, closeBrackets, closeBracketsKeymap, closeCompletion, completionKeymap } from "@codemirror/autocomplete";
import { defaultKeymap, history, historyKeymap, insertNewline } from "@codemirror/commands";
import { bracketMatching, HighlightStyle, syntaxHighlighting } from "@codemirror/language";
import { lintKeymap } from "@codemirror/lint";
import { highlightSelectionMatches } from "@codemirror/search";
import { EditorState, Prec } from "@codemirror/state";
import { drawSelection, EditorView, highlightSpecialChars, keymap, placeholder } from "@codemirror/view";
import { tags } from "@lezer/highlight";
import { PromQLExtension } from "@prometheus-io/codemirror-promql";
import { MemoPrometheusClient } from "./completion-client.ts";

export interface PromQLEditor {
  view: EditorView;
  getValue(): string;
  setValue(v: string): void;
  focus(): void;
  /** closes the completion menu (before running a query from outside the editor) */
  closeMenus(): void;
  destroy(): void;
}

export interface EditorOptions {
  value: string;
  onRun: (expr: string) => void;
  onChange?: (expr: string) => void;
}

const theme = EditorView.theme(
  {
    "&": { color: "#d7dee7", backgroundColor: "#0e141b", fontSize: "13.5px", borderRadius: "6px" },
    "&.cm-focused": { outline: "none" },
    ".cm-content": { fontFamily: 'ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace', padding: "7px 0", caretColor: "#7ab4ff" },
    ".cm-line": { padding: "0 10px" },
    ".cm-cursor, .cm-dropCursor": { borderLeftColor: "#7ab4ff" },
    "&.cm-focused .cm-selectionBackground, .cm-selectionBackground, .cm-content ::selection": { backgroundColor: "#264f78" },
    ".cm-placeholder": { color: "#5d6b7c" },
    ".cm-matchingBracket": { backgroundColor: "#2d3a4c", outline: "1px solid #4c9aff" },
    ".cm-tooltip": { backgroundColor: "#141c26", border: "1px solid #33435a", color: "#d7dee7" },
    ".cm-tooltip-autocomplete > ul": { fontFamily: 'ui-monospace, "DejaVu Sans Mono", monospace', maxHeight: "18em" },
    ".cm-tooltip-autocomplete > ul > li[aria-selected]": { backgroundColor: "#1f3a5f", color: "#f0f4f8" },
    ".cm-completionDetail": { color: "#8b98a8", fontStyle: "normal", marginLeft: "1em" },
    ".cm-completionInfo": { backgroundColor: "#141c26", border: "1px solid #33435a", maxWidth: "420px" },
    ".cm-diagnostic-error": { borderLeft: "3px solid #f85149" },
    ".cm-lintRange-error": { backgroundImage: "none", textDecoration: "underline wavy #f85149" },
    ".cm-tooltip-lint": { fontFamily: "system-ui, sans-serif" },
  },
  { dark: true },
);

const highlight = HighlightStyle.define([
  { tag: tags.keyword, color: "#ff7b72" },
  { tag: [tags.function(tags.variableName), tags.function(tags.name)], color: "#d2a8ff" },
  { tag: tags.string, color: "#a5d6ff" },
  { tag: tags.number, color: "#79c0ff" },
  { tag: tags.labelName, color: "#ffa657" },
  { tag: [tags.operator, tags.compareOperator, tags.arithmeticOperator, tags.logicOperator], color: "#ff7b72" },
  { tag: tags.comment, color: "#8b949e", fontStyle: "italic" },
  { tag: tags.invalid, color: "#f85149" },
  { tag: [tags.bracket, tags.paren, tags.squareBracket, tags.brace], color: "#b1bac4" },
  { tag: tags.unit, color: "#79c0ff" },
  { tag: [tags.modifier, tags.special(tags.name)], color: "#ffa657" },
]);

export function createPromQLEditor(host: HTMLElement, opts: EditorOptions): PromQLEditor {
  const shadow = host.shadowRoot ?? host.attachShadow({ mode: "open" });
  const promql = new PromQLExtension().setComplete({
    remote: new MemoPrometheusClient(window.location.origin),
    maxMetricsMetadata: 10000,
  });
  let view: EditorView;
  const run = () => {
    closeCompletion(view);
    opts.onRun(view.state.doc.toString());
    return true;
  };
  view = new EditorView({
    root: shadow,
    parent: shadow,
    state: EditorState.create({
      doc: opts.value,
      extensions: [
        history(),
        drawSelection(),
        highlightSpecialChars(),
        bracketMatching(),
        closeBrackets(),
        highlightSelectionMatches(),
        autocompletion({ activateOnTyping: true, maxRenderedOptions: 200 }),
        promql.asExtension(),
        syntaxHighlighting(highlight),
        theme,
        placeholder("Expression (press Enter to run, e.g. gpu_temperature_celsius)"),
        EditorView.lineWrapping,
        Prec.highest(
          keymap.of([
            { key: "Mod-Enter", run },
            { key: "Shift-Enter", run },
            { key: "Alt-Enter", run: insertNewline },
          ]),
        ),
        keymap.of([...closeBracketsKeymap, ...completionKeymap, { key: "Enter", run }, ...defaultKeymap, ...historyKeymap, ...lintKeymap]),
        // the completion menu must not stay open over the page when focus leaves the editor
        EditorView.domEventHandlers({ blur: (_e, v) => void closeCompletion(v) }),
        EditorView.updateListener.of((u) => {
          if (u.docChanged) opts.onChange?.(u.state.doc.toString());
        }),
        EditorView.contentAttributes.of({ "aria-label": "PromQL expression", "data-testid": "promql-input" }),
      ],
    }),
  });
  return {
    view,
    getValue: () => view.state.doc.toString(),
    setValue: (v: string) => {
      if (v !== view.state.doc.toString()) view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: v } });
    },
    focus: () => view.focus(),
    closeMenus: () => void closeCompletion(view),
    destroy: () => view.destroy(),
  };
}
