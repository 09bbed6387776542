#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string_view>
#include <utility>
#include <vector>

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

// The regression written out plainly (Prometheus's order of compensated
// sums), to check the batched kernel against bit for bit.
double KahanAdd(double inc, double& sum, double& c) {
  const double t = sum + inc;
  if (std::isinf(t)) {
    c = 0;
  } else if (std::fabs(sum) >= std::fabs(inc)) {
    c += (sum - t) + inc;
  } else {
    c += (inc - t) + sum;
  }
  return sum = t;
}

std::pair<double, double> PlainRegression(const std::vector<FPoint>& p, int64_t intercept_t) {
  double n = 0, sx = 0, cx = 0, sy = 0, cy = 0, sxy = 0, cxy = 0, sx2 = 0, cx2 = 0;
  bool constant = true;
  for (const auto& q : p) {
    constant = constant && q.f == p.front().f;
    n += 1;
    const double x = static_cast<double>(q.t - intercept_t) / 1e3;
    KahanAdd(x, sx, cx);
    KahanAdd(q.f, sy, cy);
    KahanAdd(x * q.f, sxy, cxy);
    KahanAdd(x * x, sx2, cx2);
  }
  if (constant) {
    if (std::isinf(p.front().f)) return {std::nan(""), std::nan("")};
    return {0, p.front().f};
  }
  sx += cx, sy += cy, sxy += cxy, sx2 += cx2;
  const double slope = (sxy - sx * sy / n) / (sx2 - sx * sx / n);
  return {slope, sy / n - slope * sx / n};
}

bool SameBits(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0;
}

TEST(Trend, BatchFormGivesThePerWindowValuesBitForBit) {
  // Irregular times and values (with a gap, a constant stretch, a NaN and
  // an Inf), windows of varying length so that batch lanes differ.
  std::vector<FPoint> pts;
  int64_t t = 1'700'000'000'123;
  for (int i = 0; i < 300; ++i) {
    t += 15'000 + (i % 7) * 311 + (i == 150 ? 600'000 : 0);
    double v = 40 + 0.37 * i + std::sin(i * 0.7) * 3.3;
    if (i >= 60 && i < 90) v = 55.5;
    if (i == 200) v = std::nan("");
    if (i == 250) v = std::numeric_limits<double>::infinity();
    pts.push_back(FPoint{t, v});
  }
  const Labels metric{{"__name__", "m"}, {"job", "a"}};
  for (const char* name : {"deriv", "predict_linear"}) {
    const bool predict = std::string_view(name) == "predict_linear";
    const BatchRangeImpl batch = FindBatchRangeImpl(name);
    ASSERT_NE(batch, nullptr) << name;
    std::vector<BatchWindow> windows;
    for (int64_t ts = pts.front().t; ts <= pts.back().t + kMinute; ts += 47'000) {
      const int64_t range = (ts / 1000 % 3 + 1) * 5 * kMinute;
      BatchWindow w;
      w.ts = ts;
      w.scalar = 600 + static_cast<double>(ts % 1000);
      while (w.begin < pts.size() && pts[w.begin].t <= ts - range) ++w.begin;
      w.end = w.begin;
      while (w.end < pts.size() && pts[w.end].t <= ts) ++w.end;
      if (w.end > w.begin) windows.push_back(w);
    }
    ASSERT_GT(windows.size(), 100u);
    batch(pts, windows);
    int values = 0;
    for (const BatchWindow& w : windows) {
      std::vector<FPoint> in(pts.begin() + static_cast<ptrdiff_t>(w.begin),
                             pts.begin() + static_cast<ptrdiff_t>(w.end));
      // The per-window implementation agrees on presence and value.
      Vector out;
      std::vector<Value> args{Matrix{Series{metric, in}}};
      if (predict) args.push_back(Scalar{w.ts, w.scalar});
      ASSERT_TRUE(Invoke(name, args, out, nullptr, w.ts).ok());
      ASSERT_EQ(w.has_value, !out.empty()) << name << " at " << w.ts;
      if (!w.has_value) continue;
      ++values;
      EXPECT_TRUE(SameBits(w.value, out[0].f)) << name << " at " << w.ts;
      EXPECT_EQ(out[0].metric, (Labels{{"job", "a"}}));
      // And the plain regression does too.
      auto [slope, intercept] = PlainRegression(in, predict ? w.ts : in.front().t);
      const double want = predict ? slope * w.scalar + intercept : slope;
      EXPECT_TRUE(SameBits(w.value, want))
          << name << " at " << w.ts << ": " << w.value << " vs " << want;
    }
    EXPECT_GT(values, 100);
  }
  EXPECT_EQ(FindBatchRangeImpl("rate"), nullptr);
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
