// The body of GET /api/v1/targets, in Prometheus's JSON shape, from a
// scrape manager snapshot.
//
// Contract: {"status":"success","data":{"activeTargets":[...],
// "droppedTargets":[]}} with, per target, discoveredLabels, labels,
// scrapePool, scrapeUrl, globalUrl, lastError, lastScrape (RFC 3339, UTC;
// "0001-01-01T00:00:00Z" before the first scrape), lastScrapeDuration
// (seconds), health ("up", "down", "unknown"), scrapeInterval and
// scrapeTimeout (Prometheus durations). `state` is "active", "dropped",
// "any" or "" (as any); `pool` filters on scrapePool when not empty.
// droppedTargets lists {discoveredLabels, scrapePool} of the targets
// relabeling dropped (with the same filters) and droppedTargetCounts the
// number per pool, for every pool whatever `pool` says; with state
// "active" droppedTargets is [] and droppedTargetCounts null, with state
// "dropped" activeTargets is [] (as Prometheus answers).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "scrape/manager.h"

namespace gpumon::scrape {

std::string TargetsJson(const std::vector<TargetSnapshot>& targets,
                        const std::vector<DroppedTargetSnapshot>& dropped,
                        const std::map<std::string, size_t>& dropped_counts,
                        const std::string& state, const std::string& pool);

}  // namespace gpumon::scrape
