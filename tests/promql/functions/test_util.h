// Helpers for calling function implementations directly: build series from
// Prometheus-test-style value lists and cut the window the engine would
// pass for an evaluation time and range.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "promql/functions.h"

namespace gpumon::promql::testing {

constexpr int64_t kMinute = 60 * 1000;

// Points values[i] at t = i * step_ms.
inline Series Load(Labels metric, int64_t step_ms, std::vector<double> values) {
  Series s{std::move(metric), {}};
  for (size_t i = 0; i < values.size(); ++i) {
    s.points.push_back(FPoint{static_cast<int64_t>(i) * step_ms, values[i]});
  }
  return s;
}

// start, start+inc, ... (count+1 values), as "start+incxcount".
inline std::vector<double> Seq(double start, double inc, int count) {
  std::vector<double> v;
  for (int i = 0; i <= count; ++i) v.push_back(start + inc * i);
  return v;
}

inline std::vector<double> Concat(std::vector<double> a, const std::vector<double>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The engine's view at evaluation time ts with range r: (ts - r, ts].
inline Series Window(const Series& s, int64_t ts, int64_t range) {
  Series w{s.metric, {}};
  for (const auto& p : s.points) {
    if (p.t > ts - range && p.t <= ts) w.points.push_back(p);
  }
  return w;
}

// Calls `name` with the given argument values at ts, window (ts-range, ts].
inline Status Invoke(std::string_view name, std::vector<Value> args, Vector& out,
                     Annotations* annotations = nullptr, int64_t ts = 0, int64_t range = 0,
                     const promql::Call* call = nullptr) {
  FunctionImpl impl = FindFunctionImpl(name);
  EXPECT_NE(impl, nullptr) << name;
  if (impl == nullptr) return Status::Error("no impl");
  FunctionArgs fa;
  fa.args = args;
  fa.call = call;
  fa.ts = ts;
  fa.range_start = ts - range;
  fa.range_end = ts;
  fa.annotations = annotations;
  return impl(fa, out);
}

// One range-function evaluation of series `s` at ts over `range`; returns
// its output.
inline Vector CallRange(std::string_view name, const Series& s, int64_t ts, int64_t range,
                        std::vector<Value> before = {}, std::vector<Value> after = {},
                        Annotations* annotations = nullptr) {
  std::vector<Value> args = std::move(before);
  args.push_back(Matrix{Window(s, ts, range)});
  for (auto& v : after) args.push_back(std::move(v));
  Vector out;
  Status st = Invoke(name, std::move(args), out, annotations, ts, range);
  EXPECT_TRUE(st.ok()) << st.message();
  return out;
}

inline double OneValue(const Vector& v) {
  EXPECT_EQ(v.size(), 1u);
  return v.empty() ? std::nan("") : v.front().f;
}

}  // namespace gpumon::promql::testing
