// Helpers shared by the head tests: matcher construction and reading back
// everything a querier returns.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tsdb/head/head.h"
#include "tsdb/head/head_appender.h"
#include "tsdb/matcher.h"

namespace gpumon::tsdb::head::testing {

inline Matcher M(MatchType type, const std::string& name, const std::string& value) {
  auto m = Matcher::Make(type, name, value);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return std::move(m).value();
}

struct SeriesSamples {
  Labels labels;
  std::vector<Sample> samples;
};

inline std::vector<SeriesSamples> ReadAll(const tsdb::Querier& q, std::vector<Matcher> ms) {
  std::vector<SeriesSamples> out;
  auto set = q.Select(ms);
  while (set->Next()) {
    SeriesSamples s{set->labels(), {}};
    auto it = set->Iterator();
    while (it->Next()) s.samples.push_back(it->At());
    EXPECT_TRUE(it->status().ok()) << it->status().message();
    out.push_back(std::move(s));
  }
  EXPECT_TRUE(set->status().ok()) << set->status().message();
  return out;
}

inline std::vector<SeriesSamples> ReadAll(const Head& head, std::vector<Matcher> ms,
                                          int64_t mint = kMinTime, int64_t maxt = kMaxTime) {
  return ReadAll(*head.Querier(mint, maxt), std::move(ms));
}

// Bit-exact sample comparison (NaN payloads, -0.0).
inline bool SameSamples(const std::vector<Sample>& a, const std::vector<Sample>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].t != b[i].t) return false;
    if (std::bit_cast<uint64_t>(a[i].v) != std::bit_cast<uint64_t>(b[i].v)) return false;
  }
  return true;
}

inline void AppendOk(HeadAppender* app, const Labels& l, int64_t t, double v) {
  auto r = app->Append(0, l, t, v);
  ASSERT_TRUE(r.ok()) << r.status().message();
}

}  // namespace gpumon::tsdb::head::testing
