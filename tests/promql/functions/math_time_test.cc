#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "promql/functions.h"
#include "test_util.h"

namespace gpumon::promql::testing {
namespace {

Vector In(std::initializer_list<double> values) {
  Vector v;
  int i = 0;
  for (double f : values) {
    v.push_back(Sample{Labels{{"__name__", "m"}, {"i", std::to_string(i++)}}, 0, f});
  }
  return v;
}

std::vector<double> Values(const Vector& v) {
  std::vector<double> out;
  for (const auto& s : v) out.push_back(s.f);
  return out;
}

Vector Exec(std::string_view fn, std::vector<Value> args, int64_t ts = 0) {
  Vector out;
  Status st = Invoke(fn, std::move(args), out, nullptr, ts);
  EXPECT_TRUE(st.ok()) << st.message();
  return out;
}

TEST(Math, ElementWiseDropsName) {
  Vector out = Exec("abs", {In({-2.5, 3})});
  EXPECT_EQ(Values(out), (std::vector<double>{2.5, 3}));
  EXPECT_EQ(out[0].metric, (Labels{{"i", "0"}}));
  EXPECT_EQ(Values(Exec("ceil", {In({1.2, -1.2})})), (std::vector<double>{2, -1}));
  EXPECT_EQ(Values(Exec("floor", {In({1.8, -1.2})})), (std::vector<double>{1, -2}));
  EXPECT_EQ(Values(Exec("sqrt", {In({16})})), (std::vector<double>{4}));
  EXPECT_EQ(Values(Exec("log2", {In({8})})), (std::vector<double>{3}));
  EXPECT_EQ(Values(Exec("log10", {In({1000})})), (std::vector<double>{3}));
  EXPECT_EQ(Values(Exec("ln", {In({1})})), (std::vector<double>{0}));
  EXPECT_DOUBLE_EQ(Exec("deg", {In({std::numbers::pi})})[0].f, 180);
  EXPECT_DOUBLE_EQ(Exec("rad", {In({180})})[0].f, std::numbers::pi);
  auto sgn = Values(Exec("sgn", {In({-3, 0, 7, NAN})}));
  EXPECT_EQ(sgn[0], -1);
  EXPECT_EQ(sgn[1], 0);
  EXPECT_EQ(sgn[2], 1);
  EXPECT_TRUE(std::isnan(sgn[3]));
}

TEST(Math, Round) {
  // Halves round up (towards +Inf), also for negatives.
  EXPECT_EQ(Values(Exec("round", {In({2.5, -2.5, 1.49})})), (std::vector<double>{3, -2, 1}));
  EXPECT_EQ(Values(Exec("round", {In({17, 23}), Scalar{0, 5}})), (std::vector<double>{15, 25}));
  EXPECT_DOUBLE_EQ(Exec("round", {In({1.234}), Scalar{0, 0.1}})[0].f, 1.2);
}

TEST(Math, Clamp) {
  EXPECT_EQ(Values(Exec("clamp", {In({-5, 5, 50}), Scalar{0, 0}, Scalar{0, 10}})),
            (std::vector<double>{0, 5, 10}));
  // min > max: nothing.
  EXPECT_TRUE(Exec("clamp", {In({1}), Scalar{0, 10}, Scalar{0, 0}}).empty());
  EXPECT_EQ(Values(Exec("clamp_min", {In({-5, 5}), Scalar{0, 0}})), (std::vector<double>{0, 5}));
  EXPECT_EQ(Values(Exec("clamp_max", {In({-5, 5}), Scalar{0, 0}})), (std::vector<double>{-5, 0}));
  EXPECT_TRUE(std::isnan(Exec("clamp", {In({NAN}), Scalar{0, 0}, Scalar{0, 1}})[0].f));
}

TEST(Math, ScalarFunctions) {
  EXPECT_DOUBLE_EQ(Exec("pi", {})[0].f, std::numbers::pi);
  EXPECT_EQ(Exec("max_of", {Scalar{0, 1}, Scalar{0, 2}})[0].f, 2);
  EXPECT_EQ(Exec("min_of", {Scalar{0, 1}, Scalar{0, 2}})[0].f, 1);
  EXPECT_TRUE(std::isnan(Exec("max_of", {Scalar{0, NAN}, Scalar{0, 2}})[0].f));
}

TEST(Time, TimeVectorScalarTimestamp) {
  EXPECT_EQ(Exec("time", {}, 1)[0].f, 0.001);
  Vector v = Exec("vector", {Scalar{0, 7}});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_TRUE(v[0].metric.empty());
  EXPECT_EQ(v[0].f, 7);
  EXPECT_EQ(Exec("scalar", {In({4})})[0].f, 4);
  EXPECT_TRUE(std::isnan(Exec("scalar", {In({4, 5})})[0].f));
  EXPECT_TRUE(std::isnan(Exec("scalar", {Vector{}})[0].f));
  Vector in = In({1});
  in[0].t = 12345;
  Vector ts = Exec("timestamp", {in}, 99999);
  EXPECT_EQ(ts[0].f, 12.345);
  EXPECT_EQ(ts[0].metric, (Labels{{"i", "0"}}));
}

// Expectations from functions.test.
TEST(Time, CalendarFunctions) {
  auto at = [](std::string_view fn, double unix) { return Exec(fn, {In({unix})})[0].f; };
  EXPECT_EQ(Exec("year", {}, 0)[0].f, 1970);
  EXPECT_EQ(Exec("day_of_week", {}, 0)[0].f, 4);  // Thursday
  EXPECT_EQ(at("year", 1136239445), 2006);
  EXPECT_EQ(at("month", 1136239445), 1);
  EXPECT_EQ(at("day_of_month", 1136239445), 2);
  EXPECT_EQ(at("day_of_year", 1136239445), 2);
  EXPECT_EQ(at("day_of_week", 1136239445), 1);
  EXPECT_EQ(at("hour", 1136239445), 22);
  EXPECT_EQ(at("minute", 1136239445), 4);
  EXPECT_EQ(at("year", 1230767999), 2008);
  EXPECT_EQ(at("year", 1230768000), 2009);
  EXPECT_EQ(at("month", 1456790399), 2);
  EXPECT_EQ(at("day_of_month", 1456790399), 29);
  EXPECT_EQ(at("month", 1456790400), 3);
  EXPECT_EQ(at("day_of_year", 1483191420), 366);
  EXPECT_EQ(at("day_of_year", 1672493820), 365);
  EXPECT_EQ(at("days_in_month", 1454284800), 29);
  EXPECT_EQ(at("days_in_month", 1485907200), 28);
  // Before the epoch: 1969-12-31 23:59:59, a Wednesday.
  EXPECT_EQ(at("year", -1), 1969);
  EXPECT_EQ(at("day_of_week", -1), 3);
  EXPECT_EQ(at("hour", -1), 23);
  Vector out = Exec("hour", {In({0})});
  EXPECT_EQ(out[0].metric, (Labels{{"i", "0"}}));
}

}  // namespace
}  // namespace gpumon::promql::testing
