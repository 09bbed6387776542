// The container a process runs in, from its cgroup membership
// (/proc/<pid>/cgroup).
//
// Contract:
// - ContainerIdFromCgroup reads the text of a cgroup file, cgroup v1
//   ("N:controllers:/path" lines) or v2 ("0::/path"), and returns the
//   64-hex container id of the runtimes that name their cgroups after it:
//   Docker ("/docker/<id>", "docker-<id>.scope"), containerd and Kubernetes
//   with either cgroup driver ("/kubepods/.../pod<uid>/<id>",
//   "cri-containerd-<id>.scope"), CRI-O ("crio-<id>.scope"), Podman
//   ("libpod-<id>.scope", also ".../libpod-<id>.scope/container"). The
//   deepest matching path component wins; conmon's own scopes
//   ("crio-conmon-<id>", "libpod-conmon-<id>") are not containers. The id is
//   returned in lower case; "" when the process is in no container (or the
//   agent sees only its own cgroup namespace root, "0::/").
// - ReadContainerId reads <proc_root>/<pid>/cgroup; "" when unreadable.
// - Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace gpumon::ingest {

std::string ContainerIdFromCgroup(std::string_view cgroup_text);

std::string ReadContainerId(const std::string& proc_root, int pid);

}  // namespace gpumon::ingest
