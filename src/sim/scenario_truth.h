// Ground truth: what really happened to a simulated GPU and when, recorded
// by the model as it happens, for benchmarks to score detectors against.
// It is never exposed through NVML or as a metric.
//
// Contract: a GPU keeps its records in the order they happened (times are
// the simulated step times, ms since the fleet started). "first_*" events
// are recorded once per GPU whatever caused them (a scenario, a fault, or
// nothing at all); the others once per occurrence. The JSON document the
// fake NVML hands out is described in docs/formats/ground-truth.md.
#pragma once

#include <cstdint>
#include <string_view>

namespace gpumon::sim {

enum class TruthEvent : uint8_t {
  kDegradationStart,      // a fault scenario began acting on the GPU
  kFirstMemorySlowdown,   // the HBM reached its maximum operating temperature
  kFirstThermalSlowdown,  // first sw_thermal_slowdown or hw_thermal_slowdown reason
  kFirstHwSlowdown,       // first hw_slowdown reason (thermal or power brake)
  kFirstPowerBrake,       // first hw_power_brake_slowdown reason
  kFirstXid,              // first XID of the GPU (detail: the code)
  kXid,                   // every XID (detail: the code)
  kUncorrectableEcc,      // a double-bit error; a row remap is pending
  kRowRemapFailure,       // an uncorrectable error found no spare row
  kLinkDown,              // detail: the NVLink
  kLinkUp,                // detail: the NVLink
  kPcieDegraded,          // the link trained below its maximum width/generation
  kCoolingRestored,       // a cooling loss ended
  kGpuLost,               // fell off the bus
};

constexpr std::string_view TruthEventName(TruthEvent event) {
  switch (event) {
    case TruthEvent::kDegradationStart:
      return "degradation_start";
    case TruthEvent::kFirstMemorySlowdown:
      return "first_memory_slowdown";
    case TruthEvent::kFirstThermalSlowdown:
      return "first_thermal_slowdown";
    case TruthEvent::kFirstHwSlowdown:
      return "first_hw_slowdown";
    case TruthEvent::kFirstPowerBrake:
      return "first_power_brake";
    case TruthEvent::kFirstXid:
      return "first_xid";
    case TruthEvent::kXid:
      return "xid";
    case TruthEvent::kUncorrectableEcc:
      return "uncorrectable_ecc";
    case TruthEvent::kRowRemapFailure:
      return "row_remap_failure";
    case TruthEvent::kLinkDown:
      return "link_down";
    case TruthEvent::kLinkUp:
      return "link_up";
    case TruthEvent::kPcieDegraded:
      return "pcie_degraded";
    case TruthEvent::kCoolingRestored:
      return "cooling_restored";
    case TruthEvent::kGpuLost:
      return "gpu_lost";
  }
  return "unknown";
}

struct TruthRecord {
  TruthEvent event = TruthEvent::kDegradationStart;
  int64_t t_ms = 0;
  int scenario = -1;    // index into the fleet's scenario list; -1: none
  int64_t detail = -1;  // XID code or link; -1: none
};

// A GPU keeps at most this many records (a link flapping forever must not
// grow without bound); "first_*" events are always kept.
inline constexpr size_t kMaxTruthRecords = 10000;

}  // namespace gpumon::sim
