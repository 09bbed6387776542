// Prometheus 2.x compatibility: the PromQL subset 2.42 knows and the
// closed selection windows emulated on gpumon's engine.
#include "rules/prometheus2_compat.h"

#include <gtest/gtest.h>

#include <string>

#include "promql/parser.h"
#include "promql/printer.h"

namespace gpumon::rules {
namespace {

std::string Incompatibility(const std::string& q) {
  promql::ParseResult p = promql::Parse(q);
  EXPECT_TRUE(p.ok()) << q;
  return p.ok() ? Prometheus2Incompatibility(*p.expr) : "parse error";
}

TEST(Prometheus2CompatTest, KnowsPrometheus242sFunctions) {
  for (const char* q :
       {"rate(x[5m])", "abs(x)", "days_in_month()", "day_of_week()", "year()", "vector(1)",
        "histogram_quantile(0.9, x)", "label_replace(x, \"a\", \"b\", \"c\", \"d\")",
        "sum by (a) (x) / on(a) group_left count(y)", "topk(3, x)", "x @ 100 offset -5m",
        "max_over_time(rate(x[1m])[5m:30s])", "predict_linear(x[1h], 3600)"}) {
    EXPECT_EQ(Incompatibility(q), "") << q;
  }
}

TEST(Prometheus2CompatTest, FlagsPrometheus3Additions) {
  EXPECT_NE(Incompatibility("sort_by_label(x, \"a\")").find("sort_by_label"), std::string::npos);
  EXPECT_NE(Incompatibility("sum(first_over_time(x[5m]))").find("first_over_time"),
            std::string::npos);
  EXPECT_NE(Incompatibility("mad_over_time(x[5m]) > 1").find("mad_over_time"), std::string::npos);
  EXPECT_NE(Incompatibility("limitk(2, x)").find("limitk"), std::string::npos);
}

TEST(Prometheus2CompatTest, WidensWindowsExceptForExtrapolatingFunctions) {
  promql::ParseResult p = promql::Parse(
      "max_over_time(x[5m]) + rate(y[5m]) + increase(z[1h:1m]) + "
      "count_over_time(rate(w[2m])[10m:1m]) + delta(v[5m])");
  ASSERT_TRUE(p.ok());
  WidenWindowsForPrometheus2(*p.expr);
  EXPECT_EQ(promql::Print(*p.expr),
            "max_over_time(x[5m1ms]) + rate(y[5m]) + increase(z[1h:1m]) + "
            "count_over_time(rate(w[2m])[10m1ms:1m]) + delta(v[5m])");
}

}  // namespace
}  // namespace gpumon::rules
