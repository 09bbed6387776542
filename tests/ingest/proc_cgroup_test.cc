// ingest/proc_cgroup.h: container ids from cgroup files as each runtime
// names them, in cgroup v1 and v2.
#include "ingest/proc_cgroup.h"

#include <gtest/gtest.h>

#include <string>

#include "fake_proc.h"

namespace gpumon::ingest {
namespace {

const std::string kId = "3f4b9c1e2d7a8b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c";
const std::string kOther = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

TEST(ContainerIdFromCgroup, KnowsTheRuntimes) {
  struct Case {
    std::string text;
    std::string id;
  };
  const std::vector<Case> cases = {
      // Docker, cgroup v1 (cgroupfs driver) and v2 (systemd driver).
      {"12:memory:/docker/" + kId + "\n11:cpu,cpuacct:/docker/" + kId + "\n", kId},
      {"0::/system.slice/docker-" + kId + ".scope\n", kId},
      // Kubernetes + containerd, systemd driver (v2) and cgroupfs driver (v1).
      {"0::/kubepods.slice/kubepods-burstable.slice/"
       "kubepods-burstable-pod1b2c3d4e_5f60_7182_93a4_b5c6d7e8f901.slice/cri-containerd-" +
           kId + ".scope\n",
       kId},
      {"4:devices:/kubepods/besteffort/pod1b2c3d4e-5f60-7182-93a4-b5c6d7e8f901/" + kId + "\n", kId},
      // CRI-O; its conmon scope is not the container.
      {"0::/kubepods.slice/kubepods-pod1.slice/crio-" + kId + ".scope\n", kId},
      {"0::/kubepods.slice/kubepods-pod1.slice/crio-conmon-" + kId + ".scope\n", ""},
      // Podman, rootful and rootless (the payload's "container" sub-cgroup).
      {"0::/machine.slice/libpod-" + kId + ".scope\n", kId},
      {"0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" + kId +
           ".scope/container\n",
       kId},
      {"0::/machine.slice/libpod-conmon-" + kId + ".scope\n", ""},
      // Upper-case hex is normalised.
      {"0::/docker/" +
           std::string("3F4B9C1E2D7A8B6C5D4E3F2A1B0C9D8E7F6A5B4C3D2E1F0A9B8C7D6E5F4A3B2C") + "\n",
       kId},
      // Nested: the deepest id wins (a container inside a container).
      {"0::/docker/" + kOther + "/docker/" + kId + "\n", kId},
      // Not in a container.
      {"0::/user.slice/user-1000.slice/session-2.scope\n", ""},
      {"12:pids:/\n0::/\n", ""},
      {"0::/init.scope\n", ""},
      // Not 64 hex characters.
      {"0::/docker/" + kId.substr(1) + "\n", ""},
      {"0::/docker/" + kId.substr(1) + "g\n", ""},
      {"", ""},
      {"garbage without colons\n", ""},
  };
  for (const Case& c : cases) EXPECT_EQ(ContainerIdFromCgroup(c.text), c.id) << c.text;
}

TEST(ReadContainerId, ReadsTheProcessCgroupFile) {
  testing::FakeProc proc;
  proc.Cgroup(10, "0::/system.slice/docker-" + kId + ".scope\n");
  proc.Cgroup(11, "0::/user.slice\n");
  EXPECT_EQ(ReadContainerId(proc.root(), 10), kId);
  EXPECT_EQ(ReadContainerId(proc.root(), 11), "");
  EXPECT_EQ(ReadContainerId(proc.root(), 12), "");  // no such process
}

}  // namespace
}  // namespace gpumon::ingest
