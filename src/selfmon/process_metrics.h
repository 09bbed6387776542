// The standard process_* self-metrics of Prometheus client libraries, read
// from /proc/self at render time: process_cpu_seconds_total,
// process_resident_memory_bytes, process_virtual_memory_bytes,
// process_open_fds, process_max_fds and process_start_time_seconds.
//
// Contract: /proc is read once per render (a pre-collect hook); where it
// cannot be read the families are absent rather than zero. process_max_fds
// is the soft RLIMIT_NOFILE, absent when unlimited.
#pragma once

#include "common/status.h"
#include "selfmon/registry.h"

namespace gpumon::selfmon {

Status RegisterProcessMetrics(Registry& registry);

}  // namespace gpumon::selfmon
