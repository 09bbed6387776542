/**
 * The data source of PromQL autocompletion: codemirror-promql's own
 * HTTPPrometheusClient pointed at this server (same origin), behind a small
 * time-limited memo.
 *
 * Why not the package's CachedPrometheusClient: in this version it builds
 * lru-cache instances with a TTL and no size bound, and lru-cache reports
 * that with console.error in a browser; the UI must run without console
 * errors. The memo here is bounded by the number of distinct requests an
 * editing session makes and expires entries after `maxAgeMs`.
 *
 * Contract: implements PrometheusClient; identical calls within maxAgeMs
 * share one request; a failed request is forgotten at once (retried next
 * time) and resolves to an empty answer (completion is best-effort).
 */
import type { PrometheusClient } from "@prometheus-io/codemirror-promql";
import { HTTPPrometheusClient } from "@prometheus-io/codemirror-promql/dist/esm/client/prometheus";

type Matchers = Parameters<PrometheusClient["labelValues"]>[2];

export class MemoPrometheusClient implements PrometheusClient {
  private readonly memo = new Map<string, { at: number; value: Promise<unknown> }>();
  private readonly inner: PrometheusClient;

  constructor(
    url: string,
    private readonly maxAgeMs = 5 * 60 * 1000,
  ) {
    this.inner = new HTTPPrometheusClient({
      url,
      httpMethod: "GET",
      lookbackInterval: 12 * 60 * 60 * 1000,
      httpErrorHandler: () => {},
    });
  }

  private cached<T>(key: string, fallback: T, fn: () => Promise<T>): Promise<T> {
    const now = Date.now();
    const hit = this.memo.get(key);
    if (hit && now - hit.at < this.maxAgeMs) return hit.value as Promise<T>;
    if (this.memo.size > 500) this.memo.clear();
    const value = fn().catch(() => {
      this.memo.delete(key);
      return fallback;
    });
    this.memo.set(key, { at: now, value });
    return value;
  }

  labelNames(metricName?: string): Promise<string[]> {
    return this.cached(`ln|${metricName ?? ""}`, [], () => this.inner.labelNames(metricName));
  }

  labelValues(labelName: string, metricName?: string, matchers?: Matchers): Promise<string[]> {
    const key = `lv|${labelName}|${metricName ?? ""}|${JSON.stringify(matchers ?? [])}`;
    return this.cached(key, [], () => this.inner.labelValues(labelName, metricName, matchers));
  }

  metricMetadata(): ReturnType<PrometheusClient["metricMetadata"]> {
    return this.cached("md", {}, () => this.inner.metricMetadata());
  }

  series(metricName: string, matchers?: Matchers, labelName?: string): Promise<Map<string, string>[]> {
    const key = `se|${metricName}|${JSON.stringify(matchers ?? [])}|${labelName ?? ""}`;
    return this.cached(key, [], () => this.inner.series(metricName, matchers, labelName));
  }

  metricNames(prefix?: string): Promise<string[]> {
    return this.cached(`mn|${prefix ?? ""}`, [], () => this.inner.metricNames(prefix));
  }

  flags(): Promise<Record<string, string>> {
    return this.cached("fl", {}, () => this.inner.flags());
  }
}
