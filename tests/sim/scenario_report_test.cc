#include "sim/scenario_report.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <atomic>
#include <set>

namespace gpumon::sim {
namespace {

constexpr int64_t kMinute = 60 * 1000;

TEST(ScenarioReportTest, GroundTruthJsonIsCompleteAndMatchesTheModel) {
  auto ms = std::make_shared<std::atomic<int64_t>>(0);
  FleetOptions o;
  o.spec = "h200x4";
  o.seed = 42;
  o.scenarios =
      "training;thermal-runaway:gpu=3:start=5m:time=15m:hold=3m;fall-off-bus:gpu=0:start=1h";
  o.faults = "xid:gpu=1:code=13:at=10m";
  o.clock_ms = [ms] { return ms->load(); };
  auto fleet = SimulatedFleet::Create(std::move(o));
  ASSERT_TRUE(fleet.ok()) << fleet.status().message();
  SimulatedFleet& f = **fleet;

  ms->store(30 * kMinute);
  rapidjson::Document early;
  early.Parse(GroundTruthJson(f, "virtual").c_str());
  ASSERT_FALSE(early.HasParseError());
  ms->store(2 * 60 * kMinute);
  const std::string json = GroundTruthJson(f, "virtual");
  rapidjson::Document d;
  d.Parse(json.c_str());
  ASSERT_FALSE(d.HasParseError()) << json;
  EXPECT_STREQ(d["format"].GetString(), "gpumon-ground-truth/1");
  EXPECT_EQ(d["seed"].GetUint64(), 42u);
  EXPECT_STREQ(d["spec"].GetString(), "h200x4");
  EXPECT_STREQ(d["clock"].GetString(), "virtual");
  EXPECT_EQ(d["gpus"].GetInt(), 4);
  EXPECT_EQ(d["now_ms"].GetInt64(), 120 * kMinute);

  const auto& scenarios = d["scenarios"].GetArray();
  ASSERT_EQ(scenarios.Size(), 3u);
  EXPECT_STREQ(scenarios[1]["name"].GetString(), "thermal-runaway");
  EXPECT_STREQ(scenarios[1]["text"].GetString(), "thermal-runaway:gpu=3:start=5m:time=15m:hold=3m");
  ASSERT_EQ(scenarios[1]["gpus"].Size(), 1u);
  EXPECT_EQ(scenarios[1]["gpus"][0].GetInt(), 3);
  EXPECT_EQ(scenarios[1]["start_ms"].GetInt64(), 5 * kMinute);
  const auto& params = scenarios[1]["params"];
  EXPECT_EQ(params["time_ms"].GetInt64(), 15 * kMinute);
  EXPECT_EQ(params["hold_ms"].GetInt64(), 3 * kMinute);
  EXPECT_GE(params["die"].GetDouble(), 0.3);  // drawn
  EXPECT_STREQ(params["workload"].GetString(), "training");
  EXPECT_EQ(scenarios[0]["gpus"].Size(), 4u);
  EXPECT_TRUE(scenarios[0]["params"].HasMember("checkpoint_ms"));

  // Every record of every GPU is there, in time order, with its uuid.
  size_t records = 0;
  std::vector<std::string> uuids;
  for (int i = 0; i < 4; ++i) {
    f.WithGpu(i, [&](SimulatedGpu& g) {
      records += g.truth().size();
      uuids.push_back(g.uuid());
    });
  }
  const auto& events = d["events"].GetArray();
  ASSERT_EQ(events.Size(), records);
  int64_t last = -1;
  std::set<std::string> seen;
  for (const auto& e : events) {
    const int gpu = e["gpu"].GetInt();
    EXPECT_EQ(e["uuid"].GetString(), uuids[static_cast<size_t>(gpu)]);
    EXPECT_EQ(e["node"].GetInt(), gpu / 8);
    EXPECT_GE(e["t_ms"].GetInt64(), last);
    EXPECT_LE(e["t_ms"].GetInt64(), 120 * kMinute);
    last = e["t_ms"].GetInt64();
    const std::string name = e["event"].GetString();
    seen.insert(std::to_string(gpu) + ":" + name);
    if (gpu == 3) {
      ASSERT_TRUE(e.HasMember("scenario")) << name;
      EXPECT_STREQ(e["scenario"].GetString(), "thermal-runaway");
      EXPECT_EQ(e["scenario_index"].GetInt(), 1);
    }
    if (name == "xid" || name == "first_xid") {
      EXPECT_TRUE(e.HasMember("xid"));
    }
    if (gpu == 1) {
      EXPECT_FALSE(e.HasMember("scenario")) << "a plain fault has no scenario";
    }
  }
  for (const char* want :
       {"3:degradation_start", "3:first_memory_slowdown", "3:first_thermal_slowdown",
        "3:first_hw_slowdown", "3:first_xid", "3:uncorrectable_ecc", "0:degradation_start",
        "0:gpu_lost", "0:first_xid", "1:first_xid"}) {
    EXPECT_TRUE(seen.count(want)) << want << " missing from " << json;
  }
  // Nothing that had not happened yet at 30 min (the fall-off is at 1 h).
  for (const auto& e : early["events"].GetArray()) {
    EXPECT_LE(e["t_ms"].GetInt64(), 30 * kMinute);
    EXPECT_STRNE(e["event"].GetString(), "gpu_lost");
  }
}

}  // namespace
}  // namespace gpumon::sim
