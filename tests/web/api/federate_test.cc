// /federate over an in-memory head, against Prometheus's federation
// semantics (web/federate.go and the text exposition format).
#include "web/api/federate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tsdb/head/head.h"
#include "tsdb/head/head_appender.h"
#include "tsdb/sample.h"

namespace gpumon::web::api {
namespace {

constexpr int64_t kNow = 3600 * 1000;

class FederateTest : public ::testing::Test {
 protected:
  void Add(const Labels& l, int64_t t, double v) {
    auto app = head_.Appender();
    ASSERT_TRUE(app->Append(0, l, t, v).ok());
    ASSERT_TRUE(app->Commit().ok());
  }
  FederateReply Get(std::vector<std::string> matches, Labels external = {}) {
    Federate f(backend_, std::move(external), [] { return kNow; });
    Params p;
    for (auto& m : matches) p.Add("match[]", m);
    return f.Handle(p);
  }

  tsdb::head::Head head_;
  promql::Engine engine_;
  StorageBackend backend_{[this](int64_t mint, int64_t maxt) { return head_.Querier(mint, maxt); },
                          engine_, nullptr};
};

TEST_F(FederateTest, NewestSampleWithinLookbackGroupedByName) {
  Labels t0{{"__name__", "gpu_temp"}, {"gpu", "0"}, {"job", "dcgm"}};
  Labels t1{{"__name__", "gpu_temp"}, {"gpu", "1"}, {"job", "dcgm"}};
  Labels up{{"__name__", "up"}, {"job", "dcgm"}};
  Labels old{{"__name__", "gpu_temp"}, {"gpu", "2"}, {"job", "dcgm"}};
  Labels stale{{"__name__", "gpu_temp"}, {"gpu", "3"}, {"job", "dcgm"}};
  Add(t0, kNow - 60000, 60);
  Add(t0, kNow - 30000, 61.5);
  Add(t1, kNow - 290000, 70);   // 4m50s old: inside the 5m lookback
  Add(old, kNow - 310000, 80);  // 5m10s old: outside
  Add(stale, kNow - 60000, 90);
  Add(stale, kNow - 30000, tsdb::StaleNaN());  // the series ended
  Add(up, kNow - 15000, 1);
  Add(up, kNow + 15000, 0);  // after "now": not seen

  auto r = Get({"{job=\"dcgm\"}"});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(r.body,
            "# TYPE gpu_temp untyped\n"
            "gpu_temp{gpu=\"0\",job=\"dcgm\",instance=\"\"} 61.5 3570000\n"
            "gpu_temp{gpu=\"1\",job=\"dcgm\",instance=\"\"} 70 3310000\n"
            "# TYPE up untyped\n"
            "up{job=\"dcgm\",instance=\"\"} 1 3585000\n");
}

TEST_F(FederateTest, ExternalLabelsAddedUnlessPresent) {
  Add(Labels{{"__name__", "up"}, {"instance", "n1:9400"}, {"cluster", "own"}}, kNow - 1000, 1);
  Add(Labels{{"__name__", "up"}, {"instance", "n2:9400"}}, kNow - 1000, 0);
  auto r = Get({"up"}, Labels{{"cluster", "c1"}, {"dc", "east"}});
  EXPECT_EQ(r.body,
            "# TYPE up untyped\n"
            "up{cluster=\"own\",instance=\"n1:9400\",dc=\"east\"} 1 3599000\n"
            "up{instance=\"n2:9400\",cluster=\"c1\",dc=\"east\"} 0 3599000\n");
}

TEST_F(FederateTest, SeriesMatchedTwiceAppearsOnceAndValuesAsGoFormatsThem) {
  Add(Labels{{"__name__", "a"}, {"k", "1"}}, kNow, 1234567);
  Add(Labels{{"__name__", "a"}, {"k", "2"}}, kNow, 0.00001);
  Add(Labels{{"__name__", "a"}, {"k", "3"}}, kNow, -0.25);
  Add(Labels{{"__name__", "a"}, {"k", "4"}}, kNow, 123456);
  Add(Labels{{"__name__", "a"}, {"k", "5"}}, kNow, 1e21);
  auto r = Get({"a", "{k=~\"1|2|3|4|5\"}"}, Labels{{"instance", "fed"}});
  EXPECT_EQ(r.body,
            "# TYPE a untyped\n"
            "a{k=\"1\",instance=\"fed\"} 1.234567e+06 3600000\n"
            "a{k=\"2\",instance=\"fed\"} 1e-05 3600000\n"
            "a{k=\"3\",instance=\"fed\"} -0.25 3600000\n"
            "a{k=\"4\",instance=\"fed\"} 123456 3600000\n"
            "a{k=\"5\",instance=\"fed\"} 1e+21 3600000\n");
}

TEST_F(FederateTest, EscapesLabelValues) {
  Add(Labels{{"__name__", "x"}, {"path", "a\\b\"c\nd"}}, kNow, 1);
  EXPECT_EQ(Get({"x"}).body,
            "# TYPE x untyped\n"
            "x{path=\"a\\\\b\\\"c\\nd\",instance=\"\"} 1 3600000\n");
}

TEST_F(FederateTest, BadOrMissingMatch) {
  Add(Labels{{"__name__", "up"}}, kNow, 1);
  auto r = Get({"up{"});
  EXPECT_EQ(r.status, 400);
  EXPECT_FALSE(r.body.empty());
  // Prometheus answers an empty exposition when no match[] is given.
  r = Get({});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "");
}

TEST(GoFloatTest, MatchesStrconvG) {
  auto f = [](double v) {
    std::string s;
    AppendGoFloat(v, &s);
    return s;
  };
  EXPECT_EQ(f(0), "0");
  EXPECT_EQ(f(1), "1");
  EXPECT_EQ(f(0.1), "0.1");
  EXPECT_EQ(f(0.0001), "0.0001");
  EXPECT_EQ(f(0.00001), "1e-05");
  EXPECT_EQ(f(999999), "999999");
  EXPECT_EQ(f(1000000), "1e+06");
  EXPECT_EQ(f(1.5e300), "1.5e+300");
  EXPECT_EQ(f(-2.5e-7), "-2.5e-07");
  EXPECT_EQ(f(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(f(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(f(std::nan("")), "NaN");
}

}  // namespace
}  // namespace gpumon::web::api
