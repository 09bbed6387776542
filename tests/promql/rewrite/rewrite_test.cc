// The naming-scheme rewrite (promql/rewrite.h): the printed form of
// rewritten queries, the errors, and — the point of it all — that a source
// query on source data gives the same result as its rewrite on the same data
// in the target scheme.
#include "promql/rewrite.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "../engine/engine_test_util.h"
#include "promql/function_table.h"
#include "promql/parser.h"

namespace gpumon::promql {
namespace {

tsdb::Matcher M(tsdb::MatchType t, const std::string& name, const std::string& value) {
  auto m = tsdb::Matcher::Make(t, name, value);
  return m.value();
}

// A made-up pair of schemes: the target renames labels, counts percent,
// millijoules and MHz, splits errors by kind into two metrics, packs reasons
// into a bit mask and knows only one of two partial reasons.
RewriteMap TestMap() {
  RewriteMap m;
  m.metrics["util_ratio"] = {{{"UTIL_PCT", {}, 100, 0, {}}}, true};
  m.metrics["energy_joules_total"] = {{{"ENERGY_MJ", {}, 1000, 0, {}}}, true};
  m.metrics["clock_hz"] = {{{"CLOCK_MHZ", {}, 1e-6, 0, {}}}, true};
  m.metrics["temp_celsius"] = {{{"TEMP", {}, 1, 0, {}}}, true};
  m.metrics["info_like"] = {{{"INFO", {}, 1, 0, {}}}, true};
  m.metrics["reason_active"] = {{{"MASK", {{"reason", "r1"}}, 1, 1, {}},
                                 {"MASK", {{"reason", "r2"}}, 1, 2, {}},
                                 {"MASK", {{"reason", "r32"}}, 1, 32, {}}},
                                true};
  m.metrics["errors_total"] = {{{"SOFT_ERRORS", {{"kind", "soft"}}, 1, 0, {}},
                                {"HARD_ERRORS", {{"kind", "hard"}}, 1, 0, {}}},
                               true};
  m.metrics["partial_seconds_total"] = {{{"A_MICROS", {{"reason", "a"}}, 1e6, 0, {}}}, false};
  m.metrics["mem_bytes"] = {{{"MEM", {}, 1, 0, {M(tsdb::MatchType::kEqual, "INSTANCE", "")}}},
                            true};
  m.labels = {{"host", "Host"}, {"model", "modelName"}};
  m.unmapped_labels = {"native_only"};
  m.unknown_metric = [](std::string_view name) {
    if (name.rfind("src_", 0) == 0) return Status::Error(std::string(name) + " has no equivalent");
    return Status::Ok();
  };
  return m;
}

std::string Rw(const std::string& q) {
  auto r = RewriteQuery(q, TestMap());
  return r.ok() ? *r : "ERROR: " + r.status().message();
}

TEST(RewriteTest, RenamesMetricsAndLabelsEverywhere) {
  EXPECT_EQ(Rw("temp_celsius{host=\"a\"} > 80"), "TEMP{Host=\"a\"} > 80");
  EXPECT_EQ(Rw("max by (host, model) (temp_celsius)"), "max by (Host, modelName) (TEMP)");
  EXPECT_EQ(Rw("sum without (host) (temp_celsius)"), "sum without (Host) (TEMP)");
  EXPECT_EQ(Rw("temp_celsius * on (host) group_left (model) info_like"),
            "TEMP * on (Host) group_left (modelName) INFO");
  EXPECT_EQ(Rw("temp_celsius > ignoring (host) temp_celsius"), "TEMP > ignoring (Host) TEMP");
  EXPECT_EQ(Rw("label_replace(temp_celsius, \"host\", \"$1\", \"model\", \"(.*)\")"),
            "label_replace(TEMP, \"Host\", \"$1\", \"modelName\", \"(.*)\")");
  EXPECT_EQ(Rw("label_join(temp_celsius, \"x\", \"-\", \"host\", \"model\")"),
            "label_join(TEMP, \"x\", \"-\", \"Host\", \"modelName\")");
  EXPECT_EQ(Rw("count_values(\"host\", temp_celsius)"), "count_values(\"Host\", TEMP)");
  EXPECT_EQ(Rw("max_over_time(temp_celsius{host=~\"a.*\"}[10m:1m] offset 5m)"),
            "max_over_time(TEMP{Host=~\"a.*\"}[10m:1m] offset 5m)");
  EXPECT_EQ(Rw("deriv(temp_celsius[5m] offset 1m)"), "deriv(TEMP[5m] offset 1m)");
  EXPECT_EQ(Rw("temp_celsius @ 100 > 1"), "TEMP @ 100.000 > 1");
  // Unknown names the policy accepts pass through, labels renamed.
  EXPECT_EQ(Rw("up{host=\"a\"} == 0"), "up{Host=\"a\"} == 0");
  EXPECT_EQ(Rw("{host=\"a\"}"), "{Host=\"a\"}");
}

TEST(RewriteTest, ScalesInstantSelectors) {
  EXPECT_EQ(Rw("util_ratio > 0.9"), "(UTIL_PCT / 100) > 0.9");
  EXPECT_EQ(Rw("clock_hz"), "(CLOCK_MHZ * 1000000)");
  EXPECT_EQ(Rw("avg(util_ratio offset 1m)"), "avg((UTIL_PCT offset 1m / 100))");
  // Inside a subquery, the instant form applies.
  EXPECT_EQ(Rw("max_over_time(util_ratio[10m:1m])"), "max_over_time((UTIL_PCT / 100)[10m:1m])");
}

TEST(RewriteTest, MovesScalingOutOfRangeFunctions) {
  EXPECT_EQ(Rw("rate(energy_joules_total[5m])"), "(rate(ENERGY_MJ[5m]) / 1000)");
  EXPECT_EQ(Rw("quantile_over_time(0.9, util_ratio[10m])"),
            "(quantile_over_time(0.9, UTIL_PCT[10m]) / 100)");
  EXPECT_EQ(Rw("predict_linear(util_ratio[10m], 600)"),
            "(predict_linear(UTIL_PCT[10m], 600) / 100)");
  EXPECT_EQ(Rw("stdvar_over_time(util_ratio[10m])"), "(stdvar_over_time(UTIL_PCT[10m]) / 10000)");
  EXPECT_EQ(Rw("changes(util_ratio[10m])"), "changes(UTIL_PCT[10m])");
  EXPECT_EQ(Rw("count_over_time(util_ratio[10m])"), "count_over_time(UTIL_PCT[10m])");
  EXPECT_EQ(Rw("timestamp(util_ratio)"), "timestamp(UTIL_PCT)");
}

TEST(RewriteTest, PutsFixedLabelsBack) {
  EXPECT_EQ(Rw("increase(errors_total{kind=\"hard\",host=\"a\"}[1h]) > 0"),
            "label_replace(increase(HARD_ERRORS{Host=\"a\"}[1h]), \"kind\", \"hard\", \"\", \"\") "
            "> 0");
  EXPECT_EQ(Rw("errors_total"),
            "(label_replace(SOFT_ERRORS, \"kind\", \"soft\", \"\", \"\") or "
            "label_replace(HARD_ERRORS, \"kind\", \"hard\", \"\", \"\"))");
  EXPECT_EQ(Rw("errors_total{kind!=\"soft\"}"),
            "label_replace(HARD_ERRORS, \"kind\", \"hard\", \"\", \"\")");
}

TEST(RewriteTest, ExtractsBitsOfAMask) {
  EXPECT_EQ(Rw("reason_active{reason=\"r32\"} == 1"),
            "label_replace(floor(MASK / 32) % 2, \"reason\", \"r32\", \"\", \"\") == 1");
  EXPECT_EQ(Rw("reason_active{reason=~\"r1|r2\"}"),
            "(label_replace(MASK % 2, \"reason\", \"r1\", \"\", \"\") or "
            "label_replace(floor(MASK / 2) % 2, \"reason\", \"r2\", \"\", \"\"))");
  EXPECT_EQ(Rw("last_over_time(reason_active{reason=\"r2\"}[5m])"),
            "label_replace(floor(last_over_time(MASK[5m]) / 2) % 2, \"reason\", \"r2\", \"\", "
            "\"\")");
  EXPECT_EQ(Rw("count_over_time(reason_active{reason=\"r2\"}[5m])"),
            "label_replace(count_over_time(MASK[5m]), \"reason\", \"r2\", \"\", \"\")");
}

TEST(RewriteTest, AbsentKeepsWhatAbsentReports) {
  // absent() reports the equality matchers: the fixed label set by `=` is
  // put back; several variants must all be absent.
  EXPECT_EQ(Rw("absent(errors_total{kind=\"hard\",host=\"a\"})"),
            "label_replace(absent(HARD_ERRORS{Host=\"a\"}), \"kind\", \"hard\", \"\", \"\")");
  EXPECT_EQ(Rw("absent(errors_total{host=\"a\"})"),
            "(absent(SOFT_ERRORS{Host=\"a\"}) and absent(HARD_ERRORS{Host=\"a\"}))");
  EXPECT_EQ(Rw("absent_over_time(util_ratio{host=\"a\"}[5m])"),
            "absent_over_time(UTIL_PCT{Host=\"a\"}[5m])");
}

TEST(RewriteTest, AddsTheVariantsMatchers) {
  EXPECT_EQ(Rw("mem_bytes{host=\"a\"}"), "MEM{INSTANCE=\"\",Host=\"a\"}");
}

TEST(RewriteTest, RejectsWhatItCannotTranslate) {
  auto error = [](const std::string& q) {
    auto r = RewriteQuery(q, TestMap());
    return r.ok() ? "OK: " + *r : r.status().message();
  };
  EXPECT_EQ(error("max_over_time(reason_active{reason=\"r2\"}[5m])"),
            "max_over_time(reason_active{reason=\"r2\"}[5m]): MASK packs the value as a bit of a "
            "mask, which max_over_time cannot be applied to");
  EXPECT_NE(error("rate(reason_active{reason=\"r2\"}[5m])").find("cannot be applied"),
            std::string::npos);
  EXPECT_NE(error("changes(reason_active{reason=\"r2\"}[5m])").find("cannot be applied"),
            std::string::npos);
  EXPECT_EQ(error("reason_active{reason=\"r9\"}"),
            "reason_active{reason=\"r9\"} has no equivalent in the target naming (it has "
            "reason=\"r1\", reason=\"r2\", reason=\"r32\")");
  EXPECT_EQ(error("rate(partial_seconds_total[5m])"),
            "partial_seconds_total: the target naming has only reason=\"a\"; select one with "
            "reason=\"...\"");
  EXPECT_NE(error("rate(partial_seconds_total{reason=~\"a\"}[5m])").find("select one"),
            std::string::npos);
  EXPECT_NE(error("rate(partial_seconds_total{reason=\"b\"}[5m])").find("has no equivalent"),
            std::string::npos);
  EXPECT_EQ(error("rate(partial_seconds_total{reason=\"a\"}[5m])"),
            "OK: label_replace(rate(A_MICROS[5m]) / 1000000, \"reason\", \"a\", \"\", \"\")");
  EXPECT_EQ(error("{__name__=~\"util.*\"}"),
            "{__name__=~\"util.*\"}: the metric name matcher __name__=~\"util.*\" cannot be "
            "translated");
  EXPECT_EQ(error("sum by (native_only) (temp_celsius)"),
            "label \"native_only\" has no equivalent in the target naming");
  EXPECT_NE(error("temp_celsius{native_only=\"x\"}").find("native_only"), std::string::npos);
  EXPECT_EQ(error("src_gone > 0"), "src_gone has no equivalent");
  EXPECT_EQ(error("util_ratio[5m]"),
            "util_ratio[5m]: a range selector whose values or labels change can only be "
            "translated as the argument of a supported range function");
}

TEST(RewriteTest, ClassifiesEveryRangeFunction) {
  // Every function taking a range vector has a class, so none fails as
  // "unsupported" by omission.
  for (const auto& f : AllFunctions()) {
    for (ValueType t : f.arg_types) {
      if (t != ValueType::kMatrix) continue;
      EXPECT_NE(ClassifyRangeFunction(f.name), RangeFunctionClass::kUnsupported) << f.name;
    }
  }
  EXPECT_EQ(ClassifyRangeFunction("abs"), RangeFunctionClass::kUnsupported);
}

// Source and target data side by side in one head: every query, rewritten,
// must give the source query's result (labels renamed) on the target data.
class RewriteEquivalenceTest : public testing::EngineTest {
 protected:
  void SetUp() override {
    const int64_t step = 15 * 1000;
    const size_t n = 121;  // 30 minutes
    for (std::string host : {"a", "b"}) {
      for (std::string gpu : {"0", "1"}) {
        std::vector<double> util, energy, clock, temp, soft, hard, partial;
        std::vector<double> r1, r2, r32, mask;
        double seed = (host == "a" ? 1 : 2) + (gpu == "0" ? 0 : 0.5);
        for (size_t i = 0; i < n; ++i) {
          double t = static_cast<double>(i);
          util.push_back(0.5 + 0.4 * std::sin(t / 7 * seed));
          energy.push_back(1000 * seed + 250.5 * t + (i > 60 ? 3 : 0));
          clock.push_back(1.98e9 - 1e7 * static_cast<double>((i * 7) % 5) * seed);
          temp.push_back(40 + 0.1 * t * seed);
          soft.push_back(std::floor(t / 4 * seed));
          hard.push_back(i > 80 && host == "b" ? 1 : 0);
          partial.push_back(0.75 * t * seed);
          double a = (i / 9) % 2, b = (i / 5) % 3 == 0, c = i > 70 && gpu == "1";
          r1.push_back(a);
          r2.push_back(b);
          r32.push_back(c);
          mask.push_back(a * 1 + b * 2 + c * 32);
        }
        auto native = [&](const std::string& name,
                          std::vector<std::pair<std::string, std::string>> extra = {}) {
          std::vector<Label> l = {{"__name__", name}, {"host", host}, {"gpu", gpu}};
          for (auto& e : extra) l.push_back({e.first, e.second});
          return Labels::FromUnsorted(l);
        };
        auto target = [&](const std::string& name) {
          return Labels{{"__name__", name}, {"Host", host}, {"gpu", gpu}};
        };
        auto scaled = [](std::vector<double> v, double k) {
          for (double& x : v) x *= k;
          return v;
        };
        Add(native("util_ratio"), 0, step, util);
        Add(target("UTIL_PCT"), 0, step, scaled(util, 100));
        Add(native("energy_joules_total"), 0, step, energy);
        Add(target("ENERGY_MJ"), 0, step, scaled(energy, 1000));
        Add(native("clock_hz"), 0, step, clock);
        Add(target("CLOCK_MHZ"), 0, step, scaled(clock, 1e-6));
        Add(native("temp_celsius"), 0, step, temp);
        Add(target("TEMP"), 0, step, temp);
        Add(native("errors_total", {{"kind", "soft"}}), 0, step, soft);
        Add(target("SOFT_ERRORS"), 0, step, soft);
        Add(native("errors_total", {{"kind", "hard"}}), 0, step, hard);
        Add(target("HARD_ERRORS"), 0, step, hard);
        Add(native("partial_seconds_total", {{"reason", "a"}}), 0, step, partial);
        Add(target("A_MICROS"), 0, step, scaled(partial, 1e6));
        Add(native("reason_active", {{"reason", "r1"}}), 0, step, r1);
        Add(native("reason_active", {{"reason", "r2"}}), 0, step, r2);
        Add(native("reason_active", {{"reason", "r32"}}), 0, step, r32);
        Add(target("MASK"), 0, step, mask);
        Add(native("info_like", {{"model", "X" + gpu}}), 0, step, std::vector<double>(n, 1));
        Add(Labels{{"__name__", "INFO"}, {"Host", host}, {"gpu", gpu}, {"modelName", "X" + gpu}}, 0,
            step, std::vector<double>(n, 1));
      }
    }
  }

  // The result with labels in the target's names (source) and without the
  // metric name (the rewrite keeps values, not always names).
  static std::vector<std::pair<std::string, double>> Normalize(const Vector& v, bool rename) {
    std::vector<std::pair<std::string, double>> out;
    for (const auto& s : v) {
      std::vector<Label> l;
      for (const auto& x : s.metric) {
        if (x.name == "__name__") continue;
        std::string name = x.name;
        if (rename && name == "host") name = "Host";
        if (rename && name == "model") name = "modelName";
        l.push_back({name, x.value});
      }
      out.push_back({Labels::FromUnsorted(l).ToString(), s.f});
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  void ExpectSame(const std::string& q) {
    auto rewritten = RewriteQuery(q, TestMap());
    ASSERT_TRUE(rewritten.ok()) << q << ": " << rewritten.status().message();
    size_t results = 0;
    for (int64_t t : {20 * testing::kMin, 25 * testing::kMin, 29 * testing::kMin + 30000}) {
      auto want = Normalize(Vec(q, t), true);
      auto got = Normalize(Vec(*rewritten, t), false);
      ASSERT_EQ(want.size(), got.size()) << q << " vs " << *rewritten << " at " << t;
      results += want.size();
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(want[i].first, got[i].first) << q << " vs " << *rewritten;
        double tol = 1e-9 * std::max(1.0, std::fabs(want[i].second));
        EXPECT_NEAR(want[i].second, got[i].second, tol) << q << " vs " << *rewritten << " at " << t;
      }
    }
    EXPECT_TRUE(results > 0 || q.find("absent(errors_total{host=\"a\"})") != std::string::npos)
        << q << ": the test data should give a result";
  }
};

TEST_F(RewriteEquivalenceTest, SameResultsOnTargetData) {
  for (const char* q : {
           "util_ratio > 0.5",
           "avg by (host) (util_ratio)",
           "topk(1, util_ratio)",
           "util_ratio * on (host, gpu) group_left (model) info_like",
           "label_replace(util_ratio, \"h2\", \"$1\", \"host\", \"(.*)\")",
           "clock_hz / 1e9",
           "rate(energy_joules_total[5m])",
           "irate(energy_joules_total[5m])",
           "increase(energy_joules_total[10m])",
           "delta(util_ratio[10m])",
           "idelta(util_ratio[10m])",
           "deriv(util_ratio[5m])",
           "predict_linear(util_ratio[10m], 600)",
           "avg_over_time(util_ratio[10m])",
           "min_over_time(util_ratio[10m])",
           "max_over_time(util_ratio[10m])",
           "sum_over_time(clock_hz[3m])",
           "quantile_over_time(0.9, util_ratio[10m])",
           "stddev_over_time(util_ratio[10m])",
           "stdvar_over_time(util_ratio[10m])",
           "last_over_time(util_ratio[10m])",
           "changes(clock_hz[10m])",
           "resets(energy_joules_total[30m])",
           "count_over_time(util_ratio[10m])",
           "present_over_time(util_ratio[10m])",
           "timestamp(util_ratio)",
           "max_over_time(util_ratio[10m:1m])",
           "deriv(temp_celsius[5m]) > 0",
           "reason_active == 1",
           "sum by (reason) (reason_active)",
           "reason_active{reason=~\"r1|r32\"}",
           "reason_active{reason!=\"r2\"} > 0",
           "last_over_time(reason_active{reason=\"r2\"}[5m])",
           "count_over_time(reason_active{reason=\"r1\"}[5m])",
           "max by (host, gpu) (reason_active{reason=~\"r2|r32\"})",
           "errors_total",
           "increase(errors_total{kind=\"hard\"}[10m]) > 0",
           "sum by (kind) (rate(errors_total[5m]))",
           "rate(partial_seconds_total{reason=\"a\"}[5m])",
           "absent(errors_total{kind=\"hard\",host=\"zz\"})",
           "absent(errors_total{host=\"zz\"})",
           "absent(errors_total{host=\"a\"})",
           "absent_over_time(util_ratio{host=\"zz\"}[5m])",
           "absent(reason_active{reason=\"r1\",host=\"zz\"})",
       }) {
    ExpectSame(q);
  }
}

}  // namespace
}  // namespace gpumon::promql
