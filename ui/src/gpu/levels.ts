/**
 * Threshold levels shared by the Fleet, GPU and Alerts pages.
 *
 * A level is what a value means against its thresholds; `data-level` on cells,
 * tiles and rows carries it, and the stylesheet colours by it. `nodata` means
 * the value (or the limit it is measured against) is missing.
 */
export type Level = "ok" | "warning" | "critical" | "nodata";

const RANK: Record<Level, number> = { nodata: 0, ok: 1, warning: 2, critical: 3 };

/** The more severe of two levels (nodata loses to any real level). */
export function worstLevel(a: Level, b: Level): Level {
  return RANK[a] >= RANK[b] ? a : b;
}

/** Sort key: higher is worse. */
export function levelRank(level: Level): number {
  return RANK[level];
}

/** Level of an alert severity label (info and unknown severities count as ok). */
export function levelOfSeverity(severity: string | undefined): Level {
  if (severity === "critical") return "critical";
  if (severity === "warning") return "warning";
  return "ok";
}

/** Level of a value measured as a margin below a limit (degrees left). */
export function levelOfMargin(margin: number, warningMargin: number, criticalMargin: number): Level {
  if (!Number.isFinite(margin)) return "nodata";
  if (margin <= criticalMargin) return "critical";
  if (margin <= warningMargin) return "warning";
  return "ok";
}

/** Level of a ratio against upper thresholds (e.g. power / limit). */
export function levelOfRatio(ratio: number, warning: number, critical: number): Level {
  if (!Number.isFinite(ratio)) return "nodata";
  if (ratio >= critical) return "critical";
  if (ratio >= warning) return "warning";
  return "ok";
}
