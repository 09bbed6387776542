#include "sim/gpu_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <regex>

namespace gpumon::sim {
namespace {

constexpr int64_t kSecond = 1000;
constexpr int64_t kHour = 3600 * kSecond;

const GpuProfile& H200() { return *FindProfile("h200"); }

// Every reported quantity, so tests can compare whole states.
struct Snapshot {
  uint32_t power_mw, power_instant_mw;
  uint64_t energy;
  double die, mem;
  uint32_t sm, mem_clock;
  uint64_t reasons;
  uint64_t used;
  unsigned util, mem_util;
  uint64_t pcie_rx, nvlink_tx0;
  bool operator==(const Snapshot&) const = default;
};

Snapshot Take(const SimulatedGpu& g) {
  return Snapshot{g.power_mw(),
                  g.power_instant_mw(),
                  g.energy_mj(),
                  g.die_temperature(),
                  g.memory_temperature(),
                  g.clock_mhz(ClockDomain::kSm),
                  g.clock_mhz(ClockDomain::kMemory),
                  g.clocks_event_reasons(),
                  g.memory_used_bytes(),
                  g.utilization_gpu_pct(),
                  g.utilization_memory_pct(),
                  g.pcie_rx_bytes(),
                  g.nvlink_tx_kib(0)};
}

TEST(GpuModelTest, SameSeedIsBitIdenticalWhateverTheQueryPattern) {
  SimulatedGpu a(H200(), 1234, 3);
  SimulatedGpu b(H200(), 1234, 3);
  // a advances in irregular hops, b in one jump per checkpoint.
  int64_t t = 0;
  for (int64_t checkpoint = 15 * kSecond; checkpoint <= 2 * kHour; checkpoint += 15 * kSecond) {
    while (t < checkpoint) {
      t = std::min(checkpoint, t + 37 + (t % 1013));
      a.AdvanceTo(t);
    }
    b.AdvanceTo(checkpoint);
    ASSERT_EQ(Take(a), Take(b)) << "diverged at " << checkpoint;
  }
  EXPECT_EQ(a.uuid(), b.uuid());
}

TEST(GpuModelTest, DifferentSeedsAndIndicesDiffer) {
  SimulatedGpu a(H200(), 1, 0);
  SimulatedGpu b(H200(), 2, 0);
  SimulatedGpu c(H200(), 1, 1);
  EXPECT_NE(a.uuid(), b.uuid());
  EXPECT_NE(a.uuid(), c.uuid());
  int differ_b = 0, differ_c = 0;
  for (int64_t t = kSecond; t <= kHour; t += 60 * kSecond) {
    a.AdvanceTo(t);
    b.AdvanceTo(t);
    c.AdvanceTo(t);
    differ_b += !(Take(a) == Take(b));
    differ_c += !(Take(a) == Take(c));
  }
  EXPECT_GT(differ_b, 50);
  EXPECT_GT(differ_c, 50);
}

TEST(GpuModelTest, IdentityFormats) {
  SimulatedGpu g(H200(), 9, 10);
  EXPECT_TRUE(std::regex_match(
      g.uuid(), std::regex("GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")))
      << g.uuid();
  EXPECT_TRUE(std::regex_match(
      g.mig_uuid(1),
      std::regex("MIG-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")));
  EXPECT_NE(g.mig_uuid(0), g.mig_uuid(1));
  // PCI addresses are distinct across a large fleet.
  std::set<std::pair<uint32_t, uint32_t>> addresses;
  for (int i = 0; i < 1000; ++i) {
    SimulatedGpu x(H200(), 9, i);
    addresses.insert({x.pci_domain(), x.pci_bus()});
  }
  EXPECT_EQ(addresses.size(), 1000u);
}

TEST(GpuModelTest, StartsIdleLikeTheReading) {
  SimulatedGpu g(H200(), 5, 0);
  EXPECT_EQ(g.clock_mhz(ClockDomain::kSm), 345u);
  EXPECT_EQ(g.clock_mhz(ClockDomain::kMemory), 3201u);
  EXPECT_EQ(g.clocks_event_reasons(), kReasonGpuIdle);
  EXPECT_NEAR(g.power_mw() / 1000.0, 77.7, 1);
  EXPECT_NEAR(g.die_temperature(), 28, 1.5);
  EXPECT_NEAR(g.memory_temperature(), 32, 1.5);
}

// Walks a GPU through `hours` of simulated time in steps of `step_ms`,
// calling fn(gpu) after each step.
template <typename Fn>
void Walk(SimulatedGpu& g, int64_t hours, int64_t step_ms, Fn&& fn) {
  for (int64_t t = g.now_ms() + step_ms; t <= hours * kHour; t += step_ms) {
    g.AdvanceTo(t);
    fn(g);
  }
}

TEST(GpuModelTest, IdleStepsReportIdleClocksAndBit) {
  SimulatedGpu g(H200(), 11, 0);
  int idle = 0, idle_for = 0;
  Walk(g, 2, 1000, [&](SimulatedGpu& s) {
    if (s.utilization_gpu_pct() == 0 && s.phase() == PhaseKind::kIdle) {
      ++idle;
      EXPECT_TRUE(s.clocks_event_reasons() & kReasonGpuIdle);
      EXPECT_EQ(s.clock_mhz(ClockDomain::kSm), 345u);
      EXPECT_EQ(s.clock_mhz(ClockDomain::kVideo), 765u);
      // The one-second power average settles within a few seconds.
      if (++idle_for > 5) {
        EXPECT_NEAR(s.power_mw() / 1000.0, 77.7, 4);
      }
    } else {
      idle_for = 0;
    }
  });
  EXPECT_GT(idle, 60);
}

TEST(GpuModelTest, TemperatureRisesGraduallyWhenLoadStarts) {
  // Find an idle -> busy transition after a long idle spell, then watch the
  // die temperature: a lag of tens of seconds, not a jump.
  bool checked = false;
  for (uint64_t seed = 1; seed < 40 && !checked; ++seed) {
    SimulatedGpu g(H200(), seed, 0);
    int64_t idle_since = -1;
    for (int64_t t = 100; t < 6 * kHour && !checked; t += 100) {
      g.AdvanceTo(t);
      if (g.phase() == PhaseKind::kIdle) {
        if (idle_since < 0) idle_since = t;
        continue;
      }
      const bool long_idle = idle_since >= 0 && t - idle_since > 90 * kSecond;
      idle_since = -1;
      if (!long_idle || g.phase() != PhaseKind::kTraining) continue;
      const double start = g.die_temperature();
      SimulatedGpu probe = g;  // copy: keep looking if this phase ends early
      probe.AdvanceTo(t + 2 * kSecond);
      const double after2s = probe.die_temperature();
      probe.AdvanceTo(t + 60 * kSecond);
      if (probe.phase() != PhaseKind::kTraining) continue;
      const double after60s = probe.die_temperature();
      // Steady state under this load is ~20 C above idle; after 2 s only a
      // small part of that, after a minute most of it.
      EXPECT_LT(after2s - start, 5) << "seed " << seed;
      EXPECT_GT(after60s - start, 12) << "seed " << seed;
      EXPECT_GT(after2s, start - 0.5);
      checked = true;
    }
  }
  EXPECT_TRUE(checked) << "no idle->training transition found";
}

TEST(GpuModelTest, LoadTemperaturesMatchTheReadings) {
  // H200 under sustained training: die ~52 C, HBM 40-55 C at ~630 W.
  SimulatedGpu g(H200(), 21, 0);
  int samples = 0;
  Walk(g, 6, 1000, [&](SimulatedGpu& s) {
    if (s.phase() != PhaseKind::kTraining || s.power_mw() < 600000) return;
    if (std::fabs(s.die_temperature() - (24.6 + 0.0437 * s.power_mw() / 1000.0)) > 1) return;
    ++samples;  // thermally settled
    EXPECT_NEAR(s.die_temperature(), 52, 5);
    EXPECT_GE(s.memory_temperature(), 38);
    EXPECT_LE(s.memory_temperature(), 58);
    EXPECT_EQ(s.clock_mhz(ClockDomain::kMemory), 3201u);
  });
  EXPECT_GT(samples, 100);
}

TEST(GpuModelTest, PowerCapLowersClockAndSetsReason) {
  int capped = 0, busy_uncapped = 0;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    SimulatedGpu g(H200(), seed, 0);
    Walk(g, 3, 500, [&](SimulatedGpu& s) {
      const uint64_t r = s.clocks_event_reasons();
      const bool thermal = r & (kReasonSwThermalSlowdown | kReasonHwThermalSlowdown);
      if (r & kReasonSwPowerCap) {
        ++capped;
        EXPECT_LT(s.clock_mhz(ClockDomain::kSm), 1980u);
        EXPECT_LE(s.power_instant_mw(), 700000u * 1.02);
        EXPECT_GE(s.power_instant_mw(), 700000u * 0.98);
      } else if (!thermal && !(r & kReasonGpuIdle)) {
        ++busy_uncapped;
        EXPECT_EQ(s.clock_mhz(ClockDomain::kSm), 1980u);
      }
      EXPECT_LE(s.power_mw(), 700000u * 1.02);
    });
  }
  EXPECT_GT(capped, 10);
  EXPECT_GT(busy_uncapped, 100);
}

TEST(GpuModelTest, CoolingFailureThrottles) {
  SimulatedGpu g(H200(), 3, 0);
  g.SetCoolingFailure(true);
  int thermal = 0;
  double hottest = 0;
  Walk(g, 2, 1000, [&](SimulatedGpu& s) {
    hottest = std::max(hottest, s.die_temperature());
    const uint64_t r = s.clocks_event_reasons();
    if (r & (kReasonSwThermalSlowdown | kReasonHwThermalSlowdown)) {
      ++thermal;
      // The reason reflects the sensor at the start of the step.
      EXPECT_GE(s.die_temperature(), H200().gpu_max_operating_temp_c - 0.5);
      if (!(r & kReasonGpuIdle)) {
        EXPECT_LT(s.clock_mhz(ClockDomain::kSm), 1980u);
      }
    }
    if (r & kReasonHwThermalSlowdown) {
      EXPECT_TRUE(r & kReasonHwSlowdown);
    }
  });
  EXPECT_GT(thermal, 60);
  EXPECT_LT(hottest, 115);  // throttling holds it down
  EXPECT_GT(g.clock_event_ns(ClockEventCounter::kSwThermal) +
                g.clock_event_ns(ClockEventCounter::kHwThermal),
            0u);
}

TEST(GpuModelTest, CountersNeverDecreaseOverALongRun) {
  for (const char* key : {"h200", "rtx4080s"}) {
    const GpuProfile& p = *FindProfile(key);
    SimulatedGpu g(p, 77, 1);
    Snapshot prev = Take(g);
    std::array<uint64_t, kClockEventCounters> ns{};
    uint64_t pcie_tx = 0, replays = 0, ecc = 0, link_errors = 0, energy_start = g.energy_mj();
    double power_sum = 0;
    int n = 0;
    Walk(g, 12, 10 * kSecond, [&](SimulatedGpu& s) {
      Snapshot now = Take(s);
      ASSERT_GE(now.energy, prev.energy);
      ASSERT_GE(now.pcie_rx, prev.pcie_rx);
      ASSERT_GE(now.nvlink_tx0, prev.nvlink_tx0);
      for (int c = 0; c < kClockEventCounters; ++c) {
        const uint64_t v = s.clock_event_ns(static_cast<ClockEventCounter>(c));
        ASSERT_GE(v, ns[c]);
        ns[c] = v;
      }
      ASSERT_GE(s.pcie_tx_bytes(), pcie_tx);
      ASSERT_GE(s.pcie_replays(), replays);
      ASSERT_GE(s.ecc_errors(false, true), ecc);
      uint64_t errors = 0;
      for (int l = 0; l < p.nvlink_links; ++l) {
        for (int k = 0; k < kNvLinkErrorKinds; ++k) errors += s.nvlink_errors(l, NvLinkError(k));
      }
      ASSERT_GE(errors, link_errors);
      ASSERT_LE(now.used, p.memory_total_bytes - p.memory_reserved_bytes);
      pcie_tx = s.pcie_tx_bytes();
      replays = s.pcie_replays();
      ecc = s.ecc_errors(false, true);
      link_errors = errors;
      power_sum += s.power_mw() / 1000.0;
      ++n;
      prev = now;
    });
    // Energy is the integral of power: average power from both agrees.
    const double energy_w = (g.energy_mj() - energy_start) / static_cast<double>(12 * kHour);
    EXPECT_NEAR(energy_w, power_sum / n, power_sum / n * 0.05) << key;
    EXPECT_GT(ns[static_cast<int>(ClockEventCounter::kLowUtilization)], 0u) << key;
    EXPECT_GT(pcie_tx, 0u) << key;
    if (p.nvlink_links > 0) {
      EXPECT_GT(g.nvlink_rx_kib(17), 0u);
    }
  }
}

TEST(GpuModelTest, ConsumerCardIdlesInP8WithLowLinkAndSpinsFansWhenHot) {
  const GpuProfile& p = *FindProfile("rtx4080s");
  SimulatedGpu g(p, 8, 0);
  EXPECT_EQ(g.pstate(), 8);
  EXPECT_EQ(g.pcie_gen(), 1);
  EXPECT_EQ(g.fan_speed_pct(0), 0u);  // zero-RPM at idle temperatures
  bool busy_seen = false;
  unsigned max_fan = 0;
  Walk(g, 6, 1000, [&](SimulatedGpu& s) {
    if (!(s.clocks_event_reasons() & kReasonGpuIdle)) {
      busy_seen = true;
      EXPECT_EQ(s.pstate(), 2);
      EXPECT_EQ(s.pcie_gen(), 4);
    }
    max_fan = std::max(max_fan, s.fan_speed_pct(1));
  });
  EXPECT_TRUE(busy_seen);
  EXPECT_GT(max_fan, 30u);
  EXPECT_LE(max_fan, 100u);
}

TEST(GpuModelTest, FaultsQueueXids) {
  SimulatedGpu g(H200(), 1, 0);
  EXPECT_FALSE(g.has_pending_xids());
  g.InjectXid(13);
  g.InjectUncorrectableEcc();
  EXPECT_EQ(g.ecc_errors(true, false), 1u);
  EXPECT_EQ(g.ecc_errors(true, true), 1u);
  EXPECT_TRUE(g.remapped_rows().pending);
  EXPECT_EQ(g.remapped_rows().uncorrectable, 1u);
  g.MarkLost();
  EXPECT_TRUE(g.lost());
  EXPECT_EQ(g.TakePendingXids(), (std::vector<uint32_t>{13, 48, 63, 79}));
  EXPECT_FALSE(g.has_pending_xids());
  // A lost GPU no longer changes.
  const uint64_t energy = g.energy_mj();
  g.AdvanceTo(kHour);
  EXPECT_EQ(g.energy_mj(), energy);
}

TEST(GpuModelTest, ConsumerEccFaultIsIgnored) {
  SimulatedGpu g(*FindProfile("rtx4080s"), 1, 0);
  g.InjectUncorrectableEcc();
  EXPECT_EQ(g.ecc_errors(true, false), 0u);
  EXPECT_FALSE(g.has_pending_xids());
}

}  // namespace
}  // namespace gpumon::sim
