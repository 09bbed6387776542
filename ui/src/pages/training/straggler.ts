/**
 * Straggler ranking of a training job's ranks (pure).
 *
 * Contract:
 * - Input: instant samples tagged `gm` (queries.ts rankTable): `score` (the
 *   straggler score, 1 = as fast as the job's fastest rank, lower = slower),
 *   `step` (mean step time, s), `steps` (steps done), `last` (Unix time of
 *   the last step), `gpu` (a sample carrying the rank's hostname + gpu),
 *   `section` (the rule pack's score of one section of a rank), `reason` (a
 *   clock event reason active on a GPU, keyed by hostname + gpu).
 * - `slowSection` is the section with the lowest score under 1 (ties: the
 *   first by name); `gpuReasons` the reasons active on the rank's GPU,
 *   sorted (empty when none, or when the rank has no GPU labels).
 * - `rankRows` returns one row per (job, rank), slowest first (lowest score;
 *   ranks without a score last), ties by rank number. A row is a straggler
 *   when its score is below `threshold`; `worst` marks the lowest-scored
 *   straggler. Values that are not finite are undefined.
 * - `stragglerRanks(scores, threshold)` is the set of ranks (per job) under
 *   the threshold, for charts that colour them.
 */
import { parseSampleValue, type Labels, type VectorSample } from "../../core/api.ts";

export interface RankRow {
  job: string;
  rank: string;
  node: string;
  score?: number;
  stepSeconds?: number;
  steps?: number;
  lastStep?: number;
  hostname?: string;
  gpu?: string;
  slowSection?: string;
  slowSectionScore?: number;
  gpuReasons: string[];
  straggler: boolean;
  worst: boolean;
}

function finite(v: string): number | undefined {
  const x = parseSampleValue(v);
  return Number.isFinite(x) ? x : undefined;
}

function rankNumber(r: string): number {
  const n = Number(r);
  return Number.isFinite(n) ? n : Number.MAX_SAFE_INTEGER;
}

export function compareRanks(a: string, b: string): number {
  return rankNumber(a) - rankNumber(b) || a.localeCompare(b);
}

export function rankRows(samples: readonly VectorSample[], threshold: number): RankRow[] {
  const rows = new Map<string, RankRow>();
  const rowOf = (l: Labels): RankRow => {
    const job = l["job"] ?? "";
    const rank = l["rank"] ?? "";
    const key = `${job}\u0000${rank}`;
    let row = rows.get(key);
    if (!row) rows.set(key, (row = { job, rank, node: "", gpuReasons: [], straggler: false, worst: false }));
    if (!row.node && l["node"]) row.node = l["node"];
    return row;
  };
  const reasons = new Map<string, Set<string>>();
  for (const s of samples) {
    const l = s.metric;
    if (l["gm"] === "reason" && l["hostname"] !== undefined && l["gpu"] !== undefined && l["reason"] !== undefined) {
      const k = `${l["hostname"]}\u0000${l["gpu"]}`;
      let set = reasons.get(k);
      if (!set) reasons.set(k, (set = new Set()));
      set.add(l["reason"]);
      continue;
    }
    if (l["rank"] === undefined) continue;
    const row = rowOf(l);
    const v = s.value ? finite(s.value[1]) : undefined;
    switch (l["gm"]) {
      case "score":
        row.score = v;
        break;
      case "step":
        row.stepSeconds = v;
        break;
      case "steps":
        row.steps = v;
        break;
      case "last":
        row.lastStep = v;
        break;
      case "section":
        if (v !== undefined && v < 1 && l["section"] !== undefined) {
          const better = row.slowSectionScore === undefined || v < row.slowSectionScore || (v === row.slowSectionScore && l["section"] < (row.slowSection ?? ""));
          if (better) {
            row.slowSection = l["section"];
            row.slowSectionScore = v;
          }
        }
        break;
      case "gpu":
        if (l["hostname"] !== undefined && l["gpu"] !== undefined) {
          row.hostname = l["hostname"];
          row.gpu = l["gpu"];
        }
        break;
      default:
        break;
    }
  }
  const list = [...rows.values()];
  for (const r of list) {
    r.straggler = r.score !== undefined && r.score < threshold;
    if (r.hostname !== undefined && r.gpu !== undefined) r.gpuReasons = [...(reasons.get(`${r.hostname}\u0000${r.gpu}`) ?? [])].sort();
  }
  list.sort((a, b) => {
    const sa = a.score ?? Number.POSITIVE_INFINITY;
    const sb = b.score ?? Number.POSITIVE_INFINITY;
    return sa - sb || a.job.localeCompare(b.job) || compareRanks(a.rank, b.rank);
  });
  const worst = list.find((r) => r.straggler);
  if (worst) worst.worst = true;
  return list;
}

/** Ranks under the threshold, keyed `job\u0000rank`. */
export function stragglerRanks(scores: ReadonlyArray<{ labels: Labels; value: number | undefined }>, threshold: number): Set<string> {
  const out = new Set<string>();
  for (const s of scores) {
    if (s.value !== undefined && Number.isFinite(s.value) && s.value < threshold) out.add(rankKey(s.labels));
  }
  return out;
}

export function rankKey(l: Labels): string {
  return `${l["job"] ?? ""}\u0000${l["rank"] ?? ""}`;
}
