// gpu::ListProcesses: against the simulator's fake NVML (dlopen, the real
// path), and against scripted entry points for what the fake cannot show:
// older versions only, the longer _v3 layout of drivers 525..530, processes
// starting between the size query and the read, and errors.
#include "gpu/process_list.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gpu/nvml_session.h"

namespace gpumon::gpu {
namespace {

namespace fs = std::filesystem;

std::vector<unsigned int> Pids(const std::vector<GpuProcess>& ps) {
  std::vector<unsigned int> out;
  for (const GpuProcess& p : ps) out.push_back(p.pid);
  return out;
}

TEST(ProcessListFakeNvml, MergesComputeAndGraphicsAndGrowsTheBuffer) {
  const fs::path file =
      fs::temp_directory_path() / ("gpumon-process-list-" + std::to_string(getpid()));
  {
    std::ofstream out(file);
    out << "# simulated\n"
        << "10 1 100\n"
        << "11 1 200 graphics\n"
        << "12 1 300 both\n"
        << "13 0 400\n";
    // More than the first buffer holds.
    for (int pid = 1000; pid < 1040; ++pid) out << pid << " 0 1\n";
  }
  setenv("GPUMON_SIM_SPEC", "h200x2", 1);
  setenv("GPUMON_SIM_PROCESSES", file.c_str(), 1);
  auto session = NvmlSession::Start(GPUMON_FAKE_NVML);
  ASSERT_TRUE(session.ok()) << session.status().message();
  NvmlLibrary& lib = session.value()->library();
  nvmlDevice_t gpu0 = nullptr, gpu1 = nullptr;
  ASSERT_EQ(lib.nvmlDeviceGetHandleByIndex_v2(0, &gpu0), NVML_SUCCESS);
  ASSERT_EQ(lib.nvmlDeviceGetHandleByIndex_v2(1, &gpu1), NVML_SUCCESS);

  auto one = ListProcesses(lib, gpu1);
  ASSERT_TRUE(one.ok()) << one.status().message();
  ASSERT_EQ(Pids(one.value()), (std::vector<unsigned int>{10, 11, 12}));
  const std::vector<GpuProcess>& p = one.value();
  EXPECT_TRUE(p[0].compute);
  EXPECT_FALSE(p[0].graphics);
  EXPECT_EQ(p[0].used_bytes, 100u);
  EXPECT_FALSE(p[0].gpu_instance_id.has_value());  // not MIG
  EXPECT_FALSE(p[1].compute);
  EXPECT_TRUE(p[1].graphics);
  EXPECT_TRUE(p[2].compute);
  EXPECT_TRUE(p[2].graphics);
  EXPECT_EQ(p[2].used_bytes, 300u);

  auto many = ListProcesses(lib, gpu0);
  ASSERT_TRUE(many.ok()) << many.status().message();
  EXPECT_EQ(many->size(), 41u);
  EXPECT_EQ(many->front().pid, 13u);
  EXPECT_EQ(many->back().pid, 1039u);

  session = Status::Error("closed");  // nvmlShutdown
  unsetenv("GPUMON_SIM_PROCESSES");
  fs::remove(file);
}

// --- Scripted entry points ---------------------------------------------------

struct Script {
  std::vector<nvmlProcessInfoCc_t> procs;  // what the "driver" reports
  size_t stride = sizeof(nvmlProcessInfo_t);
  int grow_times = 0;  // calls that report more processes than there is room for
  nvmlReturn_t fail = NVML_SUCCESS;
  int calls = 0;
};
Script g_compute;
Script g_graphics;

nvmlReturn_t Serve(Script& s, unsigned int* count, void* infos, size_t stride, int version) {
  ++s.calls;
  if (s.fail != NVML_SUCCESS) return s.fail;
  if (s.grow_times > 0 || *count < s.procs.size()) {
    if (s.grow_times > 0) --s.grow_times;
    *count = static_cast<unsigned int>(s.procs.size()) + 3;  // and a few more started
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  auto* out = static_cast<unsigned char*>(infos);
  for (size_t i = 0; i < s.procs.size(); ++i) {
    const nvmlProcessInfoCc_t& p = s.procs[i];
    unsigned char* e = out + i * stride;
    if (version == 1) {
      nvmlProcessInfo_v1_t v1{p.pid, p.usedGpuMemory};
      std::memcpy(e, &v1, sizeof(v1));
    } else {
      std::memcpy(e, &p, stride);
    }
  }
  *count = static_cast<unsigned int>(s.procs.size());
  return NVML_SUCCESS;
}

nvmlReturn_t ComputeV3(nvmlDevice_t, unsigned int* c, nvmlProcessInfo_t* i) {
  return Serve(g_compute, c, i, g_compute.stride, 3);
}
nvmlReturn_t ComputeV2(nvmlDevice_t, unsigned int* c, nvmlProcessInfo_v2_t* i) {
  return Serve(g_compute, c, i, sizeof(nvmlProcessInfo_v2_t), 2);
}
nvmlReturn_t ComputeV1(nvmlDevice_t, unsigned int* c, nvmlProcessInfo_v1_t* i) {
  return Serve(g_compute, c, i, sizeof(nvmlProcessInfo_v1_t), 1);
}
nvmlReturn_t GraphicsV1(nvmlDevice_t, unsigned int* c, nvmlProcessInfo_v1_t* i) {
  return Serve(g_graphics, c, i, sizeof(nvmlProcessInfo_v1_t), 1);
}

class ProcessListScripted : public ::testing::Test {
 protected:
  void SetUp() override {
    g_compute = Script();
    g_graphics = Script();
    lib_ = NvmlLibrary::CreateEmptyForTesting();
  }
  nvmlDevice_t device() { return reinterpret_cast<nvmlDevice_t>(this); }
  std::unique_ptr<NvmlLibrary> lib_;
};

TEST_F(ProcessListScripted, DecodesTheLongerV3LayoutOfDrivers525To530) {
  g_compute.procs = {{5, 50, 1, 0, 999}, {6, NVML_VALUE_NOT_AVAILABLE_ULL, 2, 0, 999}};
  g_compute.stride = sizeof(nvmlProcessInfoCc_t);
  lib_->nvmlDeviceGetComputeRunningProcesses_v3 = ComputeV3;
  lib_->set_process_info_v3_size_for_testing(sizeof(nvmlProcessInfoCc_t));
  std::vector<GpuProcess> out;
  ASSERT_EQ(ListProcesses(*lib_, device(), ProcessKind::kCompute, &out), NVML_SUCCESS);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].pid, 6u);
  EXPECT_FALSE(out[1].used_bytes.has_value());  // NVML_VALUE_NOT_AVAILABLE
  EXPECT_EQ(out[1].gpu_instance_id, 2u);
  EXPECT_EQ(out[1].compute_instance_id, 0u);
  EXPECT_TRUE(out[1].compute);

  // Read with the current layout instead, the second entry is garbage: the
  // size matters.
  lib_->set_process_info_v3_size_for_testing(sizeof(nvmlProcessInfo_t));
  out.clear();
  ASSERT_EQ(ListProcesses(*lib_, device(), ProcessKind::kCompute, &out), NVML_SUCCESS);
  EXPECT_NE(out[1].pid, 6u);
}

TEST_F(ProcessListScripted, FallsBackToV2ThenV1) {
  g_compute.procs = {{7, 70, 0xFFFFFFFF, 0xFFFFFFFF, 0}};
  lib_->nvmlDeviceGetComputeRunningProcesses_v2 = ComputeV2;
  lib_->nvmlDeviceGetComputeRunningProcesses = ComputeV1;
  std::vector<GpuProcess> out;
  ASSERT_EQ(ListProcesses(*lib_, device(), ProcessKind::kCompute, &out), NVML_SUCCESS);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].pid, 7u);
  EXPECT_EQ(out[0].used_bytes, 70u);
  EXPECT_EQ(g_compute.calls, 1);

  lib_->nvmlDeviceGetComputeRunningProcesses_v2 = nullptr;
  g_compute.procs = {{8, 80, 0, 0, 0}, {9, 90, 0, 0, 0}};
  out.clear();
  ASSERT_EQ(ListProcesses(*lib_, device(), ProcessKind::kCompute, &out), NVML_SUCCESS);
  ASSERT_EQ(Pids(out), (std::vector<unsigned int>{8, 9}));
  EXPECT_EQ(out[1].used_bytes, 90u);
  EXPECT_FALSE(out[1].gpu_instance_id.has_value());  // v1 has no MIG ids
  // No graphics entry point at all: that kind is empty, the call succeeds.
  auto merged = ListProcesses(*lib_, device());
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  EXPECT_EQ(merged->size(), 2u);
}

TEST_F(ProcessListScripted, GrowsWhenProcessesStartBetweenCalls) {
  for (unsigned int pid = 1; pid <= 20; ++pid) g_compute.procs.push_back({pid, pid, 0, 0, 0});
  g_compute.grow_times = 2;
  lib_->nvmlDeviceGetComputeRunningProcesses_v3 = ComputeV3;
  std::vector<GpuProcess> out;
  ASSERT_EQ(ListProcesses(*lib_, device(), ProcessKind::kCompute, &out), NVML_SUCCESS);
  EXPECT_EQ(out.size(), 20u);
  EXPECT_EQ(g_compute.calls, 3);
  // A list that keeps growing gives up after a few attempts.
  g_compute.grow_times = 100;
  g_compute.calls = 0;
  out.clear();
  EXPECT_EQ(ListProcesses(*lib_, device(), ProcessKind::kCompute, &out),
            NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_TRUE(out.empty());
  EXPECT_LE(g_compute.calls, 4);
}

TEST_F(ProcessListScripted, MergesKindsAndReportsErrors) {
  g_compute.procs = {{3, 30, 0, 0, 0}, {1, 10, 0, 0, 0}};
  g_graphics.procs = {{3, 35, 0, 0, 0}, {2, 20, 0, 0, 0}};
  lib_->nvmlDeviceGetComputeRunningProcesses = ComputeV1;
  lib_->nvmlDeviceGetGraphicsRunningProcesses = GraphicsV1;
  auto merged = ListProcesses(*lib_, device());
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  ASSERT_EQ(Pids(merged.value()), (std::vector<unsigned int>{1, 2, 3}));
  EXPECT_TRUE(merged.value()[2].compute && merged.value()[2].graphics);
  EXPECT_EQ(merged.value()[2].used_bytes, 35u);

  g_graphics.fail = NVML_ERROR_NOT_SUPPORTED;
  merged = ListProcesses(*lib_, device());
  ASSERT_TRUE(merged.ok());
  EXPECT_EQ(merged->size(), 2u);

  g_compute.fail = NVML_ERROR_GPU_IS_LOST;
  merged = ListProcesses(*lib_, device());
  ASSERT_FALSE(merged.ok());
  EXPECT_EQ(merged.status().message(), "NVML compute process list: GPU_IS_LOST");

  auto empty = NvmlLibrary::CreateEmptyForTesting();
  auto none = ListProcesses(*empty, device());
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("no nvmlDevice{Compute,Graphics}RunningProcesses"),
            std::string::npos);
}

}  // namespace
}  // namespace gpumon::gpu
