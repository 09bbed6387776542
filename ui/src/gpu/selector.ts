/**
 * Label selectors for GPU queries, built from the template variables.
 *
 * Contract: every GPU query of the Fleet, GPU and Alerts pages takes its
 * label matchers from `gpuSelector(vars, ...extra)`: the core's variable
 * matchers (src/core/promql.ts: cluster -> `cluster`, node -> `hostname`,
 * gpu -> `gpu`, job -> `job`; All adds no matcher, so series without the
 * label still match) joined with `extra` (already-formed matchers). The
 * result is the inside of a selector, without braces, "" when all is All.
 */
import { quote, regexEscape, varMatchers, withMatchers } from "../core/promql.ts";
import type { Vars } from "../core/state.ts";

export function gpuSelector(vars: Vars, ...extra: string[]): string {
  return withMatchers(varMatchers(vars), ...extra);
}

/** `metric{selector}`; with an empty selector just `metric`. */
export function withSelector(metric: string, selector: string): string {
  return selector === "" ? metric : `${metric}{${selector}}`;
}

/** `{__name__=~"a|b",selector}`: several metrics in one query. */
export function metricsSelector(metrics: readonly string[], selector: string): string {
  return `{${withMatchers(`__name__=~${quote(metrics.map(regexEscape).join("|"))}`, selector)}}`;
}
