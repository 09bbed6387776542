/**
 * Time regions for chart overlays: alert activity and silences.
 *
 * Contract (pure, no DOM):
 * - `alertRegions(matrix, range, step)` turns a range query of
 *   `max by (alertname, alertstate, severity, hostname, gpu) (ALERTS{...})`
 *   into one region per uninterrupted run of samples: from the first sample
 *   to one step after the last (when the alert resolved, as exactly as the
 *   step allows), or `open` (still active) when the run reaches the end of
 *   the range. A gap longer than 1.5 steps ends a run.
 * - `silenceRegions(silences, labels, range)` keeps the silences that could
 *   silence alerts of a GPU with `labels`: every matcher on a label the GPU
 *   has must match it; matchers on labels it does not have (alertname,
 *   severity) are left open. Expired silences count too: they show when the
 *   GPU was silenced in the past. Regions are clipped to the range.
 */
import { parseSampleValue, type Labels, type MatrixSeries } from "../../core/api.ts";

export interface AlertRegion {
  alertname: string;
  state: "firing" | "pending";
  severity: string;
  labels: Labels;
  start: number;
  end: number;
  open: boolean;
}

export function alertRegions(matrix: readonly MatrixSeries[], rangeEnd: number, step: number): AlertRegion[] {
  const out: AlertRegion[] = [];
  for (const s of matrix) {
    const state = s.metric["alertstate"] === "pending" ? "pending" : "firing";
    const times = (s.values ?? []).filter(([, v]) => Number.isFinite(parseSampleValue(v))).map(([t]) => t);
    let runStart: number | null = null;
    let last = 0;
    const flush = () => {
      if (runStart === null) return;
      const open = last + step * 1.5 >= rangeEnd;
      out.push({
        alertname: s.metric["alertname"] ?? "alert",
        state,
        severity: s.metric["severity"] ?? "",
        labels: s.metric,
        start: runStart,
        end: open ? rangeEnd : last + step,
        open,
      });
    };
    for (const t of times) {
      if (runStart !== null && t - last > step * 1.5) {
        flush();
        runStart = null;
      }
      if (runStart === null) runStart = t;
      last = t;
    }
    flush();
  }
  return out.sort((a, b) => a.start - b.start);
}

/** A silence as the server's /api/gpumon/v1/silences returns it (Alertmanager API v2 shape). */
export interface Silence {
  id: string;
  matchers: { name: string; value: string; isRegex?: boolean; isEqual?: boolean }[];
  startsAt: string;
  endsAt: string;
  comment?: string;
  createdBy?: string;
  status?: { state?: string } | string;
}

export interface SilenceRegion {
  silence: Silence;
  start: number;
  end: number;
}

function matches(m: Silence["matchers"][number], value: string): boolean {
  let hit: boolean;
  if (m.isRegex) {
    try {
      hit = new RegExp(`^(?:${m.value})$`).test(value);
    } catch {
      hit = false;
    }
  } else hit = m.value === value;
  return m.isEqual === false ? !hit : hit;
}

export function silenceRegions(
  silences: readonly Silence[],
  labels: Readonly<Record<string, readonly string[]>>,
  range: { start: number; end: number },
): SilenceRegion[] {
  const out: SilenceRegion[] = [];
  for (const silence of silences) {
    const relevant = silence.matchers.every((m) => {
      const values = labels[m.name];
      return values === undefined || values.length === 0 || values.some((v) => matches(m, v));
    });
    if (!relevant) continue;
    const start = Math.max(range.start, Date.parse(silence.startsAt) / 1000);
    const end = Math.min(range.end, Date.parse(silence.endsAt) / 1000);
    if (Number.isFinite(start) && Number.isFinite(end) && end > start) out.push({ silence, start, end });
  }
  return out;
}
