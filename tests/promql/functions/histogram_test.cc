#include <gtest/gtest.h>

#include <cmath>

#include "promql/functions.h"
#include "test_util.h"

namespace gpumon::promql::testing {
namespace {

Sample Bucket(const char* name, const char* job, const char* le, double count) {
  return Sample{Labels{{"__name__", name}, {"job", job}, {"le", le}}, 0, count};
}

Vector Simple() {
  // 1 observation ≤ 1, 2 in (1, 2], 1 above 2.
  return Vector{Bucket("h_bucket", "a", "2", 3), Bucket("h_bucket", "a", "+Inf", 4),
                Bucket("h_bucket", "a", "1", 1)};
}

Vector Quantile(double q, Vector in, Annotations* ann = nullptr) {
  Vector out;
  Status st = Invoke("histogram_quantile", {Scalar{0, q}, std::move(in)}, out, ann);
  EXPECT_TRUE(st.ok());
  return out;
}

TEST(HistogramQuantile, Interpolates) {
  Vector out = Quantile(0.5, Simple());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].metric, (Labels{{"job", "a"}}));  // le and name dropped
  EXPECT_DOUBLE_EQ(out[0].f, 1.5);
  // In the +Inf bucket: the highest finite bound.
  EXPECT_DOUBLE_EQ(OneValue(Quantile(0.9, Simple())), 2);
  // In the first bucket: from 0 upwards.
  EXPECT_DOUBLE_EQ(OneValue(Quantile(0.125, Simple())), 0.5);
}

TEST(HistogramQuantile, OutOfRangeQuantile) {
  Annotations ann;
  EXPECT_EQ(OneValue(Quantile(1.5, Simple(), &ann)), HUGE_VAL);
  EXPECT_EQ(OneValue(Quantile(-0.5, Simple(), &ann)), -HUGE_VAL);
  EXPECT_TRUE(std::isnan(OneValue(Quantile(NAN, Simple(), &ann))));
  EXPECT_EQ(ann.warnings,
            (std::vector<std::string>{
                "PromQL warning: quantile value should be between 0 and 1, got 1.5",
                "PromQL warning: quantile value should be between 0 and 1, got -0.5",
                "PromQL warning: quantile value should be between 0 and 1, got NaN"}));
}

TEST(HistogramQuantile, NeedsInfBucketAndObservations) {
  Vector no_inf{Bucket("h", "a", "1", 1), Bucket("h", "a", "2", 2)};
  EXPECT_TRUE(std::isnan(OneValue(Quantile(0.5, no_inf))));
  Vector empty{Bucket("h", "a", "1", 0), Bucket("h", "a", "+Inf", 0)};
  EXPECT_TRUE(std::isnan(OneValue(Quantile(0.5, empty))));
  Vector only_inf{Bucket("h", "a", "+Inf", 3)};
  EXPECT_TRUE(std::isnan(OneValue(Quantile(0.5, only_inf))));
}

// histograms.test: nonmonotonic_bucket at 50m.
TEST(HistogramQuantile, ForcesMonotonicity) {
  Vector in{
      Bucket("nonmonotonic_bucket", "", "0.1", 20),  Bucket("nonmonotonic_bucket", "", "1", 10),
      Bucket("nonmonotonic_bucket", "", "10", 50),   Bucket("nonmonotonic_bucket", "", "100", 40),
      Bucket("nonmonotonic_bucket", "", "1000", 90), Bucket("nonmonotonic_bucket", "", "+Inf", 80)};
  Annotations ann;
  EXPECT_DOUBLE_EQ(OneValue(Quantile(0.01, in, &ann)), 0.0045);
  EXPECT_DOUBLE_EQ(OneValue(Quantile(0.5, in, &ann)), 8.5);
  EXPECT_DOUBLE_EQ(OneValue(Quantile(0.99, in, &ann)), 979.75);
  ASSERT_EQ(ann.infos.size(), 1u);
  EXPECT_EQ(ann.infos[0],
            "PromQL info: input to histogram_quantile needed to be fixed for monotonicity (see "
            "https://prometheus.io/docs/prometheus/latest/querying/functions/#histogram_quantile) "
            "for metric name \"nonmonotonic_bucket\"");
}

TEST(HistogramQuantile, GroupsByLabelsWithoutLe) {
  Vector in = Simple();
  in.push_back(Bucket("h_bucket", "b", "1", 0));
  in.push_back(Bucket("h_bucket", "b", "+Inf", 10));
  // Same bound written differently: merged.
  in.push_back(Bucket("h_bucket", "b", "1.0", 10));
  Vector out = Quantile(0.5, in);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].metric, (Labels{{"job", "b"}}));
  EXPECT_DOUBLE_EQ(out[1].f, 0.5);
}

TEST(HistogramQuantile, BadLeWarns) {
  Annotations ann;
  Vector in{Sample{Labels{{"__name__", "series"}, {"ale", "0.1"}}, 0, 2},
            Sample{Labels{{"__name__", "series"}, {"le", "Hello World"}}, 0, 2}};
  EXPECT_TRUE(Quantile(0.8, in, &ann).empty());
  EXPECT_EQ(ann.warnings,
            (std::vector<std::string>{
                "PromQL warning: bucket label \"le\" is missing or has a malformed value of \"\" "
                "for metric name \"series\"",
                "PromQL warning: bucket label \"le\" is missing or has a malformed value of "
                "\"Hello World\" for metric name \"series\""}));
}

TEST(HistogramQuantiles, OnePerQuantileWithLabel) {
  Vector out;
  ASSERT_TRUE(
      Invoke("histogram_quantiles", {Simple(), String{0, "q"}, Scalar{0, 0.5}, Scalar{0, 1}}, out)
          .ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].metric, (Labels{{"job", "a"}, {"q", "0.5"}}));
  EXPECT_DOUBLE_EQ(out[0].f, 1.5);
  EXPECT_EQ(out[1].metric, (Labels{{"job", "a"}, {"q", "1.0"}}));
  EXPECT_DOUBLE_EQ(out[1].f, 2);
}

TEST(HistogramFraction, Interpolates) {
  auto frac = [](double lo, double hi) {
    Vector out;
    EXPECT_TRUE(Invoke("histogram_fraction", {Scalar{0, lo}, Scalar{0, hi}, Simple()}, out).ok());
    return OneValue(out);
  };
  EXPECT_DOUBLE_EQ(frac(0, 1.5), 0.5);
  EXPECT_DOUBLE_EQ(frac(0, 2), 0.75);
  EXPECT_DOUBLE_EQ(frac(-HUGE_VAL, HUGE_VAL), 1);
  EXPECT_DOUBLE_EQ(frac(1, 1), 0);
  EXPECT_DOUBLE_EQ(frac(2, HUGE_VAL), 0.25);
  EXPECT_TRUE(std::isnan(frac(NAN, 1)));
}

TEST(NativeHistogramFunctions, IgnoreFloats) {
  for (const char* fn : {"histogram_count", "histogram_sum", "histogram_avg", "histogram_stddev",
                         "histogram_stdvar"}) {
    Vector out;
    ASSERT_TRUE(Invoke(fn, {Simple()}, out).ok());
    EXPECT_TRUE(out.empty()) << fn;
  }
}

}  // namespace
}  // namespace gpumon::promql::testing
