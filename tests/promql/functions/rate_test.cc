#include <gtest/gtest.h>

#include "promql/functions.h"
#include "test_util.h"

namespace gpumon::promql::testing {
namespace {

Labels Req(const char* path) { return Labels{{"__name__", "http_requests_total"}, {"path", path}}; }

// Data and expectations of Prometheus's functions.test increase() cases.
TEST(Rate, IncreaseWithinSeries) {
  Series foo = Load(Req("/foo"), 5 * kMinute, Seq(0, 10, 10));
  // (0, 50m] drops the t=0 sample: 90 over 45m, extrapolated by one step
  // to the start (the zero point lies exactly there).
  EXPECT_DOUBLE_EQ(OneValue(CallRange("increase", foo, 50 * kMinute, 50 * kMinute)), 100);
}

TEST(Rate, IncreaseExtrapolationAndZeroClamp) {
  const int64_t ts = 50 * kMinute, range = 100 * kMinute;
  Series bar = Load(Req("/bar"), 5 * kMinute, Concat(Seq(0, 18, 5), Seq(0, 18, 5)));
  Series dings = Load(Req("/dings"), 5 * kMinute, Seq(10, 10, 10));
  Series bumms = Load(Req("/bumms"), 5 * kMinute, Seq(1, 10, 10));
  // bar resets once (90 → 0) and starts at 0: no extrapolation to the left.
  EXPECT_DOUBLE_EQ(OneValue(CallRange("increase", bar, ts, range)), 162);
  // Far from the window start: extrapolate half a step (150s).
  EXPECT_DOUBLE_EQ(OneValue(CallRange("increase", dings, ts, range)), 105);
  // Zero would be reached 30s before the first sample: stop there.
  EXPECT_DOUBLE_EQ(OneValue(CallRange("increase", bumms, ts, range)), 101);
}

TEST(Rate, RateIsIncreasePerSecond) {
  Series foo = Load(Req("/foo"), 5 * kMinute, Seq(0, 10, 10));
  Vector out = CallRange("rate", foo, 50 * kMinute, 50 * kMinute);
  EXPECT_DOUBLE_EQ(OneValue(out), 100.0 / 3000);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].metric, (Labels{{"path", "/foo"}}));  // name dropped
  EXPECT_EQ(out[0].t, 50 * kMinute);
}

TEST(Rate, NeedsTwoPoints) {
  Series s = Load(Req("/x"), 5 * kMinute, {1, 2});
  EXPECT_TRUE(CallRange("rate", s, 5 * kMinute, 5 * kMinute).empty());
  EXPECT_TRUE(CallRange("delta", s, 5 * kMinute, 5 * kMinute).empty());
  EXPECT_TRUE(CallRange("irate", s, 5 * kMinute, 5 * kMinute).empty());
}

TEST(Rate, NonCounterNameGetsInfo) {
  Series s = Load(Labels{{"__name__", "foo"}}, kMinute, Seq(0, 1, 5));
  Annotations ann;
  CallRange("rate", s, 5 * kMinute, 5 * kMinute, {}, {}, &ann);
  CallRange("rate", s, 5 * kMinute, 5 * kMinute, {}, {}, &ann);
  ASSERT_EQ(ann.infos.size(), 1u);
  EXPECT_EQ(ann.infos[0],
            "PromQL info: metric might not be a counter, name does not end in "
            "_total/_sum/_count/_bucket: \"foo\"");
  Annotations none;
  CallRange("increase", Load(Req("/a"), kMinute, Seq(0, 1, 5)), 5 * kMinute, 5 * kMinute, {}, {},
            &none);
  CallRange("delta", s, 5 * kMinute, 5 * kMinute, {}, {}, &none);
  EXPECT_TRUE(none.infos.empty());
}

TEST(Rate, DeltaDoesNotClampAtZero) {
  // Gauge 10, 8, 6 at 0, 1m, 2m; window (0, 3m] holds 1m and 2m: -2 over
  // 60s. Both gaps (60s) are under 1.1 x 60s, so extrapolate to the whole
  // 180s: -2 x 180/60 = -6, below the first value (a counter would stop).
  Series s = Load(Labels{{"__name__", "g"}}, kMinute, {10, 8, 6});
  EXPECT_DOUBLE_EQ(OneValue(CallRange("delta", s, 3 * kMinute, 3 * kMinute)), -6);
}

TEST(Rate, IrateAndIdelta) {
  Series s = Load(Req("/x"), 10 * 1000, {1, 5, 3});
  // Last two points 5 → 3 in 10s: a counter reset, so the increase is 3.
  EXPECT_DOUBLE_EQ(OneValue(CallRange("irate", s, 20000, 60000)), 0.3);
  EXPECT_DOUBLE_EQ(OneValue(CallRange("idelta", s, 20000, 60000)), -2);
  Series up = Load(Req("/x"), 10 * 1000, {1, 5, 9});
  EXPECT_DOUBLE_EQ(OneValue(CallRange("irate", up, 20000, 60000)), 0.4);
}

}  // namespace
}  // namespace gpumon::promql::testing
