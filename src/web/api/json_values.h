// JSON encoding of PromQL values as Prometheus's HTTP API writes them.
//
// Contract:
// - Labels: {"name":"value",...} in label order.
// - A point: [<timestamp seconds as a number>,"<value as a string>"] (see
//   value_format.h).
// - Vector: [{"metric":{...},"value":[t,"v"]},...]; Matrix:
//   [{"metric":{...},"values":[[t,"v"],...]},...]; Scalar and String:
//   [t,"v"].
// - WriteQueryData writes {"resultType":"...","result":...}; with
//   limit > 0 only the first `limit` series of a vector or matrix.
// - Every function returns false when the writer failed or the receiver
//   went away, so callers stop early.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/labels.h"
#include "promql/value.h"
#include "web/api/json_output.h"

namespace gpumon::web::api {

bool WriteLabels(JsonWriter& w, const Labels& labels);
bool WriteTimestamp(JsonWriter& w, int64_t ms);
bool WriteSampleValue(JsonWriter& w, double v);
bool WritePoint(JsonWriter& w, int64_t ms, double v);

// "vector", "matrix", "scalar", "string".
const char* ResultTypeName(const promql::Value& v);
// Series a vector or matrix holds (0 for scalars and strings).
size_t SeriesCount(const promql::Value& v);

bool WriteValue(JsonWriter& w, const promql::Value& v, size_t limit = 0);
bool WriteQueryData(JsonWriter& w, const promql::Value& v, size_t limit = 0);

}  // namespace gpumon::web::api
