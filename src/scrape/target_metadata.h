// Metric metadata of scrape targets (the TYPE, HELP and UNIT lines of
// their expositions) and the data of the Prometheus API endpoints that
// list it: /api/v1/targets/metadata and /api/v1/metadata.
//
// Contract:
// - Callers hand in one TargetMetadata per active target, in the order
//   targets should be listed (ScrapeLoop::Metadata() supplies the entries,
//   Target::labels the labels).
// - Request parameters are passed as the raw form values (empty: absent).
//   A limit that is not an integer fails with "limit must be a number"
//   ("limit_per_metric must be a number"), a bad match_target with
//   `invalid parameter "match_target": <parse error>`; the API layer
//   reports both as bad_data.
// - /api/v1/targets/metadata: every entry of every target whose labels
//   match all of match_target's matchers; with `metric`, only that metric
//   family's entry, and the "metric" field is omitted (as Prometheus
//   does). A non-negative limit is checked before each target, so the last
//   target's entries may take the total past it (Prometheus's behaviour).
// - /api/v1/metadata: metric family -> its distinct {type, help, unit}
//   across targets, in first-seen order; limit_per_metric > 0 caps the
//   distinct entries per family, a non-negative limit the number of
//   families (the first by name; Prometheus's choice is arbitrary).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/labels.h"
#include "common/status.h"

namespace gpumon::scrape {

struct MetricMetadataEntry {
  std::string metric;  // metric family name
  std::string type;  // counter, gauge, histogram, gaugehistogram, summary, info, stateset, unknown
  std::string help;
  std::string unit;

  bool operator==(const MetricMetadataEntry&) const = default;
};

struct TargetMetadata {
  Labels target;                              // the target's labels
  std::vector<MetricMetadataEntry> metadata;  // by metric name
};

// {type, help, unit} without the family name: one value of /api/v1/metadata.
struct MetadataValue {
  std::string type;
  std::string help;
  std::string unit;

  bool operator==(const MetadataValue&) const = default;
};

struct TargetMetadataParams {
  std::string match_target;  // label selector over target labels
  std::string metric;
  std::string limit;
};

struct MetricMetadataParams {
  std::string metric;
  std::string limit;
  std::string limit_per_metric;
};

struct TargetMetadataRow {
  const Labels* target;  // points into the input
  const MetricMetadataEntry* entry;
};

// The rows of /api/v1/targets/metadata, pointing into `targets`.
Result<std::vector<TargetMetadataRow>> SelectTargetMetadata(
    const std::vector<TargetMetadata>& targets, const TargetMetadataParams& params);

// The families of /api/v1/metadata, sorted by name.
Result<std::vector<std::pair<std::string, std::vector<MetadataValue>>>> MergeMetricMetadata(
    const std::vector<TargetMetadata>& targets, const MetricMetadataParams& params);

// The JSON text of each endpoint's "data" (an array, an object).
Result<std::string> TargetMetadataJson(const std::vector<TargetMetadata>& targets,
                                       const TargetMetadataParams& params);
Result<std::string> MetricMetadataJson(const std::vector<TargetMetadata>& targets,
                                       const MetricMetadataParams& params);

}  // namespace gpumon::scrape
