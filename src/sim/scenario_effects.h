// Scenario effects: what the scenarios of a fleet (scenario.h) do to each
// GPU, as plain data the GPU model (gpu_model.h) evaluates every step.
//
// Contract: CompileScenarios turns parsed scenarios into one GpuEffects per
// GPU; a GPU no scenario touches gets an empty one (empty() is true) and
// the model then pays nothing for scenarios. Every random choice here is a
// hash of (seed, scenario index, GPU, purpose), so effects are a pure
// function of the scenario list, the fleet spec and the seed. Times are
// simulated milliseconds since the fleet started; `scenario` fields are
// indexes into the scenario list, for ground truth.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "sim/fleet_spec.h"
#include "sim/scenario.h"
#include "sim/workload.h"

namespace gpumon::sim {

inline constexpr int64_t kForever = std::numeric_limits<int64_t>::max();

// The cooling of the HBM (and, less, of the die) degrades linearly from
// start_ms. time_ms: when the HBM's steady temperature under the profile's
// load would reach its limit; die_share: how far the die gets towards its
// own limit by then (0..1). After hold_ms in the HBM's hardware slowdown,
// an uncorrectable ECC error (XID 48, and 63 where rows are remapped) is
// raised.
struct ThermalRunawayEffect {
  int scenario = -1;
  int64_t start_ms = 0;
  int64_t time_ms = 0;
  double die_share = 0;
  int64_t hold_ms = 0;
};

// Inlet air warms by ambient_c and the thermal resistance of die and HBM
// grows by airflow (a factor), both ramping in linearly over ramp_ms;
// restored at end_ms.
struct CoolingLossEffect {
  int scenario = -1;
  int64_t start_ms = 0;
  int64_t ramp_ms = 0;
  int64_t end_ms = kForever;
  double ambient_c = 0;
  double airflow = 1;
};

// Corrected errors climb linearly from start_ms to rate_per_hour at dbe_ms,
// when an uncorrectable error marks a row remap pending (XID 48, 63); a
// second one at failure_ms (kForever: none) finds no spare row (XID 48, 64).
struct EccStormEffect {
  int scenario = -1;
  int64_t start_ms = 0;
  int64_t dbe_ms = 0;
  int64_t failure_ms = kForever;
  double rate_per_hour = 0;
};

// From start_ms, `link` goes down for down_ms, then up for up_ms, `count`
// times (0: forever). Each time it goes down XID 74 is raised and its
// recovery counter counts up; while flapping, replay and CRC errors climb
// at about rate_per_hour.
struct NvlinkFlapEffect {
  int scenario = -1;
  int link = 0;
  int64_t start_ms = 0;
  int64_t down_ms = 0;
  int64_t up_ms = 0;
  int64_t count = 0;
  double rate_per_hour = 0;
};

// From start_ms the PCIe link trains at `width` lanes and/or generation
// `gen` (0: unchanged) and replays climb at rate_per_hour.
struct PcieDegradeEffect {
  int scenario = -1;
  int64_t start_ms = 0;
  int width = 0;
  int gen = 0;
  double rate_per_hour = 0;
};

// The external power brake is asserted from start_ms for duration_ms (0:
// for good), again every every_ms (0: once); clocks drop to `scale`.
struct PowerBrakeEffect {
  int scenario = -1;
  int64_t start_ms = 0;
  int64_t duration_ms = 0;
  int64_t every_ms = 0;
  double scale = 0.5;
};

struct GpuEffects {
  // Inlet temperature offset of this GPU's node and slot (workload
  // scenarios describe a data-center fleet, whose racks differ a little).
  double ambient_offset_c = 0;
  // The first fault scenario on this GPU: what its first-slowdown and
  // first-XID ground-truth events are attributed to (-1: none).
  int fault_scenario = -1;
  std::vector<WorkloadRegime> regimes;
  std::vector<ThermalRunawayEffect> runaway;  // at most one
  std::vector<CoolingLossEffect> cooling;     // at most one
  std::vector<EccStormEffect> ecc;            // at most one
  std::vector<NvlinkFlapEffect> flaps;
  std::vector<PcieDegradeEffect> pcie;  // at most one
  std::vector<PowerBrakeEffect> brakes;
  int fall_off_scenario = -1;
  int64_t fall_off_ms = kForever;

  bool empty() const {
    return ambient_offset_c == 0 && regimes.empty() && runaway.empty() && cooling.empty() &&
           ecc.empty() && flaps.empty() && pcie.empty() && brakes.empty() &&
           fall_off_ms == kForever;
  }
  // Whether the model can raise XIDs on its own (the fleet then watches it
  // so events are delivered on time even when nobody queries the GPU).
  bool raises_xids() const {
    return !runaway.empty() || !ecc.empty() || !flaps.empty() || fall_off_ms != kForever;
  }
};

std::vector<GpuEffects> CompileScenarios(const std::vector<Scenario>& scenarios,
                                         const FleetSpec& spec, uint64_t seed, int node_size);

}  // namespace gpumon::sim
