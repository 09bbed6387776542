#include "sim/fleet.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace gpumon::sim {
namespace {

// A clock the test moves by hand.
struct ManualClock {
  std::shared_ptr<std::atomic<int64_t>> ms = std::make_shared<std::atomic<int64_t>>(0);
  std::function<int64_t()> fn() const {
    auto p = ms;
    return [p] { return p->load(); };
  }
};

std::unique_ptr<SimulatedFleet> MakeFleet(const std::string& spec, uint64_t seed,
                                          const std::string& faults, const ManualClock& clock) {
  FleetOptions o;
  o.spec = spec;
  o.seed = seed;
  o.faults = faults;
  o.clock_ms = clock.fn();
  Result<std::unique_ptr<SimulatedFleet>> fleet = SimulatedFleet::Create(std::move(o));
  EXPECT_TRUE(fleet.ok()) << fleet.status().message();
  return fleet.ok() ? std::move(fleet).value() : nullptr;
}

TEST(FleetTest, BuildsGpusFromSpec) {
  ManualClock clock;
  auto fleet = MakeFleet("h200x3,rtx4080sx2", 1, "", clock);
  ASSERT_NE(fleet, nullptr);
  EXPECT_EQ(fleet->size(), 5);
  EXPECT_EQ(fleet->profile(2).key, "h200");
  EXPECT_EQ(fleet->profile(3).key, "rtx4080s");
  fleet->WithGpu(4, [](SimulatedGpu& g) { EXPECT_EQ(g.index(), 4); });
}

TEST(FleetTest, SpecAndFaultErrorsAreReported) {
  FleetOptions o;
  o.spec = "h200x2,a100x1";
  Result<std::unique_ptr<SimulatedFleet>> f = SimulatedFleet::Create(o);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("a100x1"), std::string::npos);

  o.spec = "h200x2";
  o.faults = "lost:gpu=1:at=1s;xid:gpu=2:code=79";
  f = SimulatedFleet::Create(o);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("xid:gpu=2:code=79"), std::string::npos);

  o.spec = "h200x1,rtx4080sx1";
  o.faults = "ecc:gpu=1";
  f = SimulatedFleet::Create(o);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("no ECC"), std::string::npos);
}

TEST(FleetTest, AdvancesLazilyToTheClock) {
  ManualClock clock;
  auto fleet = MakeFleet("h200x2", 1, "", clock);
  clock.ms->store(12345);
  EXPECT_EQ(fleet->WithGpu(0, [](SimulatedGpu& g) { return g.now_ms(); }), 12300);
  clock.ms->store(20000);
  EXPECT_EQ(fleet->WithGpu(1, [](SimulatedGpu& g) { return g.now_ms(); }), 20000);
}

TEST(FleetTest, SameSeedSameValuesDifferentSeedDifferent) {
  ManualClock c1, c2, c3;
  auto a = MakeFleet("h200x4", 99, "", c1);
  auto b = MakeFleet("h200x4", 99, "", c2);
  auto c = MakeFleet("h200x4", 100, "", c3);
  int differ = 0;
  for (int64_t t = 0; t <= 1800000; t += 15000) {
    c1.ms->store(t);
    c2.ms->store(t);
    c3.ms->store(t);
    for (int i = 0; i < 4; ++i) {
      auto read = [](SimulatedGpu& g) { return std::make_pair(g.power_mw(), g.energy_mj()); };
      auto va = a->WithGpu(i, read);
      ASSERT_EQ(va, b->WithGpu(i, read));
      differ += va != c->WithGpu(i, read);
    }
  }
  EXPECT_GT(differ, 100);
}

TEST(FleetTest, ScheduledFaultsApplyAtTheirTime) {
  ManualClock clock;
  auto fleet = MakeFleet("h200x4", 1, "lost:gpu=3:at=10s;hot:gpu=1:at=0s", clock);
  clock.ms->store(9900);
  EXPECT_FALSE(fleet->WithGpu(3, [](SimulatedGpu& g) { return g.lost(); }));
  EXPECT_TRUE(fleet->WithGpu(1, [](SimulatedGpu& g) { return g.cooling_failed(); }));
  EXPECT_FALSE(fleet->WithGpu(0, [](SimulatedGpu& g) { return g.cooling_failed(); }));
  clock.ms->store(10000);
  // Noticed through another GPU's access, still applied at 10 s exactly.
  fleet->WithGpu(0, [](SimulatedGpu&) {});
  clock.ms->store(50000);
  EXPECT_TRUE(fleet->WithGpu(3, [](SimulatedGpu& g) { return g.lost(); }));
  EXPECT_EQ(fleet->WithGpu(3, [](SimulatedGpu& g) { return g.now_ms(); }), 10000);
}

TEST(FleetTest, XidEventsReachWaitersInOrder) {
  ManualClock clock;
  auto fleet = MakeFleet("h200x4", 1, "xid:gpu=2:code=31:at=5s;lost:gpu=0:at=6s", clock);
  uint64_t cursor = fleet->EventSequence();
  EXPECT_EQ(cursor, 0u);
  auto all = [](const XidEvent&, uint64_t) { return true; };
  XidEvent e;
  EXPECT_FALSE(fleet->WaitForEvent(&cursor, all, std::chrono::milliseconds(20), &e));

  clock.ms->store(7000);
  ASSERT_TRUE(fleet->WaitForEvent(&cursor, all, std::chrono::milliseconds(1000), &e));
  EXPECT_EQ(e.gpu, 2);
  EXPECT_EQ(e.xid, 31u);
  EXPECT_EQ(e.t_ms, 5000);
  ASSERT_TRUE(fleet->WaitForEvent(&cursor, all, std::chrono::milliseconds(1000), &e));
  EXPECT_EQ(e.gpu, 0);
  EXPECT_EQ(e.xid, 79u);  // fell off the bus
  EXPECT_FALSE(fleet->WaitForEvent(&cursor, all, std::chrono::milliseconds(10), &e));

  // Filters skip unwanted events; injected events arrive immediately.
  fleet->InjectXid(1, 43);
  fleet->InjectXid(3, 45);
  auto gpu3 = [](const XidEvent& ev, uint64_t) { return ev.gpu == 3; };
  ASSERT_TRUE(fleet->WaitForEvent(&cursor, gpu3, std::chrono::milliseconds(1000), &e));
  EXPECT_EQ(e.xid, 45u);
  EXPECT_EQ(cursor, fleet->EventSequence());
}

TEST(FleetTest, WaiterWakesWhenAnotherThreadInjects) {
  ManualClock clock;
  auto fleet = MakeFleet("h100x2", 1, "", clock);
  uint64_t cursor = fleet->EventSequence();
  std::thread injector([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    fleet->InjectXid(1, 94);
  });
  XidEvent e;
  const bool got = fleet->WaitForEvent(
      &cursor, [](const XidEvent&, uint64_t) { return true; }, std::chrono::seconds(10), &e);
  injector.join();
  ASSERT_TRUE(got);
  EXPECT_EQ(e.xid, 94u);
}

TEST(FleetTest, ConcurrentAccessIsSafeAndDeterministic) {
  ManualClock clock;
  auto fleet = MakeFleet("h200x16", 5, "xid:gpu=3:code=13:at=1s", clock);
  clock.ms->store(600000);
  std::vector<std::thread> threads;
  std::atomic<uint64_t> total{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 16; ++i) {
        total += fleet->WithGpu(i, [](SimulatedGpu& g) { return g.energy_mj(); }) > 0;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(total.load(), 128u);
  ManualClock c2;
  auto again = MakeFleet("h200x16", 5, "", c2);
  c2.ms->store(600000);
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(fleet->WithGpu(i, [](SimulatedGpu& g) { return g.energy_mj(); }),
              again->WithGpu(i, [](SimulatedGpu& g) { return g.energy_mj(); }));
  }
  EXPECT_EQ(fleet->EventSequence(), 1u);
}

TEST(FleetTest, DefaultClockIsRealTime) {
  FleetOptions o;
  o.spec = "l40sx1";
  auto fleet = SimulatedFleet::Create(o);
  ASSERT_TRUE(fleet.ok());
  const int64_t t0 = (*fleet)->NowMs();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_GE((*fleet)->NowMs() - t0, 25);
}

TEST(FleetTest, ParseSpeedAcceptsFinitePositiveNumbersOnly) {
  EXPECT_EQ(ParseSpeed("1"), 1);
  EXPECT_EQ(ParseSpeed("60"), 60);
  EXPECT_EQ(ParseSpeed("0.5"), 0.5);
  EXPECT_EQ(ParseSpeed("1e3"), 1000);
  for (const char* bad : {"", "0", "-2", "x", "2x", "inf", "nan", "1e999"}) {
    EXPECT_EQ(ParseSpeed(bad), 0) << bad;
  }
  EXPECT_EQ(ParseSpeed(std::string_view("2\0", 2)), 0);  // the whole text must be the number
}

}  // namespace
}  // namespace gpumon::sim
