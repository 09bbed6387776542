// Test data shared by the index and block tests: deterministic label sets
// that exercise the index (empty values, unicode, long values, labels present
// on only some series, a high-cardinality label) and matcher sets covering
// every matcher kind, including ones that match the empty string and ones on
// labels no series has. BruteForce evaluates matchers series by series, the
// reference the index must agree with.
#pragma once

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "common/labels.h"
#include "tsdb/matcher.h"

namespace gpumon::tsdb::testing {

inline Matcher M(MatchType t, const std::string& name, const std::string& value) {
  auto m = Matcher::Make(t, name, value);
  if (!m.ok()) std::abort();
  return std::move(m).value();
}

inline std::vector<Labels> MakeTestSeries(size_t n) {
  static const char* kNames[] = {"gpu_temp_celsius", "gpu_power_watts", "gpu_util_ratio", "up",
                                 "métrique_ünïcode"};
  std::vector<Labels> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    std::vector<Label> l;
    l.push_back({"__name__", kNames[i % 5]});
    l.push_back({"instance", "node-" + std::to_string((i / 5) % 97)});
    l.push_back({"gpu", std::to_string((i / 485) % 8)});
    l.push_back({"serial", "S" + std::to_string(i)});  // unique per series
    if (i % 3 == 0) l.push_back({"mig", i % 2 == 0 ? "1g.10gb" : "3g.40gb"});
    if (i % 7 == 0) l.push_back({"empty", ""});
    if (i % 11 == 0) l.push_back({"uni", i % 2 == 0 ? "温度-ü-😀" : "Ωmega\n\"quoted\""});
    if (i % 13 == 0)
      l.push_back({"long", std::string(1500 + i % 17, static_cast<char>('a' + i % 26))});
    if (i % 4 == 1) l.push_back({"job", i % 8 == 1 ? "dcgm" : "gpumon"});
    out.push_back(Labels::FromUnsorted(std::move(l)));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

inline std::vector<std::vector<Matcher>> MakeTestMatcherSets(std::mt19937_64& rng, size_t random) {
  using T = MatchType;
  std::vector<std::vector<Matcher>> sets = {
      {},
      {M(T::kEqual, "__name__", "up")},
      {M(T::kEqual, "__name__", "nope")},
      {M(T::kNotEqual, "__name__", "up")},
      {M(T::kRegexMatch, "__name__", "gpu_.*")},
      {M(T::kRegexNoMatch, "__name__", "gpu_.*")},
      {M(T::kEqual, "mig", "")},
      {M(T::kNotEqual, "mig", "")},
      {M(T::kRegexMatch, "mig", "")},
      {M(T::kRegexMatch, "mig", "1g.*|")},
      {M(T::kRegexNoMatch, "mig", "")},
      {M(T::kRegexNoMatch, "mig", "1g.*")},
      {M(T::kEqual, "missing", "")},
      {M(T::kNotEqual, "missing", "")},
      {M(T::kNotEqual, "missing", "x")},
      {M(T::kRegexMatch, "missing", ".*")},
      {M(T::kRegexMatch, "missing", ".+")},
      {M(T::kRegexNoMatch, "missing", ".+")},
      {M(T::kEqual, "empty", "")},
      {M(T::kNotEqual, "empty", "")},
      {M(T::kRegexMatch, "instance", "node-1.*"), M(T::kNotEqual, "gpu", "3")},
      {M(T::kEqual, "instance", "node-7"), M(T::kRegexMatch, "__name__", "gpu_(temp|power).*")},
      {M(T::kRegexMatch, "long", ".*c.*")},
      {M(T::kEqual, "uni", "温度-ü-😀")},
      {M(T::kRegexMatch, "uni", "Ω.*")},
      {M(T::kRegexMatch, "gpu", "[0-3]"), M(T::kRegexNoMatch, "gpu", "2")},
      {M(T::kEqual, "serial", "S17")},
      {M(T::kRegexMatch, "serial", "S1.*"), M(T::kEqual, "job", "dcgm")},
      {M(T::kEqual, "job", ""), M(T::kEqual, "mig", "")},
      {M(T::kRegexMatch, "__name__", ".*"), M(T::kNotEqual, "job", "gpumon")},
  };
  // Random conjunctions drawn from a pool of single matchers.
  std::vector<Matcher> pool;
  for (const auto& s : sets) pool.insert(pool.end(), s.begin(), s.end());
  for (const char* v : {"node-3", "node-42", "0", "7", "gpumon", "", "S5"}) {
    for (const char* name : {"instance", "gpu", "job", "serial"}) {
      pool.push_back(M(T::kEqual, name, v));
      pool.push_back(M(T::kNotEqual, name, v));
    }
  }
  std::uniform_int_distribution<size_t> pick(0, pool.size() - 1), count(1, 3);
  for (size_t i = 0; i < random; ++i) {
    std::vector<Matcher> s;
    for (size_t k = count(rng); k > 0; --k) s.push_back(pool[pick(rng)]);
    sets.push_back(std::move(s));
  }
  return sets;
}

// Indexes into `all` of the series matching every matcher.
inline std::vector<uint64_t> BruteForce(const std::vector<Labels>& all,
                                        const std::vector<Matcher>& ms) {
  std::vector<uint64_t> out;
  for (size_t i = 0; i < all.size(); ++i) {
    bool ok = true;
    for (const auto& m : ms) ok = ok && m.Matches(all[i]);
    if (ok) out.push_back(i);
  }
  return out;
}

inline std::string Describe(const std::vector<Matcher>& ms) {
  std::string s = "{";
  for (const auto& m : ms) s += m.ToString() + ",";
  return s + "}";
}

}  // namespace gpumon::tsdb::testing
