// Durations in the test-script language (`load 1m`, `eval instant at
// 1h30m`, `step 10s53ms`), parsed as Prometheus's model.ParseDuration does.
//
// Contract: units y (365d), w, d, h, m, s, ms, each at most once and in
// that order, each with an unsigned integer count; "0" alone is zero.
// Returns milliseconds. Empty text, unknown units, units out of order and
// overflow are errors naming the text.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/status.h"

namespace gpumon::promql::promqltest {

Result<int64_t> ParseScriptDuration(std::string_view text);

}  // namespace gpumon::promql::promqltest
