#include <gtest/gtest.h>

#include <cmath>

#include "promql/functions.h"
#include "test_util.h"

namespace gpumon::promql::testing {
namespace {

const Labels kMetric{{"__name__", "m"}, {"job", "a"}};

TEST(Trend, DerivIsLeastSquaresSlope) {
  // y = 2x + noise-free; per second.
  Series s = Load(kMetric, 10 * 1000, {0, 20, 40, 60});
  EXPECT_DOUBLE_EQ(OneValue(CallRange("deriv", s, 30 * 1000, kMinute)), 2);
  // Not collinear: (0,0) (10,10) (20,0) → slope 0.
  Series v = Load(kMetric, 10 * 1000, {0, 10, 0});
  EXPECT_NEAR(OneValue(CallRange("deriv", v, 20 * 1000, kMinute)), 0, 1e-12);
  EXPECT_TRUE(CallRange("deriv", Load(kMetric, 1000, {1}), 0, kMinute).empty());
}

TEST(Trend, PredictLinearFromEvalTime) {
  // Fitted line y = t/1000 (seconds); the window ends at 30s but the
  // evaluation time is 40s (e.g. no newer sample): predict 40 + 60.
  Series s = Load(kMetric, 10 * 1000, {0, 10, 20, 30});
  Vector out = CallRange("predict_linear", s, 40 * 1000, kMinute, {}, {Scalar{0, 60}});
  EXPECT_DOUBLE_EQ(OneValue(out), 100);
  EXPECT_EQ(out[0].metric, (Labels{{"job", "a"}}));
}

TEST(Trend, ConstantSeriesIsExact) {
  Series s = Load(kMetric, 10 * 1000, {0.1, 0.1, 0.1});
  EXPECT_EQ(OneValue(CallRange("deriv", s, 20 * 1000, kMinute)), 0);
  EXPECT_EQ(OneValue(CallRange("predict_linear", s, 20 * 1000, kMinute, {}, {Scalar{0, 3600}})),
            0.1);
}

// functions.test: 0+10x1000 every 10s, double_exponential_smoothing(m[1m],
// 0.01, 0.1) at 8000s is 8000 (a straight line is smoothed exactly).
TEST(Trend, DoubleExponentialSmoothingOnLine) {
  Series s = Load(kMetric, 10 * 1000, Seq(0, 10, 1000));
  double v = OneValue(CallRange("double_exponential_smoothing", s, 8000 * 1000, kMinute, {},
                                {Scalar{0, 0.01}, Scalar{0, 0.1}}));
  EXPECT_NEAR(v, 8000, 1e-9);
}

TEST(Trend, DoubleExponentialSmoothingByHand) {
  // sf = tf = 0.5 over 1, 3, 4: s=1, b=2; i=1: s = 0.5·3 + 0.5·(1+2) = 3;
  // i=2: b = 0.5·(3-1) + 0.5·2 = 2, s = 0.5·4 + 0.5·(3+2) = 4.5.
  Series s = Load(kMetric, 1000, {1, 3, 4});
  EXPECT_DOUBLE_EQ(OneValue(CallRange("double_exponential_smoothing", s, 2000, kMinute, {},
                                      {Scalar{0, 0.5}, Scalar{0, 0.5}})),
                   4.5);
}

TEST(Trend, DoubleExponentialSmoothingRejectsFactors) {
  Series s = Load(kMetric, 1000, {1, 2});
  Vector out;
  Status st =
      Invoke("double_exponential_smoothing", {Matrix{s}, Scalar{0, 1}, Scalar{0, 0.5}}, out);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), "invalid smoothing factor. Expected: 0 < sf < 1, got: 1.000000");
  st = Invoke("double_exponential_smoothing", {Matrix{s}, Scalar{0, 0.5}, Scalar{0, 0}}, out);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), "invalid trend factor. Expected: 0 < tf < 1, got: 0.000000");
}

}  // namespace
}  // namespace gpumon::promql::testing
