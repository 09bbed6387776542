// Validity of Prometheus metric and label names and of UTF-8 label values,
// shared by every place that accepts them from outside (rule files, pushed
// metrics, OTLP exports).
//
// Contract:
// - IsValidMetricName: [a-zA-Z_:][a-zA-Z0-9_:]* (the legacy charset).
// - IsValidLabelName: [a-zA-Z_][a-zA-Z0-9_]*.
// - IsValidUtf8: RFC 3629 UTF-8; overlong forms, surrogates and code points
//   above U+10FFFF are invalid.
#pragma once

#include <string_view>

namespace gpumon {

bool IsValidMetricName(std::string_view name);
bool IsValidLabelName(std::string_view name);
bool IsValidUtf8(std::string_view s);

}  // namespace gpumon
