// Ground-truth report: a fleet's scenarios and every GPU's ground-truth
// records (scenario_truth.h) as one JSON document, the format of
// docs/formats/ground-truth.md ("gpumon-ground-truth/1").
//
// Contract: GroundTruthJson advances every GPU to the fleet's current time
// first, so the report holds everything that has happened up to "now_ms",
// and nothing that has not. Events are ordered by time, then GPU, then the
// order they happened in. Scenario parameters are the resolved values (the
// seed's draws included); durations are written in ms with an "_ms" suffix.
#pragma once

#include <string>
#include <string_view>

#include "sim/fleet.h"

namespace gpumon::sim {

// `clock` names the fleet's clock ("steady" or "virtual").
std::string GroundTruthJson(SimulatedFleet& fleet, std::string_view clock);

}  // namespace gpumon::sim
