// NvmlJobGpuResolver against the simulator's fake NVML (loaded with dlopen,
// as the agent loads NVML) with GPUMON_SIM_PROCESSES naming the processes:
// this test process on a real /proc and real sockets, and fake /proc trees
// for containers, network namespaces and the agent's GPU selection.
#include "ingest/nvml_job_gpus.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bit>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "fake_proc.h"
#include "gpu/nvml_session.h"

namespace gpumon::ingest {
namespace {

using testing::FakeProc;

const std::string kContainerA = std::string(64, 'a');
const std::string kContainerB = std::string(63, 'b') + "1";

class NvmlJobGpusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    processes_ = std::filesystem::temp_directory_path() /
                 ("gpumon-job-gpus-procs-" + std::to_string(getpid()));
    setenv("GPUMON_SIM_SPEC", "h200x2", 1);
    setenv("GPUMON_SIM_PROCESSES", processes_.c_str(), 1);
    WriteProcesses("");
    auto session = gpu::NvmlSession::Start(GPUMON_FAKE_NVML);
    ASSERT_TRUE(session.ok()) << session.status().message();
    session_ = std::move(session).value();
    for (unsigned int i = 0; i < 2; ++i) {
      nvmlDevice_t d = nullptr;
      char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
      ASSERT_EQ(lib().nvmlDeviceGetHandleByIndex_v2(i, &d), NVML_SUCCESS);
      ASSERT_EQ(lib().nvmlDeviceGetUUID(d, uuid, sizeof(uuid)), NVML_SUCCESS);
      gpus_.push_back(GpuRef{i, uuid});
    }
  }
  void TearDown() override {
    session_.reset();
    unsetenv("GPUMON_SIM_PROCESSES");
    std::error_code ec;
    std::filesystem::remove(processes_, ec);
  }

  // Replaces the simulated process list (rename: the fake sees a new file).
  void WriteProcesses(const std::string& text) {
    const std::filesystem::path tmp = processes_.string() + ".tmp";
    std::ofstream(tmp, std::ios::trunc) << "# simulated GPU processes\n" << text;
    std::filesystem::rename(tmp, processes_);
  }
  gpu::NvmlLibrary& lib() { return session_->library(); }

  std::filesystem::path processes_;
  std::unique_ptr<gpu::NvmlSession> session_;
  std::vector<GpuRef> gpus_;
};

TEST_F(NvmlJobGpusTest, ThisProcessOnGpu1ByPidAndByPeer) {
  WriteProcesses(std::to_string(getpid()) + " 1 1073741824\n");
  NvmlJobGpuResolver resolver(&lib(), gpus_);

  JobPlacement p = resolver.ForPid(getpid());
  EXPECT_EQ(p.pid, getpid());
  EXPECT_EQ(p.gpus, (std::vector<GpuRef>{gpus_[1]}));
  EXPECT_EQ(p.gpus[0].index, 1u);
  EXPECT_EQ(p.gpus[0].uuid.rfind("GPU-", 0), 0u);

  // A real loopback connection: the client side is the "push".
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  ASSERT_EQ(listen(listener, 1), 0);
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len), 0);
  const int client = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(connect(client, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  const int server = accept(listener, nullptr, nullptr);
  sockaddr_in local{};
  len = sizeof(local);
  ASSERT_EQ(getsockname(client, reinterpret_cast<sockaddr*>(&local), &len), 0);
  const std::string peer = "127.0.0.1:" + std::to_string(ntohs(local.sin_port));

  JobPlacement q = resolver.ForPeer(peer);
  EXPECT_EQ(q.pid, getpid()) << peer;
  EXPECT_EQ(q.gpus, (std::vector<GpuRef>{gpus_[1]}));
  // The same peer as a dual-stack server prints it.
  EXPECT_EQ(resolver.ForPeer("[::ffff:127.0.0.1]:" + std::to_string(ntohs(local.sin_port))).pid,
            getpid());
  close(server);
  close(client);
  close(listener);

  // Not a socket of this host, or not an address at all: empty, no error.
  EXPECT_FALSE(resolver.ForPeer("192.0.2.1:1").pid.has_value());
  EXPECT_FALSE(resolver.ForPeer("not an address").pid.has_value());
  EXPECT_TRUE(resolver.ForPeer("").gpus.empty());
}

TEST_F(NvmlJobGpusTest, ContainerFallbackAndMultipleGpus) {
  FakeProc proc;
  // 500: in container A, no GPU context (e.g. the pushing launcher).
  // 600: container A, on GPU 0.  700: container B, on both GPUs.
  // 800: no container, no GPU.
  proc.Cgroup(500, "0::/system.slice/docker-" + kContainerA + ".scope\n");
  proc.Cgroup(600, "0::/system.slice/docker-" + kContainerA + ".scope\n");
  proc.Cgroup(700,
              "0::/kubepods.slice/kubepods-pod1.slice/cri-containerd-" + kContainerB + ".scope\n");
  proc.Cgroup(800, "0::/user.slice\n");
  WriteProcesses("600 0 100\n700 1 100\n700 0 100 graphics\n");
  NvmlJobGpuResolver resolver(&lib(), gpus_, proc.root());

  JobPlacement launcher = resolver.ForPid(500);
  EXPECT_EQ(launcher.pid, 500);
  EXPECT_EQ(launcher.container_id, kContainerA);
  EXPECT_EQ(launcher.gpus, (std::vector<GpuRef>{gpus_[0]}));

  JobPlacement worker = resolver.ForPid(600);
  EXPECT_EQ(worker.container_id, kContainerA);
  EXPECT_EQ(worker.gpus, (std::vector<GpuRef>{gpus_[0]}));

  // On two GPUs (compute on 1, graphics on 0): both, sorted by index.
  EXPECT_EQ(resolver.ForPid(700).gpus, (std::vector<GpuRef>{gpus_[0], gpus_[1]}));

  JobPlacement lone = resolver.ForPid(800);
  EXPECT_EQ(lone.pid, 800);
  EXPECT_EQ(lone.container_id, "");
  EXPECT_TRUE(lone.gpus.empty());
  EXPECT_FALSE(resolver.ForPid(0).pid.has_value());
}

TEST_F(NvmlJobGpusTest, OnlyTheAgentsGpusWithItsIndexLabels) {
  FakeProc proc;
  WriteProcesses("600 0 100\n601 1 100\n");
  // The agent exports only NVML's GPU 1, labelled gpu="7"; an unknown UUID
  // is skipped.
  NvmlJobGpuResolver resolver(
      &lib(), {GpuRef{7, gpus_[1].uuid}, GpuRef{8, "GPU-00000000-0000-0000-0000-000000000000"}},
      proc.root());
  EXPECT_TRUE(resolver.ForPid(600).gpus.empty());
  EXPECT_EQ(resolver.ForPid(601).gpus, (std::vector<GpuRef>{GpuRef{7, gpus_[1].uuid}}));
}

TEST_F(NvmlJobGpusTest, FindsDevicesByUuidWithoutTheLookUpCall) {
  FakeProc proc;
  WriteProcesses("601 1 100\n");
  lib().nvmlDeviceGetHandleByUUID = nullptr;  // an NVML without it
  NvmlJobGpuResolver resolver(&lib(), gpus_, proc.root());
  EXPECT_EQ(resolver.ForPid(601).gpus, (std::vector<GpuRef>{gpus_[1]}));
}

TEST_F(NvmlJobGpusTest, PeerInTheAgentsAndInAJobsNetworkNamespace) {
  if constexpr (std::endian::native != std::endian::little) GTEST_SKIP();
  FakeProc proc;
  // Host namespace: 10.0.0.5:40000 is owned by pid 600 (fd 4).
  proc.Write("net/tcp", std::string(FakeProc::kTcpHeader) +
                            FakeProc::Line(0, "0500000A:9C40", "0100000A:2327", "01", 9001));
  proc.Write("net/tcp6", FakeProc::kTcp6Header);
  proc.Fd(600, 0, "/dev/null");
  proc.Fd(600, 4, "socket:[9001]");
  // Pid 700 runs in a network namespace of its own, where it is
  // 172.17.0.2:50000.
  proc.NetNs(700, "4026532001");
  proc.Write("700/net/tcp", std::string(FakeProc::kTcpHeader) +
                                FakeProc::Line(0, "020011AC:C350", "010011AC:2327", "01", 9002));
  proc.Fd(700, 9, "socket:[9002]");
  // Pid 900 owns a socket but is on no GPU and in no container.
  proc.Write("net/tcp", std::string(FakeProc::kTcpHeader) +
                            FakeProc::Line(0, "0500000A:9C40", "0100000A:2327", "01", 9001) +
                            FakeProc::Line(1, "0600000A:9C41", "0100000A:2327", "01", 9003));
  proc.Fd(900, 3, "socket:[9003]");
  WriteProcesses("600 0 1\n700 1 1\n");
  NvmlJobGpuResolver resolver(&lib(), gpus_, proc.root());

  JobPlacement host = resolver.ForPeer("10.0.0.5:40000");
  EXPECT_EQ(host.pid, 600);
  EXPECT_EQ(host.gpus, (std::vector<GpuRef>{gpus_[0]}));
  JobPlacement job = resolver.ForPeer("172.17.0.2:50000");
  EXPECT_EQ(job.pid, 700);
  EXPECT_EQ(job.gpus, (std::vector<GpuRef>{gpus_[1]}));
  JobPlacement cpu = resolver.ForPeer("10.0.0.6:40001");
  EXPECT_EQ(cpu.pid, 900);
  EXPECT_TRUE(cpu.gpus.empty());
  EXPECT_FALSE(resolver.ForPeer("10.0.0.7:1").pid.has_value());
}

TEST_F(NvmlJobGpusTest, AnswersAreCachedForThePeriod) {
  FakeProc proc;
  WriteProcesses("600 0 1\n");
  NvmlJobGpuResolver resolver(&lib(), gpus_, proc.root());
  EXPECT_EQ(resolver.ForPid(600).gpus, (std::vector<GpuRef>{gpus_[0]}));
  WriteProcesses("600 1 1\n");
  // Within the (5 s) period the cached answer stands; a fresh one after.
  EXPECT_EQ(resolver.ForPid(600).gpus, (std::vector<GpuRef>{gpus_[0]}));
  resolver.SetCachePeriod(std::chrono::milliseconds(0));
  EXPECT_EQ(resolver.ForPid(600).gpus, (std::vector<GpuRef>{gpus_[1]}));
  WriteProcesses("");
  EXPECT_TRUE(resolver.ForPid(600).gpus.empty());
}

TEST_F(NvmlJobGpusTest, WithoutNvmlStillTellsPidAndContainer) {
  FakeProc proc;
  proc.Cgroup(500, "0::/docker/" + kContainerA + "\n");
  WriteProcesses("500 0 1\n");
  NvmlJobGpuResolver resolver(nullptr, gpus_, proc.root());
  JobPlacement p = resolver.ForPid(500);
  EXPECT_EQ(p.pid, 500);
  EXPECT_EQ(p.container_id, kContainerA);
  EXPECT_TRUE(p.gpus.empty());
}

TEST_F(NvmlJobGpusTest, ConcurrentCallersAgree) {
  FakeProc proc;
  proc.Cgroup(500, "0::/docker/" + kContainerA + "\n");
  proc.Cgroup(600, "0::/docker/" + kContainerA + "\n");
  WriteProcesses("600 1 1\n");
  NvmlJobGpuResolver resolver(&lib(), gpus_, proc.root());
  resolver.SetCachePeriod(std::chrono::milliseconds(0));  // every call does the work
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        if (resolver.ForPid(500 + 100 * (i % 2)).gpus != std::vector<GpuRef>{gpus_[1]}) {
          ++wrong[t];
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong, std::vector<int>(4, 0));
}

}  // namespace
}  // namespace gpumon::ingest
