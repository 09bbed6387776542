// The in-memory shape of Prometheus metrics as exposed on /metrics: families
// of samples sharing a name, type, help and unit. Writers render it; the
// parser produces ParsedSample streams of the same vocabulary.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/labels.h"

namespace gpumon::exposition {

enum class MetricType {
  kUnknown,
  kGauge,
  kCounter,
  kInfo,
  kStateSet,
  kHistogram,
  kSummary,
  kGaugeHistogram
};

// Lower-case type name as written in "# TYPE" lines of OpenMetrics.
const char* MetricTypeName(MetricType type);

using Label = gpumon::Label;

struct Sample {
  std::vector<Label> labels;  // excluding __name__, in output order
  double value = 0;
  std::optional<int64_t> timestamp_ms;
};

struct MetricFamily {
  // The sample name as it appears in text format 0.0.4: counters include
  // their "_total" suffix, info metrics their "_info" suffix. The OpenMetrics
  // writer derives the family name from it.
  std::string name;
  MetricType type = MetricType::kGauge;
  std::string help;
  std::string unit;  // OpenMetrics unit, e.g. "celsius"; empty when none
  std::vector<Sample> samples;
};

}  // namespace gpumon::exposition
