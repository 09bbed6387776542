/**
 * The GPU page's overlay data, shared by all its charts: alert annotations
 * and silenced windows.
 *
 * Contract: `load(vars, range, step)` runs its requests once per page refresh
 * (not per chart): a range query of
 * `max by (alertname, alertstate, severity, hostname, gpu) (ALERTS{alertstate="firing",...})`
 * over the range (an alert is annotated from when it fired, not while pending) — the gpu matcher also admits alerts without a `gpu` label
 * (node-level alerts of the same host) — and
 * `GET /api/gpumon/v1/silences?start=&end=` (silences merged from the
 * configured Alertmanagers), asked only when /api/v1/alertmanagers lists an
 * active one; a 404 (an older server) or any failure counts as "no
 * silences", quietly. Charts read `alerts` and `silences` in their
 * plugins and are told to redraw through `onChange`.
 */
import { getJSON, isAbortError, rangeQuery } from "../../core/api.ts";
import { trackTask } from "../../core/panel.ts";
import { quote, regexEscape, varMatchers, withMatchers } from "../../core/promql.ts";
import type { Vars } from "../../core/state.ts";
import type { TimeRange } from "../../core/time.ts";
import { alertRegions, silenceRegions, type AlertRegion, type Silence, type SilenceRegion } from "../../charts/plugins/regions.ts";

export function annotationQuery(vars: Vars): string {
  // gpu=~"3|" also matches series without a gpu label: the node's own alerts.
  const gpu = vars.gpu.length > 0 ? `gpu=~${quote([...vars.gpu.map(regexEscape), ""].join("|"))}` : "";
  return `max by (alertname, alertstate, severity, hostname, gpu) (ALERTS{${withMatchers(varMatchers(vars, ["gpu"]), gpu, 'alertstate="firing"')}})`;
}

export class OverlaySource {
  alerts: AlertRegion[] = [];
  silences: SilenceRegion[] = [];
  private controller: AbortController | null = null;
  private readonly listeners = new Set<() => void>();

  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  load(vars: Vars, range: TimeRange, step: number): void {
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    const signal = controller.signal;
    const alerts = rangeQuery(annotationQuery(vars), range.start, range.end, step, signal).then(
      (m) => alertRegions(m, range.end, step),
      (err: unknown) => {
        if (isAbortError(err)) throw err;
        return [] as AlertRegion[];
      },
    );
    const silences = this.fetchSilences(range, signal).then(
      // Silences go on into the future part of a chart that shows a forecast (up to half the range).
      (list) =>
        silenceRegions(Array.isArray(list) ? list : [], { hostname: vars.node, gpu: vars.gpu }, {
          start: range.start,
          end: range.end + (range.end - range.start) / 2,
        }),
      (err: unknown) => {
        if (isAbortError(err)) throw err;
        // 404: a server without the endpoint; anything else: no Alertmanager
        // to ask. Either way there is nothing to hatch, and nothing to log.
        return [] as SilenceRegion[];
      },
    );
    const all = Promise.all([alerts, silences]).then(
      ([a, s]) => {
        if (controller !== this.controller) return;
        this.alerts = a;
        this.silences = s;
        for (const fn of this.listeners) fn();
      },
      () => undefined,
    );
    void trackTask(all);
  }

  /**
   * Asks for silences only when an Alertmanager is configured: the answer
   * would be empty otherwise, and a server without the endpoint would
   * answer 404, which the browser logs as a console error.
   */
  private async fetchSilences(range: TimeRange, signal: AbortSignal): Promise<Silence[]> {
    const ams = await getJSON<{ activeAlertmanagers?: unknown[] }>("/api/v1/alertmanagers", {}, signal);
    if (!ams.activeAlertmanagers || ams.activeAlertmanagers.length === 0) return [];
    return getJSON<Silence[]>("/api/gpumon/v1/silences", { start: Math.floor(range.start), end: Math.ceil(range.end) }, signal);
  }

  destroy(): void {
    this.controller?.abort();
    this.listeners.clear();
  }
}
