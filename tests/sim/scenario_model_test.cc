// Each scenario's signature in the model, through a fleet on a manual clock.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>

#include "sim/fleet.h"

namespace gpumon::sim {
namespace {

constexpr int64_t kSecond = 1000;
constexpr int64_t kMinute = 60 * kSecond;
constexpr int64_t kHour = 60 * kMinute;

struct SimRun {
  std::shared_ptr<std::atomic<int64_t>> ms = std::make_shared<std::atomic<int64_t>>(0);
  std::unique_ptr<SimulatedFleet> fleet;
  uint64_t cursor = 0;

  SimRun(const std::string& spec, const std::string& scenarios, uint64_t seed = 1,
         const std::string& faults = "", int node_size = 8) {
    FleetOptions o;
    o.spec = spec;
    o.seed = seed;
    o.scenarios = scenarios;
    o.faults = faults;
    o.node_size = node_size;
    auto p = ms;
    o.clock_ms = [p] { return p->load(); };
    auto f = SimulatedFleet::Create(std::move(o));
    EXPECT_TRUE(f.ok()) << f.status().message();
    if (f.ok()) fleet = std::move(f).value();
  }
  void At(int64_t t) { ms->store(t); }
  template <typename Fn>
  decltype(auto) Gpu(int i, Fn&& fn) {
    return fleet->WithGpu(i, std::forward<Fn>(fn));
  }
  // Every XID logged since the last call.
  std::vector<XidEvent> Xids() {
    std::vector<XidEvent> out;
    XidEvent e;
    while (fleet->WaitForEvent(
        &cursor, [](const XidEvent&, uint64_t) { return true; }, std::chrono::milliseconds(0),
        &e)) {
      out.push_back(e);
    }
    return out;
  }
  // Ground-truth time of `event` on GPU i, or -1.
  int64_t Truth(int i, TruthEvent event) {
    return Gpu(i, [&](SimulatedGpu& g) -> int64_t {
      for (const TruthRecord& r : g.truth()) {
        if (r.event == event) return r.t_ms;
      }
      return -1;
    });
  }
};

struct Observed {
  int64_t mem_limit = -1, sw = -1, hw = -1, xid = -1;
};

// Walks GPU `gpu` in 100 ms steps and notes when it first showed each phase
// of a thermal runaway.
Observed WalkRunaway(SimRun& run, int gpu, int64_t until) {
  Observed o;
  const double limit = run.fleet->profile(gpu).memory_max_operating_temp_c;
  for (int64_t t = 100; t <= until && o.xid < 0; t += 100) {
    run.At(t);
    run.Gpu(gpu, [&](SimulatedGpu& g) {
      if (o.mem_limit < 0 && g.memory_temperature() >= limit) o.mem_limit = t;
      const uint64_t r = g.clocks_event_reasons();
      if (o.sw < 0 && (r & (kReasonSwThermalSlowdown | kReasonHwThermalSlowdown))) o.sw = t;
      if (o.hw < 0 && (r & kReasonHwSlowdown)) o.hw = t;
    });
    for (const XidEvent& e : run.Xids()) {
      if (e.gpu == gpu && o.xid < 0) o.xid = e.t_ms;
    }
  }
  return o;
}

TEST(ScenarioModelTest, ThermalRunawayClimbsThrottlesThenFails) {
  SimRun run("h200x2", "thermal-runaway:gpu=1:start=10m:time=20m:hold=4m");
  const Observed o = WalkRunaway(run, 1, 4 * kHour);
  // HBM reaches its limit about `time` after the start (plus its lag and
  // the load's dips), then SW slowdown, HW slowdown, and the XID, in order.
  ASSERT_GT(o.mem_limit, 0);
  EXPECT_GE(o.mem_limit, 10 * kMinute + 18 * kMinute);
  EXPECT_LE(o.mem_limit, 10 * kMinute + 30 * kMinute);
  ASSERT_GT(o.sw, 0);
  ASSERT_GT(o.hw, 0);
  ASSERT_GT(o.xid, 0);
  // The reason follows the sensor by one step.
  EXPECT_EQ(o.sw, o.mem_limit + 100);
  EXPECT_GT(o.hw, o.sw);
  EXPECT_GE(o.xid, o.hw + 4 * kMinute);
  // Ground truth says exactly what the model did.
  EXPECT_EQ(run.Truth(1, TruthEvent::kDegradationStart), 10 * kMinute);
  EXPECT_EQ(run.Truth(1, TruthEvent::kFirstMemorySlowdown), o.sw);
  EXPECT_EQ(run.Truth(1, TruthEvent::kFirstThermalSlowdown), o.sw);
  EXPECT_EQ(run.Truth(1, TruthEvent::kFirstHwSlowdown), o.hw);
  EXPECT_EQ(run.Truth(1, TruthEvent::kFirstXid), o.xid);
  EXPECT_EQ(run.Truth(1, TruthEvent::kUncorrectableEcc), o.xid);
  run.Gpu(1, [](SimulatedGpu& g) {
    EXPECT_EQ(g.ecc_errors(true, false), 1u);
    EXPECT_TRUE(g.remapped_rows().pending);
    // Corrected errors climbed while the HBM was hot.
    EXPECT_GT(g.ecc_errors(false, false), 10u);
  });
  // The healthy neighbour never got near a limit.
  run.Gpu(0, [](SimulatedGpu& g) {
    EXPECT_TRUE(g.truth().empty());
    EXPECT_LT(g.memory_temperature(), 70);
  });
}

TEST(ScenarioModelTest, ThermalRunawayDefaultsReachTheLimitIn20To60Minutes) {
  int64_t earliest = kHour * 10, latest = 0;
  std::map<int64_t, int> distinct;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SimRun run("h200x1", "thermal-runaway", seed);
    Observed o;
    for (int64_t t = 10 * kSecond; t <= 2 * kHour && o.sw < 0; t += 10 * kSecond) {
      run.At(t);
      run.Gpu(0, [&](SimulatedGpu& g) {
        if (g.clocks_event_reasons() & kReasonSwThermalSlowdown) o.sw = t;
      });
    }
    ASSERT_GT(o.sw, 0) << "seed " << seed;
    const int64_t truth = run.Truth(0, TruthEvent::kFirstMemorySlowdown);
    // The reason can come and go while the HBM hovers at its limit.
    EXPECT_LE(truth, o.sw);
    EXPECT_GT(truth, o.sw - 5 * kMinute);
    earliest = std::min(earliest, truth);
    latest = std::max(latest, truth);
    ++distinct[truth / kMinute];
  }
  EXPECT_GE(earliest, 18 * kMinute);
  EXPECT_LE(latest, 70 * kMinute);
  EXPECT_GT(distinct.size(), 4u);  // seeds give different rates
}

TEST(ScenarioModelTest, SameSeedSameRunDifferentSeedDifferentRun) {
  const std::string scenarios = "training;thermal-runaway:gpu=2;ecc-storm:gpu=0;nvlink-flap:gpu=1";
  SimRun a("h200x4", scenarios, 11), b("h200x4", scenarios, 11), c("h200x4", scenarios, 12);
  int differ = 0;
  for (int64_t t = 0; t <= 90 * kMinute; t += 15 * kSecond) {
    a.At(t);
    b.At(t);
    c.At(t);
    for (int i = 0; i < 4; ++i) {
      auto take = [](SimulatedGpu& g) {
        return std::make_tuple(g.memory_temperature(), g.die_temperature(), g.power_mw(),
                               g.clocks_event_reasons(), g.ecc_errors(false, false),
                               g.nvlink_errors(0, NvLinkError::kReplay), g.utilization_gpu_pct());
      };
      const auto va = a.Gpu(i, take);
      ASSERT_EQ(va, b.Gpu(i, take)) << "GPU " << i << " at " << t;
      differ += va != c.Gpu(i, take);
    }
  }
  EXPECT_GT(differ, 1000);
  for (int i = 0; i < 4; ++i) {
    auto truth = [](SimulatedGpu& g) {
      std::vector<std::pair<int, int64_t>> out;
      for (const auto& r : g.truth()) out.emplace_back(static_cast<int>(r.event), r.t_ms);
      return out;
    };
    EXPECT_EQ(a.Gpu(i, truth), b.Gpu(i, truth));
  }
}

TEST(ScenarioModelTest, TrainingRunsHighWithSynchronisedCheckpointDips) {
  SimRun run("h200x3", "training:checkpoint=15m:pause=1m");
  int busy = 0, samples = 0, dips = 0;
  std::vector<int64_t> dip_starts;
  bool in_dip = false;
  for (int64_t t = 5 * kSecond; t <= 3 * kHour; t += 5 * kSecond) {
    run.At(t);
    std::vector<unsigned> util;
    for (int i = 0; i < 3; ++i) {
      util.push_back(run.Gpu(i, [](SimulatedGpu& g) { return g.utilization_gpu_pct(); }));
    }
    ++samples;
    busy += util[0] >= 90;
    // Dips: every GPU of the job at once (or a GPU between jobs).
    const int low = static_cast<int>(
        std::count_if(util.begin(), util.end(), [](unsigned u) { return u < 20; }));
    if (low == 3 && !in_dip) dip_starts.push_back(t);
    in_dip = low == 3;
    dips += low == 3;
  }
  EXPECT_GT(busy, samples * 80 / 100);
  // 3 h of 15 min checkpoints: about 12 dips of about 1 min.
  EXPECT_GE(dip_starts.size(), 10u);
  EXPECT_LE(dip_starts.size(), 16u);
  int periodic = 0;
  for (size_t i = 1; i < dip_starts.size(); ++i) {
    const int64_t gap = dip_starts[i] - dip_starts[i - 1];
    periodic += std::llabs(gap - 15 * kMinute) <= 10 * kSecond;
  }
  EXPECT_GE(periodic, static_cast<int>(dip_starts.size()) - 3);
  // Healthy training GPUs stay well within their limits.
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(run.Truth(i, TruthEvent::kFirstThermalSlowdown), -1);
    EXPECT_EQ(run.Truth(i, TruthEvent::kFirstMemorySlowdown), -1);
  }
}

TEST(ScenarioModelTest, InferenceIsBursty) {
  SimRun run("h200x1", "inference:util=0.4");
  double sum = 0, sum2 = 0;
  int n = 0, idle = 0;
  for (int64_t t = kSecond; t <= 2 * kHour; t += kSecond) {
    run.At(t);
    const double u = run.Gpu(0, [](SimulatedGpu& g) { return g.utilization_gpu_pct() / 100.0; });
    sum += u;
    sum2 += u * u;
    idle += u == 0;
    ++n;
  }
  const double mean = sum / n;
  const double sd = std::sqrt(sum2 / n - mean * mean);
  EXPECT_GT(mean, 0.3);
  EXPECT_LT(mean, 0.65);
  EXPECT_GT(sd, 0.15);
  EXPECT_GT(idle, 60);  // gaps between requests
}

TEST(ScenarioModelTest, PcieDegradeDropsWidthAndGenAndReplaysClimb) {
  SimRun run("h200x2",
             "training;pcie-degrade:gpu=0:start=1m:width=4:rate=3000;"
             "pcie-degrade:gpu=1:start=1m:gen=3:rate=3000");
  run.At(50 * kSecond);
  EXPECT_EQ(run.Gpu(0, [](SimulatedGpu& g) { return g.pcie_width(); }), 16);
  const uint32_t replays0 = run.Gpu(0, [](SimulatedGpu& g) { return g.pcie_replays(); });
  run.At(kHour);
  run.Gpu(0, [&](SimulatedGpu& g) {
    EXPECT_EQ(g.pcie_width(), 4);
    EXPECT_GT(g.pcie_replays(), replays0 + 1500);
  });
  run.Gpu(1, [](SimulatedGpu& g) {
    EXPECT_EQ(g.pcie_width(), 16);
    EXPECT_LE(g.pcie_gen(), 3);
  });
  EXPECT_EQ(run.Truth(0, TruthEvent::kPcieDegraded), kMinute);
}

TEST(ScenarioModelTest, NvlinkFlapTogglesTheLinkAndRaisesXid74) {
  SimRun run("h200x1",
             "training;nvlink-flap:gpu=0:link=3:start=1m:down=10s:up=50s:count=3:rate=5000");
  std::vector<std::pair<int64_t, bool>> changes;
  bool active = true;
  uint64_t tx_while_down = 0;
  for (int64_t t = 100; t <= 5 * kMinute; t += 100) {
    run.At(t);
    run.Gpu(0, [&](SimulatedGpu& g) {
      const bool now = g.nvlink_active(3);
      EXPECT_TRUE(g.nvlink_active(2));
      if (now != active) {
        changes.emplace_back(t, now);
        if (!now) tx_while_down = g.nvlink_tx_kib(3);
      }
      if (!now) {
        EXPECT_EQ(g.nvlink_tx_kib(3), tx_while_down);  // a down link moves nothing
      }
      active = now;
    });
  }
  const std::vector<std::pair<int64_t, bool>> want = {
      {60 * kSecond, false}, {70 * kSecond, true},   {120 * kSecond, false},
      {130 * kSecond, true}, {180 * kSecond, false}, {190 * kSecond, true}};
  EXPECT_EQ(changes, want);
  std::vector<int64_t> xid74;
  for (const XidEvent& e : run.Xids()) {
    if (e.xid == 74) xid74.push_back(e.t_ms);
  }
  EXPECT_EQ(xid74, (std::vector<int64_t>{60 * kSecond, 120 * kSecond, 180 * kSecond}));
  run.Gpu(0, [](SimulatedGpu& g) {
    EXPECT_EQ(g.nvlink_errors(3, NvLinkError::kRecovery), 3u);
    EXPECT_GT(g.nvlink_errors(3, NvLinkError::kReplay), 50u);
    EXPECT_GT(g.nvlink_tx_kib(3), 0u);
  });
  EXPECT_EQ(run.Truth(0, TruthEvent::kLinkDown), 60 * kSecond);
}

TEST(ScenarioModelTest, EccStormCountsThenDoubleBitThenRemapFailure) {
  SimRun run("h200x1", "ecc-storm:gpu=0:start=5m:duration=10m:rate=3000:gap=5m");
  run.At(5 * kMinute);
  const uint64_t before = run.Gpu(0, [](SimulatedGpu& g) { return g.ecc_errors(false, false); });
  run.At(15 * kMinute - 100);
  run.Gpu(0, [&](SimulatedGpu& g) {
    EXPECT_GT(g.ecc_errors(false, false), before + 100);  // climbing corrected errors
    EXPECT_EQ(g.ecc_errors(true, false), 0u);
    EXPECT_FALSE(g.remapped_rows().pending);
  });
  EXPECT_TRUE(run.Xids().empty());
  run.At(15 * kMinute);
  run.Gpu(0, [](SimulatedGpu& g) {
    EXPECT_EQ(g.ecc_errors(true, false), 1u);
    EXPECT_TRUE(g.remapped_rows().pending);
    EXPECT_FALSE(g.remapped_rows().failure);
  });
  run.At(21 * kMinute);
  run.Gpu(0, [](SimulatedGpu& g) {
    EXPECT_EQ(g.ecc_errors(true, false), 2u);
    EXPECT_TRUE(g.remapped_rows().failure);
  });
  std::vector<std::pair<uint32_t, int64_t>> xids;
  for (const XidEvent& e : run.Xids()) xids.emplace_back(e.xid, e.t_ms);
  const std::vector<std::pair<uint32_t, int64_t>> want = {
      {48, 15 * kMinute}, {63, 15 * kMinute}, {48, 20 * kMinute}, {64, 20 * kMinute}};
  EXPECT_EQ(xids, want);
  EXPECT_EQ(run.Truth(0, TruthEvent::kUncorrectableEcc), 15 * kMinute);
  EXPECT_EQ(run.Truth(0, TruthEvent::kRowRemapFailure), 20 * kMinute);
}

TEST(ScenarioModelTest, FallOffBusLosesTheGpuWithXid79) {
  SimRun run("h200x2", "fall-off-bus:gpu=1:start=2m", 1, "xid:gpu=0:code=13:at=30s");
  run.At(3 * kMinute);
  EXPECT_TRUE(run.Gpu(1, [](SimulatedGpu& g) { return g.lost(); }));
  EXPECT_FALSE(run.Gpu(0, [](SimulatedGpu& g) { return g.lost(); }));
  std::vector<std::tuple<int, uint32_t, int64_t>> xids;
  for (const XidEvent& e : run.Xids()) xids.emplace_back(e.gpu, e.xid, e.t_ms);
  // Faults and scenarios combine.
  EXPECT_EQ(xids, (std::vector<std::tuple<int, uint32_t, int64_t>>{{0, 13, 30 * kSecond},
                                                                   {1, 79, 2 * kMinute}}));
  EXPECT_EQ(run.Truth(1, TruthEvent::kGpuLost), 2 * kMinute);
  EXPECT_EQ(run.Truth(0, TruthEvent::kFirstXid), 30 * kSecond);
}

TEST(ScenarioModelTest, XidsArriveOnTimeWithoutQueries) {
  SimRun run("h200x1", "fall-off-bus:gpu=0:start=90s");
  run.At(2 * kMinute);
  // Nobody queried the GPU; waiting for events advances it.
  const auto xids = run.Xids();
  ASSERT_EQ(xids.size(), 1u);
  EXPECT_EQ(xids[0].t_ms, 90 * kSecond);
}

TEST(ScenarioModelTest, CoolingLossHeatsSeveralNodesAtOnce) {
  SimRun run("h200x8", "training;cooling-loss:nodes=0-1:start=10m:ramp=2m:ambient=20:airflow=1.5",
             3, "", 2);
  double hot = 0, cool = 0;
  double hot_before = 0, cool_before = 0;
  run.At(9 * kMinute);
  for (int i = 0; i < 8; ++i) {
    const double d = run.Gpu(i, [](SimulatedGpu& g) { return g.die_temperature(); });
    (i < 4 ? hot_before : cool_before) += d / 4;
  }
  run.At(40 * kMinute);
  double coolest_hot = 1000, hottest_cool = 0;
  for (int i = 0; i < 8; ++i) {
    const double d = run.Gpu(i, [](SimulatedGpu& g) { return g.die_temperature(); });
    (i < 4 ? hot : cool) += d / 4;
    if (i < 4) coolest_hot = std::min(coolest_hot, d);
    if (i >= 4) hottest_cool = std::max(hottest_cool, d);
    EXPECT_EQ(run.Truth(i, TruthEvent::kDegradationStart), i < 4 ? 10 * kMinute : -1);
  }
  EXPECT_LT(std::abs(hot_before - cool_before), 6);
  EXPECT_GT(hot - cool, 15);  // all four GPUs of nodes 0-1 at once
  EXPECT_GT(coolest_hot, hottest_cool);
}

TEST(ScenarioModelTest, PowerBrakeSlowsClocksWhileAsserted) {
  SimRun run("h200x1", "training:checkpoint=0;power-brake:gpu=0:start=1m:duration=2m:scale=0.4");
  int braked = 0, after = 0;
  for (int64_t t = 5 * kSecond; t <= 5 * kMinute; t += 5 * kSecond) {
    run.At(t);
    run.Gpu(0, [&](SimulatedGpu& g) {
      const uint64_t r = g.clocks_event_reasons();
      const bool on = t >= kMinute && t < 3 * kMinute;
      EXPECT_EQ(static_cast<bool>(r & kReasonHwPowerBrakeSlowdown), on) << t;
      if (on) {
        EXPECT_TRUE(r & kReasonHwSlowdown);
        if (!(r & kReasonGpuIdle)) {
          EXPECT_LE(g.clock_mhz(ClockDomain::kSm), 1980 * 0.4 + 15);
          ++braked;
        }
      } else if (t > 3 * kMinute && !(r & kReasonGpuIdle)) {
        EXPECT_GT(g.clock_mhz(ClockDomain::kSm), 1500u);
        ++after;
      }
    });
  }
  EXPECT_GT(braked, 15);
  EXPECT_GT(after, 10);
  EXPECT_EQ(run.Truth(0, TruthEvent::kFirstPowerBrake), kMinute);
  EXPECT_EQ(run.Truth(0, TruthEvent::kFirstHwSlowdown), kMinute);
}

TEST(ScenarioModelTest, HealthyFleetUnderTheNormalMixNeverReachesItsLimits) {
  for (const char* spec : {"h200x4", "h100x4"}) {
    SimRun run(spec, "");
    SimRun training(spec, "training");
    for (int64_t t = 0; t <= 12 * kHour; t += kMinute) {
      run.At(t);
      training.At(t);
      for (int i = 0; i < 4; ++i) {
        run.Gpu(i, [](SimulatedGpu&) {});
        training.Gpu(i, [](SimulatedGpu&) {});
      }
    }
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(run.Truth(i, TruthEvent::kFirstThermalSlowdown), -1) << spec;
      EXPECT_EQ(run.Truth(i, TruthEvent::kFirstMemorySlowdown), -1) << spec;
      EXPECT_EQ(training.Truth(i, TruthEvent::kFirstThermalSlowdown), -1) << spec;
      EXPECT_EQ(training.Truth(i, TruthEvent::kFirstHwSlowdown), -1) << spec;
    }
  }
}

}  // namespace
}  // namespace gpumon::sim
