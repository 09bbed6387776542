// Values a PromQL expression evaluates to: scalar, string, instant vector,
// range vector (matrix), plus the annotations (warnings, infos) a query
// collects. Timestamps are milliseconds.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "common/labels.h"

namespace gpumon::promql {

struct FPoint {
  int64_t t = 0;
  double f = 0;
};

// One element of an instant vector. `t` is the evaluation time, except
// where Prometheus keeps the source sample's time (timestamp() over a
// selector).
struct Sample {
  Labels metric;
  int64_t t = 0;
  double f = 0;
};
using Vector = std::vector<Sample>;

struct Series {
  Labels metric;
  std::vector<FPoint> points;  // ascending time
};
using Matrix = std::vector<Series>;

struct Scalar {
  int64_t t = 0;
  double v = 0;
};

struct String {
  int64_t t = 0;
  std::string v;
};

using Value = std::variant<Scalar, String, Vector, Matrix>;

// Warnings and infos, deduplicated, in the order first raised. Messages
// use Prometheus's wording (e.g. `PromQL info: metric might not be a
// counter, name does not end in _total/_sum/_count/_bucket: "foo"`).
struct Annotations {
  std::vector<std::string> warnings;
  std::vector<std::string> infos;
  void AddWarning(std::string msg);
  void AddInfo(std::string msg);
  void Merge(const Annotations& other);
};

}  // namespace gpumon::promql
