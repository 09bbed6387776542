// Fixture for engine tests: an in-memory head to append samples to, an
// engine over it and helpers to run queries and look up results.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "common/labels.h"
#include "promql/engine.h"
#include "tsdb/head/head.h"
#include "tsdb/head/head_appender.h"
#include "tsdb/sample.h"

namespace gpumon::promql::testing {

inline constexpr int64_t kMin = 60 * 1000;  // one minute in ms

class EngineTest : public ::testing::Test {
 protected:
  // Appends values at t0, t0 + step, ...; NaN entries are skipped unless
  // they are stale markers.
  void Add(const Labels& l, int64_t t0, int64_t step, const std::vector<double>& values) {
    auto app = head_.Appender();
    for (size_t i = 0; i < values.size(); ++i) {
      const double v = values[i];
      if (std::isnan(v) && !tsdb::IsStaleNaN(v)) continue;
      ASSERT_TRUE(app->Append(0, l, t0 + static_cast<int64_t>(i) * step, v).ok());
    }
    ASSERT_TRUE(app->Commit().ok());
  }

  QueryResult Instant(const std::string& q, int64_t ts) {
    return engine_.Instant(queryable_, q, ts);
  }
  QueryResult Range(const std::string& q, int64_t start, int64_t end, int64_t step) {
    return engine_.Range(queryable_, q, start, end, step);
  }

  // The vector result of an instant query; fails the test on errors.
  Vector Vec(const std::string& q, int64_t ts) {
    QueryResult r = Instant(q, ts);
    EXPECT_TRUE(r.ok()) << q << ": " << r.error;
    if (!r.ok() || !std::holds_alternative<Vector>(r.value)) {
      ADD_FAILURE() << q << ": not a vector";
      return {};
    }
    return std::get<Vector>(r.value);
  }
  Matrix Mat(const std::string& q, int64_t start, int64_t end, int64_t step) {
    QueryResult r = Range(q, start, end, step);
    EXPECT_TRUE(r.ok()) << q << ": " << r.error;
    if (!r.ok()) return {};
    return std::get<Matrix>(r.value);
  }
  double Scal(const std::string& q, int64_t ts) {
    QueryResult r = Instant(q, ts);
    EXPECT_TRUE(r.ok()) << q << ": " << r.error;
    if (!r.ok() || !std::holds_alternative<Scalar>(r.value)) return NAN;
    return std::get<Scalar>(r.value).v;
  }

  // Value of the sample with exactly these labels; NaN-tagged failure when
  // missing.
  static const Sample* Find(const Vector& v, const Labels& l) {
    for (const auto& s : v) {
      if (s.metric == l) return &s;
    }
    return nullptr;
  }
  static const Series* Find(const Matrix& m, const Labels& l) {
    for (const auto& s : m) {
      if (s.metric == l) return &s;
    }
    return nullptr;
  }

  tsdb::head::Head head_;
  Queryable queryable_ = [this](int64_t mint, int64_t maxt) { return head_.Querier(mint, maxt); };
  Engine engine_;
};

}  // namespace gpumon::promql::testing
