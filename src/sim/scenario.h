// Scenarios: named, parameterised, seeded situations for a simulated fleet
// (a training fleet, a GPU whose cooling degrades, an ECC storm, ...).
//
// Contract: a scenario list is a ';'-separated list of items, each
// "<name>[:<key>=<value>...]", e.g. "training;thermal-runaway:gpu=3:start=20m".
// Names: training, inference, thermal-runaway, cooling-loss, ecc-storm,
// nvlink-flap, pcie-degrade, power-brake, fall-off-bus (docs/simulator.md has
// every key with its range and default). Keys every scenario takes:
//   gpu=<list>    fleet-wide GPU indexes ("3", "0-3", "1,5,7-9"); with node=,
//                 indexes within each node (gpus= is the same key)
//   node=<list>   nodes, each node_size consecutive GPUs (nodes= is the same)
//   start=<dur>   when it begins, a Prometheus duration (default 0s)
// Without gpu=/node=, training and inference cover every GPU, cooling-loss a
// rack of 2-4 consecutive nodes and the others one GPU, chosen by the seed
// among the GPUs the scenario applies to.
// A key that is not given is drawn from its realistic range by a hash of
// (seed, scenario position, key), so the same seed gives the same values,
// different seeds different ones, and giving one key leaves the others'
// draws unchanged. Empty items are ignored. Errors quote the bad item and
// say what is expected. Parsing is pure: nothing is simulated here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "sim/fleet_spec.h"

namespace gpumon::sim {

enum class ScenarioKind {
  kTraining,
  kInference,
  kThermalRunaway,
  kCoolingLoss,
  kEccStorm,
  kNvlinkFlap,
  kPcieDegrade,
  kPowerBrake,
  kFallOffBus,
};

std::string_view ScenarioName(ScenarioKind kind);
// All names, in documentation order.
std::vector<std::string_view> ScenarioNames();

// Training and inference set what GPUs run; the others are faults.
inline bool IsWorkloadScenario(ScenarioKind kind) {
  return kind == ScenarioKind::kTraining || kind == ScenarioKind::kInference;
}

// One resolved parameter. Durations are milliseconds; enum values keep
// their text in `text`.
struct ScenarioParam {
  std::string key;
  double value = 0;
  bool is_duration = false;
  bool given = false;  // written in the item (otherwise drawn or the default)
  std::string text;    // enum keys only
};

struct Scenario {
  ScenarioKind kind = ScenarioKind::kTraining;
  int index = 0;          // position in the list (0-based, empty items skipped)
  std::string text;       // the item as written
  std::vector<int> gpus;  // targets, ascending, no duplicates
  int64_t start_ms = 0;
  std::vector<ScenarioParam> params;  // every key of the kind except the targets and start

  std::string_view name() const { return ScenarioName(kind); }
  // The value of `key`; 0 for a key the kind does not have.
  double Get(std::string_view key) const;
  int64_t GetMs(std::string_view key) const { return static_cast<int64_t>(Get(key)); }
  const std::string& GetText(std::string_view key) const;
  bool Given(std::string_view key) const;
};

struct ScenarioContext {
  const FleetSpec* spec = nullptr;  // required
  int node_size = 8;                // GPUs per node, >= 1
  uint64_t seed = 1;
};

Result<std::vector<Scenario>> ParseScenarios(std::string_view text, const ScenarioContext& context);

}  // namespace gpumon::sim
