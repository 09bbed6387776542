#include "ingest/nvml_job_gpus.h"

#include <unistd.h>

#include <algorithm>
#include <set>
#include <utility>

#include "gpu/process_list.h"
#include "ingest/proc_cgroup.h"
#include "ingest/proc_sockets.h"

namespace gpumon::ingest {
namespace {

constexpr size_t kMaxCachedPids = 4096;
constexpr size_t kMaxRecentOwners = 32;

void SortUnique(std::vector<GpuRef>* gpus) {
  std::sort(gpus->begin(), gpus->end(), [](const GpuRef& a, const GpuRef& b) {
    return a.index != b.index ? a.index < b.index : a.uuid < b.uuid;
  });
  gpus->erase(std::unique(gpus->begin(), gpus->end()), gpus->end());
}

// The network namespace of a process ("net:[4026531840]"), or "".
std::string NetNamespace(const std::string& proc_root, const std::string& pid) {
  const std::string link = proc_root + "/" + pid + "/ns/net";
  char target[64];
  const ssize_t n = readlink(link.c_str(), target, sizeof(target));
  if (n <= 0 || static_cast<size_t>(n) >= sizeof(target)) return {};
  return std::string(target, static_cast<size_t>(n));
}

}  // namespace

NvmlJobGpuResolver::NvmlJobGpuResolver(gpu::NvmlLibrary* nvml, std::vector<GpuRef> gpus,
                                       std::string proc_root)
    : nvml_(nvml),
      gpus_(std::move(gpus)),
      proc_root_(std::move(proc_root)),
      procfs_(IsProcfs(proc_root_)),
      handles_(gpus_.size()) {}

void NvmlJobGpuResolver::SetCachePeriod(std::chrono::milliseconds period) {
  std::lock_guard<std::mutex> lock(mu_);
  period_ = period;
  by_pid_.clear();
  snapshot_at_.reset();
}

nvmlDevice_t NvmlJobGpuResolver::DeviceFor(size_t gpu) {
  Handle& h = handles_[gpu];
  if (h.looked_up) return h.device;
  h.looked_up = true;
  const std::string& uuid = gpus_[gpu].uuid;
  if (nvml_->nvmlDeviceGetHandleByUUID != nullptr) {
    nvmlDevice_t d = nullptr;
    if (nvml_->nvmlDeviceGetHandleByUUID(uuid.c_str(), &d) == NVML_SUCCESS) h.device = d;
    return h.device;
  }
  // Without the look-up call: compare the UUIDs of all devices.
  unsigned int count = 0;
  if (nvml_->nvmlDeviceGetCount_v2 == nullptr || nvml_->nvmlDeviceGetHandleByIndex_v2 == nullptr ||
      nvml_->nvmlDeviceGetUUID == nullptr || nvml_->nvmlDeviceGetCount_v2(&count) != NVML_SUCCESS) {
    return nullptr;
  }
  for (unsigned int i = 0; i < count; ++i) {
    nvmlDevice_t d = nullptr;
    char buf[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
    if (nvml_->nvmlDeviceGetHandleByIndex_v2(i, &d) == NVML_SUCCESS &&
        nvml_->nvmlDeviceGetUUID(d, buf, sizeof(buf)) == NVML_SUCCESS && uuid == buf) {
      h.device = d;
      break;
    }
  }
  return h.device;
}

void NvmlJobGpuResolver::RefreshSnapshot(Clock::time_point now) {
  // Fresh, or taken for this same call (a zero period must not query twice).
  if (snapshot_at_ && (*snapshot_at_ == now || now - *snapshot_at_ < period_)) return;
  snapshot_at_ = now;
  snapshot_.clear();
  if (nvml_ == nullptr) return;
  for (size_t i = 0; i < gpus_.size(); ++i) {
    nvmlDevice_t d = DeviceFor(i);
    if (d == nullptr) continue;
    Result<std::vector<gpu::GpuProcess>> procs = gpu::ListProcesses(*nvml_, d);
    if (!procs.ok()) continue;
    for (const gpu::GpuProcess& p : procs.value()) {
      snapshot_[static_cast<int>(p.pid)].push_back(gpus_[i]);
    }
  }
  for (auto& [pid, gpus] : snapshot_) SortUnique(&gpus);
}

JobPlacement NvmlJobGpuResolver::Resolve(int pid, Clock::time_point now) {
  if (auto it = by_pid_.find(pid); it != by_pid_.end() && now - it->second.at < period_) {
    return it->second.placement;
  }
  RefreshSnapshot(now);
  JobPlacement placement;
  placement.pid = pid;
  placement.container_id = ReadContainerId(proc_root_, pid);
  if (auto it = snapshot_.find(pid); it != snapshot_.end()) {
    placement.gpus = it->second;
  } else if (!placement.container_id.empty()) {
    // Not on a GPU itself: the GPUs of its container's processes.
    for (const auto& [other, gpus] : snapshot_) {
      if (ReadContainerId(proc_root_, other) == placement.container_id) {
        placement.gpus.insert(placement.gpus.end(), gpus.begin(), gpus.end());
      }
    }
    SortUnique(&placement.gpus);
  }
  if (period_.count() > 0) {
    if (by_pid_.size() >= kMaxCachedPids) {
      for (auto it = by_pid_.begin(); it != by_pid_.end();) {
        it = now - it->second.at >= period_ ? by_pid_.erase(it) : std::next(it);
      }
      if (by_pid_.size() >= kMaxCachedPids) by_pid_.clear();
    }
    by_pid_[pid] = Cached{now, placement};
  }
  return placement;
}

JobPlacement NvmlJobGpuResolver::ForPid(int pid) {
  if (pid <= 0) return {};
  std::lock_guard<std::mutex> lock(mu_);
  return Resolve(pid, Clock::now());
}

std::vector<int> NvmlJobGpuResolver::CandidatePids(Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  RefreshSnapshot(now);
  std::vector<int> pids;
  pids.reserve(snapshot_.size() + recent_owners_.size());
  for (const auto& [pid, gpus] : snapshot_) pids.push_back(pid);
  pids.insert(pids.end(), recent_owners_.begin(), recent_owners_.end());
  return pids;
}

JobPlacement NvmlJobGpuResolver::ForPeer(std::string_view remote_address) {
  const std::optional<SocketAddress> addr = ParseSocketAddress(remote_address);
  if (!addr) return {};
  const Clock::time_point now = Clock::now();
  const std::vector<int> candidates = CandidatePids(now);
  std::optional<uint64_t> inode;
  bool netlink = procfs_;
  if (netlink) inode = FindLocalSocketInodeNetlink(*addr, &netlink);
  if (!netlink) inode = FindLocalSocketInodeIn(proc_root_ + "/net", *addr);
  if (!inode) {
    // A job in a network namespace of its own: look in the GPU processes'.
    std::set<std::string> seen{NetNamespace(proc_root_, "self")};
    for (int pid : candidates) {
      const std::string ns = NetNamespace(proc_root_, std::to_string(pid));
      if (ns.empty() || !seen.insert(ns).second) continue;
      inode = FindLocalSocketInodeIn(proc_root_ + "/" + std::to_string(pid) + "/net", *addr);
      if (inode) break;
    }
  }
  if (!inode) return {};
  const std::optional<int> owner = FindSocketOwner(proc_root_, *inode, candidates);
  if (!owner) return {};
  std::lock_guard<std::mutex> lock(mu_);
  if (std::find(recent_owners_.begin(), recent_owners_.end(), *owner) == recent_owners_.end()) {
    recent_owners_.push_front(*owner);
    if (recent_owners_.size() > kMaxRecentOwners) recent_owners_.pop_back();
  }
  return Resolve(*owner, now);
}

}  // namespace gpumon::ingest
