#include "sim/scenario_effects.h"

#include <algorithm>

#include "sim/noise.h"

namespace gpumon::sim {
namespace {

constexpr int64_t kMinuteMs = 60 * 1000;

int64_t EndOf(int64_t start_ms, int64_t duration_ms) {
  return duration_ms > 0 ? start_ms + duration_ms : kForever;
}

// The implicit training job of a thermal-runaway GPU: the degradation is
// defined "under load".
WorkloadRegime ImplicitTraining(uint64_t key, int gpu, int64_t from_ms) {
  WorkloadRegime r;
  r.kind = RegimeKind::kTraining;
  r.from_ms = from_ms;
  r.priority = 1;  // explicit training/inference scenarios win
  r.util = 0.94 + 0.05 * ToUnit(Hash(key, 11));
  r.checkpoint_every_ms = (10 + static_cast<int64_t>(20 * ToUnit(Hash(key, 12)))) * kMinuteMs;
  r.checkpoint_ms = 30000 + static_cast<int64_t>(90 * ToUnit(Hash(key, 13))) * 1000;
  r.checkpoint_offset_ms =
      static_cast<int64_t>(Hash(key, 14) % static_cast<uint64_t>(r.checkpoint_every_ms));
  r.seed = Hash(key, 15, static_cast<uint64_t>(gpu));
  return r;
}

}  // namespace

std::vector<GpuEffects> CompileScenarios(const std::vector<Scenario>& scenarios,
                                         const FleetSpec& spec, uint64_t seed, int node_size) {
  std::vector<GpuEffects> out(static_cast<size_t>(spec.total));
  node_size = std::max(1, node_size);
  for (const Scenario& s : scenarios) {
    const uint64_t key = Hash(seed, 0xe77ec75ULL + static_cast<uint64_t>(s.index));
    const bool fault = !IsWorkloadScenario(s.kind);
    for (int g : s.gpus) {
      GpuEffects& e = out[static_cast<size_t>(g)];
      const uint64_t gkey = Hash(key, 0x9b1dULL, static_cast<uint64_t>(g));
      if (fault && e.fault_scenario < 0) e.fault_scenario = s.index;
      switch (s.kind) {
        case ScenarioKind::kTraining:
        case ScenarioKind::kInference: {
          WorkloadRegime r;
          r.kind =
              s.kind == ScenarioKind::kTraining ? RegimeKind::kTraining : RegimeKind::kInference;
          r.from_ms = s.start_ms;
          r.until_ms = EndOf(s.start_ms, s.GetMs("duration"));
          r.priority = 2;
          r.util = s.Get("util");
          if (s.kind == ScenarioKind::kTraining) {
            // One job: every GPU checkpoints at the same moments.
            r.checkpoint_every_ms = s.GetMs("checkpoint");
            r.checkpoint_ms = s.GetMs("pause");
            if (r.checkpoint_every_ms > 0) {
              r.checkpoint_offset_ms =
                  s.start_ms +
                  static_cast<int64_t>(Hash(key, 1) % static_cast<uint64_t>(r.checkpoint_every_ms));
            }
          }
          r.seed = gkey;
          e.regimes.push_back(r);
          if (e.ambient_offset_c == 0) {
            // Racks differ by a few degrees of inlet air, slots by less.
            const uint64_t node = static_cast<uint64_t>(g / node_size);
            e.ambient_offset_c = -2.0 + 5.0 * ToUnit(Hash(seed, 0xa3b1e47ULL, node)) +
                                 (ToUnit(Hash(seed, 0xa3b1e48ULL, static_cast<uint64_t>(g))) - 0.5);
          }
          break;
        }
        case ScenarioKind::kThermalRunaway: {
          e.runaway.push_back(ThermalRunawayEffect{s.index, s.start_ms, s.GetMs("time"),
                                                   s.Get("die"), s.GetMs("hold")});
          const std::string& workload = s.GetText("workload");
          if (workload == "training") {
            e.regimes.push_back(ImplicitTraining(key, g, s.start_ms));
          } else if (workload == "inference") {
            WorkloadRegime r;
            r.kind = RegimeKind::kInference;
            r.from_ms = s.start_ms;
            r.priority = 1;
            r.util = 0.3 + 0.3 * ToUnit(Hash(key, 21));
            r.seed = gkey;
            e.regimes.push_back(r);
          }
          break;
        }
        case ScenarioKind::kCoolingLoss: {
          // Slots of a chassis sit in different parts of the air stream.
          const double slot = 0.85 + 0.3 * ToUnit(Hash(gkey, 1));
          e.cooling.push_back(CoolingLossEffect{
              s.index, s.start_ms, s.GetMs("ramp"), EndOf(s.start_ms, s.GetMs("duration")),
              s.Get("ambient") * slot, 1.0 + (s.Get("airflow") - 1.0) * slot});
          break;
        }
        case ScenarioKind::kEccStorm: {
          const int64_t dbe = s.start_ms + s.GetMs("duration");
          const int64_t gap = s.GetMs("gap");
          e.ecc.push_back(EccStormEffect{s.index, s.start_ms, dbe, gap > 0 ? dbe + gap : kForever,
                                         s.Get("rate")});
          break;
        }
        case ScenarioKind::kNvlinkFlap:
          e.flaps.push_back(NvlinkFlapEffect{s.index, static_cast<int>(s.Get("link")), s.start_ms,
                                             s.GetMs("down"), s.GetMs("up"),
                                             static_cast<int64_t>(s.Get("count")), s.Get("rate")});
          break;
        case ScenarioKind::kPcieDegrade:
          e.pcie.push_back(PcieDegradeEffect{s.index, s.start_ms, static_cast<int>(s.Get("width")),
                                             static_cast<int>(s.Get("gen")), s.Get("rate")});
          break;
        case ScenarioKind::kPowerBrake:
          e.brakes.push_back(PowerBrakeEffect{s.index, s.start_ms, s.GetMs("duration"),
                                              s.GetMs("every"), s.Get("scale")});
          break;
        case ScenarioKind::kFallOffBus:
          e.fall_off_scenario = s.index;
          e.fall_off_ms = s.start_ms;
          break;
      }
    }
  }
  return out;
}

}  // namespace gpumon::sim
