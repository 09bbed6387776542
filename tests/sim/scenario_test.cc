#include "sim/scenario.h"

#include <gtest/gtest.h>

namespace gpumon::sim {
namespace {

FleetSpec Spec(const char* text) {
  Result<FleetSpec> spec = ParseFleetSpec(text);
  EXPECT_TRUE(spec.ok()) << spec.status().message();
  return spec.ok() ? spec.value() : FleetSpec{};
}

Result<std::vector<Scenario>> Parse(const std::string& text, const char* spec = "h200x16",
                                    uint64_t seed = 1, int node_size = 8) {
  static FleetSpec s;
  s = Spec(spec);
  return ParseScenarios(text, ScenarioContext{&s, node_size, seed});
}

// The error for `text`, or "" when it parses.
std::string Error(const std::string& text, const char* spec = "h200x16") {
  auto r = Parse(text, spec);
  return r.ok() ? "" : r.status().message();
}

TEST(ScenarioTest, ParsesNamesKeysAndTargets) {
  auto r = Parse("training; thermal-runaway:gpu=3:start=20m:time=30m ;;fall-off-bus:node=1:gpu=2");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 3u);
  const Scenario& training = (*r)[0];
  EXPECT_EQ(training.name(), "training");
  EXPECT_EQ(training.gpus.size(), 16u);  // every GPU by default
  EXPECT_EQ(training.start_ms, 0);
  const Scenario& runaway = (*r)[1];
  EXPECT_EQ(runaway.index, 1);
  EXPECT_EQ(runaway.text, "thermal-runaway:gpu=3:start=20m:time=30m");
  EXPECT_EQ(runaway.gpus, std::vector<int>{3});
  EXPECT_EQ(runaway.start_ms, 20 * 60000);
  EXPECT_EQ(runaway.GetMs("time"), 30 * 60000);
  EXPECT_TRUE(runaway.Given("time"));
  EXPECT_FALSE(runaway.Given("hold"));
  EXPECT_EQ(runaway.GetText("workload"), "training");
  // node=1:gpu=2 is fleet-wide GPU 10 with 8 GPUs per node.
  EXPECT_EQ((*r)[2].gpus, std::vector<int>{10});
  EXPECT_EQ((*r)[2].index, 2);
}

TEST(ScenarioTest, TargetListsRangesAndNodes) {
  auto r = Parse("power-brake:gpus=0-2,5,7-8;cooling-loss:nodes=1;ecc-storm:node=0-1:gpu=7");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)[0].gpus, (std::vector<int>{0, 1, 2, 5, 7, 8}));
  std::vector<int> node1;
  for (int g = 8; g < 16; ++g) node1.push_back(g);
  EXPECT_EQ((*r)[1].gpus, node1);
  EXPECT_EQ((*r)[2].gpus, (std::vector<int>{7, 15}));
  // Another node size moves the same text to other GPUs.
  auto small = Parse("fall-off-bus:node=3:gpu=1", "h200x16", 1, 4);
  ASSERT_TRUE(small.ok()) << small.status().message();
  EXPECT_EQ((*small)[0].gpus, std::vector<int>{13});
}

TEST(ScenarioTest, DefaultsAreDrawnFromTheSeedWithinTheirRanges) {
  const std::string text = "thermal-runaway;ecc-storm;nvlink-flap;cooling-loss;training";
  auto a = Parse(text, "h200x32", 7);
  auto b = Parse(text, "h200x32", 7);
  ASSERT_TRUE(a.ok() && b.ok());
  int differ = 0;
  for (uint64_t seed = 8; seed < 28; ++seed) {
    auto c = Parse(text, "h200x32", seed);
    ASSERT_TRUE(c.ok());
    for (size_t i = 0; i < a->size(); ++i) {
      EXPECT_EQ((*a)[i].gpus, (*b)[i].gpus);
      for (size_t k = 0; k < (*a)[i].params.size(); ++k) {
        EXPECT_EQ((*a)[i].params[k].value, (*b)[i].params[k].value);
        differ += (*a)[i].params[k].value != (*c)[i].params[k].value;
      }
      differ += (*a)[i].gpus != (*c)[i].gpus;
    }
    const Scenario& r = (*c)[0];
    EXPECT_EQ(r.gpus.size(), 1u);
    EXPECT_GE(r.GetMs("time"), 15 * 60000);
    EXPECT_LE(r.GetMs("time"), 55 * 60000);
    EXPECT_GE(r.Get("die"), 0.3);
    EXPECT_LE(r.Get("die"), 0.6);
    EXPECT_GE((*c)[1].Get("rate"), 600);
    EXPECT_LE((*c)[1].Get("rate"), 3000);
    EXPECT_LT((*c)[2].Get("link"), 18);
    // A rack of 2-4 consecutive nodes.
    const auto& cool = (*c)[3].gpus;
    EXPECT_TRUE(cool.size() == 16u || cool.size() == 24u || cool.size() == 32u) << cool.size();
    EXPECT_EQ(cool.front() % 8, 0);
    EXPECT_EQ(cool.back() - cool.front() + 1, static_cast<int>(cool.size()));
    EXPECT_GE((*c)[4].Get("util"), 0.94);
    EXPECT_LE((*c)[4].Get("util"), 0.99);
  }
  EXPECT_GT(differ, 100);
}

TEST(ScenarioTest, GivingOneKeyLeavesTheOtherDrawsAlone) {
  auto a = Parse("thermal-runaway:gpu=2", "h200x8", 5);
  auto b = Parse("thermal-runaway:gpu=2:time=40m", "h200x8", 5);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ((*b)[0].GetMs("time"), 40 * 60000);
  EXPECT_EQ((*a)[0].Get("die"), (*b)[0].Get("die"));
  EXPECT_EQ((*a)[0].GetMs("hold"), (*b)[0].GetMs("hold"));
}

TEST(ScenarioTest, DefaultTargetsOnlyEligibleGpus) {
  // Only the H200s have HBM sensors, ECC and NVLink.
  for (uint64_t seed = 1; seed < 30; ++seed) {
    auto r = Parse("thermal-runaway;ecc-storm;nvlink-flap", "rtx4080sx3,h200x2", seed);
    ASSERT_TRUE(r.ok()) << r.status().message();
    for (const Scenario& s : *r) {
      ASSERT_EQ(s.gpus.size(), 1u);
      EXPECT_GE(s.gpus[0], 3) << s.text;
    }
  }
  EXPECT_NE(Error("ecc-storm", "rtx4080sx2").find("no GPU of the fleet can have it"),
            std::string::npos);
}

TEST(ScenarioTest, PcieDefaultsDropWidthOrGeneration) {
  int width = 0, gen = 0;
  for (uint64_t seed = 1; seed < 40; ++seed) {
    auto r = Parse("pcie-degrade:gpu=0", "h200x1", seed);
    ASSERT_TRUE(r.ok());
    const Scenario& s = (*r)[0];
    EXPECT_TRUE((s.Get("width") == 8) != (s.Get("gen") == 4)) << seed;
    width += s.Get("width") == 8;
    gen += s.Get("gen") == 4;
  }
  EXPECT_GT(width, 5);
  EXPECT_GT(gen, 5);
}

TEST(ScenarioTest, ErrorsQuoteTheItemAndSayWhatIsExpected) {
  struct Case {
    std::string text;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"training;meltdown:gpu=1",
       "scenario \"meltdown:gpu=1\": unknown scenario \"meltdown\" (use "
       "training, inference, thermal-runaway"},
      {"training:speed=3",
       "scenario \"training:speed=3\": unknown key \"speed\" for training (use "
       "gpu, gpus, node, nodes, start, duration, util, checkpoint, pause)"},
      {"training:util", "expected key=value, got \"util\""},
      {"training:util=high", "util \"high\" is not a number"},
      {"training:util=2", "util \"2\" out of range (0.05..1)"},
      {"thermal-runaway:gpu=16", "gpu 16 out of range (16 available)"},
      {"thermal-runaway:gpu=x", "gpu \"x\" is not an index, a range a-b or a list of them"},
      {"thermal-runaway:gpu=1:gpus=2", "gpu given twice"},
      {"thermal-runaway:gpu=1:time=5", "time: "},
      {"thermal-runaway:gpu=1:time=10s", "time \"10s\" out of range (1m..1w)"},
      {"thermal-runaway:gpu=1:workload=gaming",
       "workload \"gaming\" must be one of "
       "training|inference|mix"},
      {"thermal-runaway:gpu=1:start=soon", "start: "},
      {"thermal-runaway:gpu=1:hold=1m:hold=2m", "hold given twice"},
      {"fall-off-bus:node=2", "node 2 out of range (2 available)"},
      {"fall-off-bus:node=1:gpu=8", "a node has 8 GPUs"},
      {"nvlink-flap:gpu=1:link=18", "link \"18\" out of range"},
      {"nvlink-flap:gpu=1:count=-1", "count \"-1\" is not a non-negative integer"},
      {"pcie-degrade:gpu=1:width=16", "width 16 must be 1, 2, 4, ... below the GPUs' x16"},
      {"pcie-degrade:gpu=1:width=6", "width 6 must be"},
      {"pcie-degrade:gpu=1:gen=5", "gen 5 must be 1..4 (below the GPUs' Gen5)"},
      {"training:checkpoint=1m:pause=2m", "checkpoint must be 0 or longer than pause"},
      {"power-brake:gpu=1:duration=1m:every=30s", "every must be 0 or longer"},
      {"thermal-runaway:gpu=2;thermal-runaway:gpus=1-3",
       "scenario \"thermal-runaway:gpus=1-3\": GPU 2 already has thermal-runaway from "
       "\"thermal-runaway:gpu=2\""},
  };
  for (const Case& c : cases) {
    const std::string e = Error(c.text);
    EXPECT_NE(e.find(c.want), std::string::npos) << c.text << " -> " << e;
  }
  // The bad item is quoted.
  EXPECT_NE(Error("training;inference:util=7").find("scenario \"inference:util=7\""),
            std::string::npos);
  // Capabilities are checked per GPU.
  EXPECT_NE(Error("ecc-storm:gpu=1", "h200x1,rtx4080sx1").find("GPU 1 (rtx4080s) has no ECC"),
            std::string::npos);
  EXPECT_NE(Error("thermal-runaway:gpu=0", "l40sx1").find("has no HBM temperature sensor"),
            std::string::npos);
  EXPECT_NE(Error("nvlink-flap:gpu=0", "l40sx1").find("has no NVLink"), std::string::npos);
  // Several nvlink flaps and power brakes on one GPU are fine; an empty list is none.
  EXPECT_EQ(Error("nvlink-flap:gpu=1:link=2;nvlink-flap:gpu=1:link=3;power-brake:gpu=1;"
                  "power-brake:gpu=1:start=1h"),
            "");
  auto empty = Parse(" ; ");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(ScenarioTest, ZeroDurationsNeedNoUnit) {
  auto r = Parse("training:duration=0:checkpoint=0:start=0;power-brake:gpu=1:duration=0");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)[0].GetMs("checkpoint"), 0);
  EXPECT_EQ((*r)[1].GetMs("duration"), 0);
}

}  // namespace
}  // namespace gpumon::sim
