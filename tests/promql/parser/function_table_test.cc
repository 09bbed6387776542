// The function table: complete, sorted lookups, Prometheus's signatures.

#include "promql/function_table.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace gpumon::promql {
namespace {

TEST(FunctionTableTest, KnowsEveryPrometheusFunction) {
  const char* names[] = {"abs",
                         "absent",
                         "absent_over_time",
                         "acos",
                         "acosh",
                         "asin",
                         "asinh",
                         "atan",
                         "atanh",
                         "avg_over_time",
                         "ceil",
                         "changes",
                         "clamp",
                         "clamp_max",
                         "clamp_min",
                         "cos",
                         "cosh",
                         "count_over_time",
                         "days_in_month",
                         "day_of_month",
                         "day_of_week",
                         "day_of_year",
                         "deg",
                         "delta",
                         "deriv",
                         "double_exponential_smoothing",
                         "end",
                         "exp",
                         "first_over_time",
                         "floor",
                         "histogram_avg",
                         "histogram_count",
                         "histogram_fraction",
                         "histogram_quantile",
                         "histogram_quantiles",
                         "histogram_stddev",
                         "histogram_stdvar",
                         "histogram_sum",
                         "hour",
                         "idelta",
                         "increase",
                         "info",
                         "irate",
                         "label_join",
                         "label_replace",
                         "last_over_time",
                         "ln",
                         "log10",
                         "log2",
                         "mad_over_time",
                         "max_of",
                         "max_over_time",
                         "min_of",
                         "min_over_time",
                         "minute",
                         "month",
                         "pi",
                         "predict_linear",
                         "present_over_time",
                         "quantile_over_time",
                         "rad",
                         "range",
                         "rate",
                         "resets",
                         "round",
                         "scalar",
                         "sgn",
                         "sin",
                         "sinh",
                         "sort",
                         "sort_by_label",
                         "sort_by_label_desc",
                         "sort_desc",
                         "sqrt",
                         "start",
                         "start_timestamp",
                         "stddev_over_time",
                         "stdvar_over_time",
                         "step",
                         "sum_over_time",
                         "tan",
                         "tanh",
                         "time",
                         "timestamp",
                         "ts_of_first_over_time",
                         "ts_of_last_over_time",
                         "ts_of_max_over_time",
                         "ts_of_min_over_time",
                         "vector",
                         "year"};
  std::set<std::string> seen;
  for (const char* n : names) {
    const FunctionDef* f = FindFunction(n);
    ASSERT_NE(f, nullptr) << n;
    EXPECT_EQ(f->name, n);
    seen.insert(n);
  }
  EXPECT_EQ(AllFunctions().size(), seen.size());
  // Aggregations are operators, not functions.
  EXPECT_EQ(FindFunction("sum"), nullptr);
  EXPECT_EQ(FindFunction("limitk"), nullptr);
  EXPECT_EQ(FindFunction("Rate"), nullptr);
  EXPECT_EQ(FindFunction(""), nullptr);
}

TEST(FunctionTableTest, Signatures) {
  using VT = ValueType;
  const FunctionDef* rate = FindFunction("rate");
  EXPECT_EQ(rate->arg_types, std::vector<VT>{VT::kMatrix});
  EXPECT_EQ(rate->return_type, VT::kVector);
  EXPECT_EQ(rate->variadic, 0);
  const FunctionDef* hq = FindFunction("histogram_quantile");
  EXPECT_EQ(hq->arg_types, (std::vector<VT>{VT::kScalar, VT::kVector}));
  const FunctionDef* lj = FindFunction("label_join");
  EXPECT_EQ(lj->variadic, -1);
  EXPECT_EQ(lj->arg_types.size(), 4u);
  const FunctionDef* round = FindFunction("round");
  EXPECT_EQ(round->variadic, 1);
  EXPECT_EQ(FindFunction("year")->variadic, 1);
  EXPECT_EQ(FindFunction("scalar")->return_type, VT::kScalar);
  EXPECT_EQ(FindFunction("time")->arg_types.size(), 0u);
  EXPECT_EQ(FindFunction("quantile_over_time")->arg_types,
            (std::vector<VT>{VT::kScalar, VT::kMatrix}));
  EXPECT_EQ(FindFunction("clamp")->arg_types,
            (std::vector<VT>{VT::kVector, VT::kScalar, VT::kScalar}));
  EXPECT_TRUE(FindFunction("mad_over_time")->experimental);
  EXPECT_FALSE(FindFunction("rate")->experimental);
  EXPECT_EQ(FindFunction("double_exponential_smoothing")->arg_types,
            (std::vector<VT>{VT::kMatrix, VT::kScalar, VT::kScalar}));
}

TEST(FunctionTableTest, SortedAndUnique) {
  const auto& all = AllFunctions();
  for (size_t i = 1; i < all.size(); ++i) EXPECT_LT(all[i - 1].name, all[i].name);
}

}  // namespace
}  // namespace gpumon::promql
