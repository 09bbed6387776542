// Writers for the Prometheus text exposition format 0.0.4 and OpenMetrics
// 1.0.0 (https://prometheus.io/docs/instrumenting/exposition_formats/,
// https://github.com/OpenObservability/OpenMetrics). See
// docs/formats/exposition.md.
//
// Contract:
// - Families are written in the order given, samples in the order given.
// - Label values are escaped (\\, \", \n); HELP text is escaped (\\, \n, and
//   \" in OpenMetrics). Values use the shortest text that round-trips the
//   double exactly; NaN, +Inf and -Inf are spelled as Prometheus spells them.
// - OpenMetrics: a counter family named "x_total" is declared as family "x"
//   with samples "x_total"; an info family "x_info" as family "x" with type
//   info. A counter whose name lacks "_total" (such as dcgm-exporter's names)
//   cannot be a valid OpenMetrics counter and is declared "unknown" instead,
//   keeping its sample name unchanged. UNIT is written only when the family
//   name ends in "_<unit>", as OpenMetrics requires. Output ends in "# EOF".
// - Text 0.0.4 has no info type: info families are declared gauges.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "exposition/format.h"
#include "exposition/metric_family.h"

namespace gpumon::exposition {

// Appends the rendering of `families` to `out`. The OpenMetrics "# EOF"
// trailer is appended by FinishText, so several batches can be concatenated.
void AppendFamilies(const std::vector<MetricFamily>& families, Format format, std::string* out);
void FinishText(Format format, std::string* out);

// Building blocks, exposed for tests and for other writers.
void AppendEscapedLabelValue(std::string_view value, std::string* out);
void AppendEscapedHelp(std::string_view help, Format format, std::string* out);
void AppendSampleValue(double value, std::string* out);

}  // namespace gpumon::exposition
