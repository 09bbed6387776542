// OTLP metrics → Prometheus families: decodes an ExportMetricsServiceRequest
// (protobuf, proto/otlp_metrics.proto) and translates it the way
// Prometheus's OTLP receiver does (docs/formats/otlp.md).
//
// Contract:
// - ParseOtlpRequest: the body must be a protobuf ExportMetricsServiceRequest;
//   anything else is an error naming what is wrong (the receiver answers 400).
// - TranslateOtlpRequest turns each ResourceMetrics into one push group:
//   - grouping labels: `job` = service.namespace + "/" + service.name, or
//     service.name alone, or "unknown_service" when the resource names no
//     service (the SDK default is "unknown_service:<process>"); `instance` =
//     service.instance.id when present; and each promoted resource
//     attribute (options: default rank, local_rank, node) under its
//     sanitised name. Resources with the same grouping are merged.
//   - the other resource attributes, except service.name/namespace/
//     instance.id, become the labels of a `target_info` gauge (value 1),
//     when there are any. process.pid (an int, or a decimal string) is also
//     returned as `pid` for the GPU join.
//   - metric names and units translate as otlp_names.h says; data point
//     attributes become labels (names sanitised, attributes that sanitise
//     to the same name are joined with ";" in key order, empty values
//     dropped; a name clashing with a grouping label, or with `le` /
//     `quantile` on histograms / summaries, gets an "exported_" prefix).
//     Non-string values are rendered as text (ints and doubles in decimal,
//     bools as true/false, arrays and maps as JSON, bytes as base64).
//   - Gauge → gauge. Sum: monotonic → counter, non-monotonic → gauge;
//     CUMULATIVE values are taken as they are, DELTA values are added to a
//     running total per series (OtlpDeltaAccumulator::Txn) and every series
//     the accumulator holds for that family is emitted. Histogram (explicit
//     buckets) → `<name>_bucket{le}` (cumulative counts, le="+Inf" = count),
//     `<name>_sum` (when the point has a sum) and `<name>_count`; DELTA
//     accumulated as for sums. Summary → `<name>{quantile}`, `_sum`,
//     `_count`. The components of a histogram or summary are separate
//     MetricFamily entries named by their sample names, with the family's
//     type (the shape exposition::ParseToFamilies gives a pushed text
//     body). Samples carry no timestamps (the scraper stamps them, as for
//     Pushgateway pushes).
//   - Points flagged NO_RECORDED_VALUE (staleness markers) are skipped; the
//     family is still emitted (possibly empty), so the store drops the
//     series, and a delta series is forgotten.
//   - Rejected, counted in rejected_points with a message, the rest of the
//     request still applied: exponential histograms (not supported),
//     points of a Sum/Histogram with unspecified temporality, number points
//     without a value, histogram points whose bucket counts do not match
//     the bounds (bounds+1 counts, strictly increasing finite bounds,
//     counts adding up to count), summary quantiles outside [0,1], NaN
//     deltas, metrics whose name translates to nothing or whose translated
//     name is taken by a family of another type in the same group, points
//     beyond max_samples for the request, new delta series refused by the
//     accumulator, names with a reserved prefix (options). A metric without data is a warning
//     (message, 0 rejected).
//   - Text fields must be valid UTF-8: otherwise the whole request is an
//     error naming the field (the receiver answers 400; nothing applied).
// - Translation only stages delta changes in `txn`; the caller commits each
//   group it pushed successfully.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/labels.h"
#include "common/status.h"
#include "exposition/metric_family.h"
#include "ingest/otlp_delta.h"

namespace gpumon::otlp {
class ExportMetricsServiceRequest;
}  // namespace gpumon::otlp

namespace gpumon::ingest {

struct OtlpDecodeOptions {
  // Resource attributes that become grouping labels (sanitised names).
  std::vector<std::string> promoted_resource_attributes = {"rank", "local_rank", "node"};
  // Samples one request may produce (each histogram bucket is one).
  size_t max_samples = 1'000'000;
  // Translated names starting with a reserved prefix (and none of the
  // allowed ones) are rejected per metric, as PushStore::ReserveNamePrefixes
  // would reject the whole group: pass the store's lists.
  std::vector<std::string> reserved_name_prefixes;
  std::vector<std::string> allowed_name_prefixes;
};

struct OtlpGroup {
  Labels grouping;  // always has a non-empty job
  std::optional<int> pid;
  std::vector<exposition::MetricFamily> families;
  int64_t points = 0;  // data points translated into `families`
};

struct OtlpTranslation {
  std::vector<OtlpGroup> groups;
  int64_t rejected_points = 0;
  // Why points were rejected, and warnings: distinct messages, at most
  // kMaxMessages (then "... and N more").
  std::vector<std::string> messages;
  size_t more_messages = 0;
  static constexpr size_t kMaxMessages = 8;

  void Reject(int64_t points, std::string why);
  // messages joined with "; ", "" when none.
  std::string Message() const;
};

Status ParseOtlpRequest(std::string_view body, otlp::ExportMetricsServiceRequest* out);

Result<OtlpTranslation> TranslateOtlpRequest(const otlp::ExportMetricsServiceRequest& request,
                                             const OtlpDecodeOptions& options,
                                             OtlpDeltaAccumulator::Txn& txn);

// Shortest decimal text of `v` without exponent ("0.005", "1000000",
// "+Inf", "-Inf", "NaN"): the spelling of le and quantile label values.
std::string OtlpFormatFloat(double v);

}  // namespace gpumon::ingest
