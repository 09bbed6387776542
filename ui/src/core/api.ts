/**
 * Fetch wrappers for the Prometheus-compatible HTTP API served by gpumon.
 *
 * Contract:
 * - All times are epoch SECONDS (floats allowed), steps are seconds: the unit
 *   of the Prometheus API and of uPlot's x axis, used throughout the UI.
 * - Every function takes an optional AbortSignal; an aborted request rejects
 *   with a DOMException named "AbortError" (test with `isAbortError`).
 * - A non-success answer rejects with `ApiError`, whose message is the API's
 *   own `error` text (or the HTTP status line when the body is not JSON), and
 *   which carries `status` (HTTP) and `errorType` (API).
 * - The resolved value is the API's `data` field; `warnings` are dropped.
 * - Requests go to the same origin (relative URLs), so the page works behind
 *   the server's TLS/basic-auth and the CSP `connect-src 'self'`.
 * - Long queries are sent as POST (form-encoded) to stay below URL limits.
 */

export type Labels = Record<string, string>;
/** [time (seconds), value as the API's string ("NaN", "+Inf" possible)] */
export type SamplePair = [number, string];
export interface MatrixSeries {
  metric: Labels;
  values?: SamplePair[];
  /** native histograms: ignored by the UI, kept for type fidelity */
  histograms?: unknown[];
}
export interface VectorSample {
  metric: Labels;
  value?: SamplePair;
  histogram?: unknown;
}
export type QueryResult =
  | { resultType: "matrix"; result: MatrixSeries[] }
  | { resultType: "vector"; result: VectorSample[] }
  | { resultType: "scalar"; result: SamplePair }
  | { resultType: "string"; result: SamplePair };

export type ParamValue = string | number | undefined | null | Array<string | number>;
export type Params = Record<string, ParamValue>;

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly errorType: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

export function isAbortError(err: unknown): boolean {
  return typeof err === "object" && err !== null && (err as { name?: string }).name === "AbortError";
}

/** Encodes params; arrays repeat the key (match[]=a&match[]=b); null/undefined are skipped. */
export function encodeParams(params: Params = {}): string {
  const sp = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null) continue;
    if (Array.isArray(v)) for (const item of v) sp.append(k, String(item));
    else sp.append(k, String(v));
  }
  return sp.toString();
}

const MAX_GET_QUERY = 2000;

/**
 * Calls `path` (e.g. "/api/v1/targets") and resolves with the `data` field.
 * Uses POST when the encoded parameters are long and `allowPost` is true.
 */
export async function getJSON<T>(path: string, params?: Params, signal?: AbortSignal, allowPost = false): Promise<T> {
  const body = encodeParams(params);
  let resp: Response;
  const init: RequestInit = { signal: signal ?? null, headers: { Accept: "application/json" }, credentials: "same-origin" };
  if (allowPost && body.length > MAX_GET_QUERY) {
    resp = await fetch(path, {
      ...init,
      method: "POST",
      headers: { Accept: "application/json", "Content-Type": "application/x-www-form-urlencoded" },
      body,
    });
  } else {
    resp = await fetch(body ? `${path}?${body}` : path, init);
  }
  type Envelope = { status?: string; data?: T; error?: string; errorType?: string };
  let json: Envelope | null = null;
  try {
    json = (await resp.json()) as Envelope;
  } catch (err) {
    if (isAbortError(err)) throw err;
    json = null;
  }
  if (!resp.ok || !json || json.status !== "success") {
    const msg = json?.error ?? `${resp.status} ${resp.statusText || "request failed"}`;
    throw new ApiError(msg, resp.status, json?.errorType ?? "http");
  }
  return json.data as T;
}

/** Instant query at `time` (seconds; default: server's now). */
export function instantQuery(expr: string, time?: number, signal?: AbortSignal): Promise<QueryResult> {
  return getJSON<QueryResult>("/api/v1/query", { query: expr, time }, signal, true);
}

/** Range query; resolves with the matrix (series without samples are possible). */
export async function rangeQuery(
  expr: string,
  start: number,
  end: number,
  step: number,
  signal?: AbortSignal,
): Promise<MatrixSeries[]> {
  const data = await getJSON<QueryResult>(
    "/api/v1/query_range",
    { query: expr, start: round3(start), end: round3(end), step },
    signal,
    true,
  );
  if (data.resultType !== "matrix") throw new ApiError(`expected a matrix, got ${data.resultType}`, 200, "bad_data");
  return data.result;
}

/** /api/v1/series: label sets matching any of `match`. */
export function series(match: string[], start?: number, end?: number, signal?: AbortSignal): Promise<Labels[]> {
  return getJSON<Labels[]>("/api/v1/series", { "match[]": match, start, end }, signal, true);
}

/** /api/v1/label/<name>/values, optionally restricted by series selectors. */
export function labelValues(
  name: string,
  match?: string[],
  start?: number,
  end?: number,
  signal?: AbortSignal,
): Promise<string[]> {
  return getJSON<string[]>(`/api/v1/label/${encodeURIComponent(name)}/values`, { "match[]": match, start, end }, signal);
}

/** Parses an API sample value ("NaN", "+Inf", "-Inf" included). */
export function parseSampleValue(v: string): number {
  if (v === "+Inf") return Infinity;
  if (v === "-Inf") return -Infinity;
  return Number(v);
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
