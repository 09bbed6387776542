// Fault schedules: faults to inject into a simulated fleet at given times.
//
// Contract: a schedule is a ';'-separated list of items, each
// "<kind>:<key>=<value>[:<key>=<value>...]":
//   xid:gpu=2:code=79:at=5s   queue XID 79 on GPU 2 five seconds in
//   lost:gpu=3:at=10s         GPU 3 falls off the bus (also raises XID 79)
//   hot:gpu=1:at=0s           GPU 1's cooling fails, so it throttles under load
//   ecc:gpu=0:at=1m           uncorrectable ECC error (XID 48, row remap pending)
// gpu is required and must be < the fleet size; at is a Prometheus duration
// (common/duration.h), default 0s; code (xid only) is 1..65535. Empty items
// are ignored. Errors quote the bad item. Parsed faults are sorted by time,
// keeping schedule order for equal times.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace gpumon::sim {

enum class FaultKind { kXid, kLost, kHot, kEcc };

struct Fault {
  FaultKind kind = FaultKind::kXid;
  int gpu = 0;
  uint32_t xid = 0;  // kXid only
  int64_t at_ms = 0;
  std::string text;  // the item as written, for messages
};

Result<std::vector<Fault>> ParseFaultSchedule(std::string_view text, int gpu_count);

}  // namespace gpumon::sim
