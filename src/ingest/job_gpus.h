// JobGpuResolver: finds the GPUs a pushing process runs on, so job metrics
// carry the labels of the GPU series they belong to.
//
// Contract:
// - ForPeer(remote_address) maps the TCP peer of a push ("ip:port" as
//   http::HttpRequest::remote_address has it) to the process that owns that
//   socket on this host (the /proc/net/tcp{,6} entry whose local address is
//   the peer's → socket inode → /proc/<pid>/fd), then to its GPUs. A peer on another host, or a process this agent may not inspect,
//   gives an empty placement, never an error: the push is still accepted.
// - ForPid(pid) maps a process to the GPUs it has contexts on: NVML's
//   compute and graphics process lists; when the process itself is on no
//   GPU, the GPUs of the processes of the same container (the container id
//   read from /proc/<pid>/cgroup).
// - Only GPUs of this agent are reported, with the agent's `gpu` index and
//   uuid. Results for a pid are cached for a few seconds; a call never
//   blocks on NVML for longer than one process-list query per GPU.
// - Thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpumon::ingest {

struct GpuRef {
  unsigned index = 0;  // the agent's `gpu` label
  std::string uuid;
  bool operator==(const GpuRef&) const = default;
};

struct JobPlacement {
  std::optional<int> pid;
  std::string container_id;  // empty when not in a container
  std::vector<GpuRef> gpus;  // sorted by index
};

// The label names of the GPU series (native: hostname, gpu, uuid; dcgm:
// Hostname, gpu, UUID) and this agent's host name.
struct GpuLabelNames {
  std::string hostname_label = "hostname";
  std::string gpu_label = "gpu";
  std::string uuid_label = "uuid";
  std::string hostname;
};

class JobGpuResolver {
 public:
  virtual ~JobGpuResolver() = default;
  virtual JobPlacement ForPeer(std::string_view remote_address) = 0;
  virtual JobPlacement ForPid(int pid) = 0;
};

}  // namespace gpumon::ingest
