// OTLP → Prometheus name translation, following Prometheus's OTLP receiver
// (its "UnderscoreEscapingWithSuffixes" translation strategy) and the
// OpenTelemetry specification's Prometheus compatibility section.
//
// Contract:
// - Metric names: the OTLP name is split into tokens at every character
//   outside [a-zA-Z0-9:] (dots, dashes, spaces, runs of underscores...),
//   the unit's suffixes are appended unless a token already equals them,
//   `total` is moved to the end of monotonic counters (appended when
//   missing), `ratio` likewise for gauges whose unit is "1"; the tokens are
//   joined with "_" and a leading digit gets a "_" prefix. An empty result
//   means the name cannot be translated.
// - Units (UCUM as OpenTelemetry writes them): "main/per" → "<main>" and
//   "per_<per>"; a part containing braces ("{request}", annotations) is
//   dropped; known units are spelled out (s→seconds, ms→milliseconds,
//   By→bytes, KiBy→kibibytes, Cel→celsius, %→percent, 1→nothing, ...; per
//   units s→second, m→minute, h→hour, d→day, w→week, mo→month, y→year);
//   unknown units are kept, with characters outside [a-zA-Z0-9:] replaced
//   by "_".
// - Label names: characters outside [a-zA-Z0-9_] become "_"; a name
//   starting with a digit gets a "key_" prefix, one starting with "_" a
//   "key" prefix (names starting with "__" are reserved in Prometheus, so
//   pushed data never produces one). Empty stays empty (not a label).
#pragma once

#include <string>
#include <string_view>

namespace gpumon::ingest {

enum class OtlpNameKind {
  kGauge,    // OTLP Gauge: unit "1" → _ratio
  kCounter,  // monotonic Sum: _total
  kOther,    // non-monotonic Sum, Histogram, Summary
};

std::string OtlpMetricName(std::string_view name, std::string_view unit, OtlpNameKind kind);

// The OpenMetrics unit of a translated name: the unit suffixes joined
// ("seconds", "bytes_per_second"); "" when the unit adds none.
std::string OtlpUnitSuffix(std::string_view unit);

std::string OtlpLabelName(std::string_view key);

}  // namespace gpumon::ingest
