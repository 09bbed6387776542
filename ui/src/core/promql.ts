/**
 * Small pure helpers for building PromQL text.
 *
 * Contract:
 * - `quote(v)` is a PromQL double-quoted string literal of v.
 * - `regexEscape(v)` escapes RE2 metacharacters so v matches literally.
 * - `matcher(label, values)` is `label="v"` for one value, `label=~"a|b"`
 *   (each value escaped) for several, and "" for none (= All).
 * - `varMatchers(vars)` turns the template variables into matchers for GPU
 *   series: cluster -> `cluster`, node -> `hostname`, gpu -> `gpu`,
 *   job -> `job`; joined with commas, "" when everything is All.
 * - `withMatchers(selectorBody, extra)` joins matcher lists, skipping empties.
 */
import type { Vars } from "./state.ts";

/** Label carrying each template variable on GPU series (node is `hostname`, see docs/metrics.md). */
export const VARIABLE_LABELS: Record<keyof Vars, string> = {
  cluster: "cluster",
  node: "hostname",
  gpu: "gpu",
  job: "job",
};

export function quote(v: string): string {
  return `"${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`;
}

export function regexEscape(v: string): string {
  return v.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

export function matcher(label: string, values: readonly string[]): string {
  if (values.length === 0) return "";
  if (values.length === 1) return `${label}=${quote(values[0] as string)}`;
  return `${label}=~${quote(values.map(regexEscape).join("|"))}`;
}

export function varMatchers(vars: Vars, skip: ReadonlyArray<keyof Vars> = []): string {
  return withMatchers(
    ...(Object.keys(VARIABLE_LABELS) as Array<keyof Vars>)
      .filter((k) => !skip.includes(k))
      .map((k) => matcher(VARIABLE_LABELS[k], vars[k] ?? [])),
  );
}

export function withMatchers(...parts: string[]): string {
  return parts.filter((p) => p !== "").join(",");
}
