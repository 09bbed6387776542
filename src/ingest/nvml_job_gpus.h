// NvmlJobGpuResolver: the JobGpuResolver (job_gpus.h) of the agent, backed
// by NVML's process lists and /proc.
//
// Construction (the agent does this once, after GPU discovery):
//   NvmlJobGpuResolver resolver(&session->library(),  // or nullptr: no NVML
//                               {{0, "GPU-..."}, {1, "GPU-..."}},
//                               "/proc");
// - `nvml` is the agent's loaded, initialized NVML (NvmlSession::library());
//   it must outlive the resolver. nullptr (no NVML, e.g. the agent runs
//   without GPUs) gives placements with pid and container id but no GPUs.
// - `gpus` are the GPUs this agent exports: each the `gpu` label value the
//   GPU series carry and the GPU's NVML UUID ("GPU-..."; a MIG device's
//   "MIG-..." UUID works too). Only these GPUs are ever reported, with these
//   index values. Each is found by nvmlDeviceGetHandleByUUID (by comparing
//   the UUIDs of all devices when the library lacks that call), once, on
//   first use; a UUID NVML does not know is skipped.
// - `proc_root` is where /proc is; tests point it at a fake tree.
//
// Behaviour (in addition to job_gpus.h's contract):
// - The GPU processes are one snapshot of every GPU's compute and graphics
//   lists (gpu/process_list.h), taken at most once per cache period; a GPU
//   whose list fails contributes nothing to that snapshot.
// - ForPid(pid): the GPUs whose lists hold pid; when none, and pid is in a
//   container (ingest/proc_cgroup.h), the GPUs of the listed processes of
//   the same container. container_id is filled whenever /proc tells it.
//   The answer for a pid is cached for the cache period (default 5 s).
// - ForPeer("ip:port"): the socket whose local address is the peer's in
//   the agent's network namespace (asked of the kernel's sock_diag netlink
//   interface when proc_root is a real procfs, since reading
//   <proc_root>/net/tcp{,6} costs milliseconds on large hosts; the tables
//   otherwise, or when netlink is refused), else in the
//   network namespaces of the GPU processes (<proc_root>/<pid>/net, so a
//   containerised job with its own network is found too); then its owner
//   among the GPU processes and recent owners first, then all processes
//   (ingest/proc_sockets.h); then ForPid. An address that does not parse, a
//   peer on another host, or a socket whose owner this agent may not see
//   gives an empty placement.
// - Thread-safe: one mutex guards the caches; /proc scans for ForPeer run
//   outside it.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/nvml_api.h"
#include "gpu/nvml_library.h"
#include "ingest/job_gpus.h"

namespace gpumon::ingest {

class NvmlJobGpuResolver : public JobGpuResolver {
 public:
  NvmlJobGpuResolver(gpu::NvmlLibrary* nvml /*nullable*/, std::vector<GpuRef> gpus,
                     std::string proc_root = "/proc");

  JobPlacement ForPeer(std::string_view remote_address) override;
  JobPlacement ForPid(int pid) override;

  // The cache period for pid answers and the GPU process snapshot (default
  // 5 s); 0 disables caching. For tests and tuning.
  void SetCachePeriod(std::chrono::milliseconds period);

 private:
  using Clock = std::chrono::steady_clock;
  struct Cached {
    Clock::time_point at;
    JobPlacement placement;
  };
  struct Handle {
    bool looked_up = false;
    nvmlDevice_t device = nullptr;
  };

  // Refreshes snapshot_ when stale. Requires mu_.
  void RefreshSnapshot(Clock::time_point now);
  nvmlDevice_t DeviceFor(size_t gpu);  // requires mu_
  // The GPU processes, then recent socket owners.
  std::vector<int> CandidatePids(Clock::time_point now);
  JobPlacement Resolve(int pid, Clock::time_point now);  // requires mu_

  gpu::NvmlLibrary* nvml_;
  std::vector<GpuRef> gpus_;
  std::string proc_root_;
  bool procfs_;  // proc_root_ is a real procfs: ask sock_diag, not the tables

  std::mutex mu_;
  std::chrono::milliseconds period_{5000};
  std::vector<Handle> handles_;  // per gpus_ entry
  std::optional<Clock::time_point> snapshot_at_;
  std::map<int, std::vector<GpuRef>> snapshot_;  // pid -> GPUs (sorted)
  std::map<int, Cached> by_pid_;
  std::deque<int> recent_owners_;  // pids that owned pushing sockets lately
};

}  // namespace gpumon::ingest
