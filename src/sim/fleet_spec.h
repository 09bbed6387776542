// Fleet specifications: which GPU models a simulated host has, and how many.
//
// Contract: a spec is a comma-separated list of "<model key>x<count>" parts,
// e.g. "h200x8" or "h200x4,rtx4080sx1"; a bare key means one GPU. Counts are
// >= 1 and the total is at most kMaxFleetSize. Errors name the offending part
// and list the valid model keys. GPUs are numbered in spec order.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "sim/profile.h"

namespace gpumon::sim {

inline constexpr int kMaxFleetSize = 100000;

struct FleetSpecEntry {
  const GpuProfile* profile = nullptr;
  int count = 0;
};

struct FleetSpec {
  std::vector<FleetSpecEntry> entries;
  int total = 0;

  // Profile of the GPU with fleet-wide index `index` (0 <= index < total).
  const GpuProfile& ProfileOf(int index) const;
};

Result<FleetSpec> ParseFleetSpec(std::string_view text);

}  // namespace gpumon::sim
