// The simulated GPU processes: the GPUMON_SIM_PROCESSES file format
// (sim/process_file.h) and the fake NVML's process lists and UUID look-up,
// loaded with dlopen as gpumon loads NVML.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fake_nvml_loader.h"
#include "gpu/nvml_api.h"
#include "sim/process_file.h"

namespace {

namespace fs = std::filesystem;
using gpumon::sim::ParseProcessFile;
using gpumon::sim::ProcessFile;
using gpumon::sim::SimProcess;

// A file under a fresh temporary directory, removed with it.
class TempDir {
 public:
  TempDir() {
    dir_ = fs::temp_directory_path() /
           ("gpumon-sim-procs-" + std::to_string(getpid()) + "-" + std::to_string(counter_++));
    fs::create_directories(dir_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string Write(const std::string& name, const std::string& text) const {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
    return p.string();
  }
  // Replaces the file atomically (rename), as a careful writer does.
  std::string Replace(const std::string& name, const std::string& text) const {
    const std::string tmp = Write(name + ".tmp", text);
    fs::rename(tmp, dir_ / name);
    return (dir_ / name).string();
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

 private:
  static inline int counter_ = 0;
  fs::path dir_;
};

TEST(ProcessFileFormat, ParsesLinesCommentsAndKinds) {
  auto r = ParseProcessFile(
      "# pid gpu bytes\n"
      "100 0 1024\n"
      "\n"
      "  200\t1 2048   # trailing comment\n"
      "300 1 0 graphics\n"
      "400 0 5 both\r\n",
      2, "procs");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 4u);
  EXPECT_EQ((*r)[0], (SimProcess{100, 0, 1024, true, false}));
  EXPECT_EQ((*r)[1], (SimProcess{200, 1, 2048, true, false}));
  EXPECT_EQ((*r)[2], (SimProcess{300, 1, 0, false, true}));
  EXPECT_EQ((*r)[3], (SimProcess{400, 0, 5, true, true}));
}

TEST(ProcessFileFormat, RejectsBadLinesNamingThem) {
  struct Case {
    const char* text;
    const char* message;
  };
  for (const Case& c : std::vector<Case>{
           {"1 0\n", "procs:1: expected \"pid gpu_index used_bytes [kind]\", got 2 fields"},
           {"# ok\n0 0 1\n", "procs:2: pid \"0\" must be an integer in 1..2147483647"},
           {"2147483648 0 1\n", "procs:1: pid \"2147483648\""},
           {"x 0 1\n", "procs:1: pid \"x\""},
           {"1 2 1\n", "procs:1: gpu_index \"2\" must be an integer in 0..1"},
           {"1 -1 1\n", "procs:1: gpu_index \"-1\""},
           {"1 0 1.5\n", "procs:1: used_bytes \"1.5\""},
           {"1 0 18446744073709551615\n", "procs:1: used_bytes"},
           {"1 0 1 video\n", "procs:1: kind \"video\" must be compute, graphics or both"},
           {"1 0 1\n1 0 2\n", "procs:2: pid 1 is listed twice on GPU 0"},
           {"1 0 1 compute extra\n", "got 5 fields"},
       }) {
    auto r = ParseProcessFile(c.text, 2, "procs");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.status().message().find(c.message), std::string::npos)
        << c.text << " -> " << r.status().message();
  }
  // The same pid on two GPUs is fine.
  EXPECT_TRUE(ParseProcessFile("1 0 1\n1 1 1\n", 2, "procs").ok());
}

TEST(ProcessFileWatch, AbsentMeansNoneAndChangesAreReread) {
  TempDir dir;
  ProcessFile none("", 2);
  ASSERT_TRUE(none.Current().ok());
  EXPECT_TRUE(none.Current()->empty());

  ProcessFile file(dir.path("procs"), 2);
  ASSERT_TRUE(file.Current().ok());
  EXPECT_TRUE(file.Current()->empty());

  dir.Write("procs", "10 0 1\n");
  ASSERT_TRUE(file.Current().ok());
  EXPECT_EQ(file.Current().value(), (std::vector<SimProcess>{{10, 0, 1, true, false}}));

  // Same size, replaced by rename: a new inode is noticed.
  dir.Replace("procs", "11 1 1\n");
  EXPECT_EQ(file.Current().value(), (std::vector<SimProcess>{{11, 1, 1, true, false}}));

  // A bad version is an error until the file changes again.
  dir.Replace("procs", "11 9 1\n");
  EXPECT_FALSE(file.Current().ok());
  EXPECT_FALSE(file.Current().ok());
  dir.Replace("procs", "12 0 7\n13 1 8\n");
  ASSERT_TRUE(file.Current().ok());
  EXPECT_EQ(file.Current()->size(), 2u);

  std::filesystem::remove(dir.path("procs"));
  ASSERT_TRUE(file.Current().ok());
  EXPECT_TRUE(file.Current()->empty());
}

// --- The fake NVML -----------------------------------------------------------

using Nvml = gpumon::testing::FakeNvml;
using gpumon::testing::Lib;

class FakeNvmlProcessesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(Lib().handle, nullptr) << dlerror();
    ASSERT_TRUE(Lib().missing.empty()) << Lib().missing.front();
    while (nvml().nvmlShutdown() == NVML_SUCCESS) {
    }
    unsetenv("GPUMON_SIM_SEED");
    unsetenv("GPUMON_SIM_FAULTS");
    unsetenv("GPUMON_SIM_PROCESSES");
  }
  void TearDown() override {
    while (nvml().nvmlShutdown() == NVML_SUCCESS) {
    }
    unsetenv("GPUMON_SIM_PROCESSES");
    unsetenv("GPUMON_SIM_FAULTS");
  }
  const Nvml& nvml() { return Lib(); }

  void Init(const char* spec, const std::string& processes) {
    setenv("GPUMON_SIM_SPEC", spec, 1);
    setenv("GPUMON_SIM_PROCESSES", processes.c_str(), 1);
    ASSERT_EQ(nvml().nvmlInit_v2(), NVML_SUCCESS);
  }
  nvmlDevice_t Device(unsigned int index) {
    nvmlDevice_t d = nullptr;
    EXPECT_EQ(nvml().nvmlDeviceGetHandleByIndex_v2(index, &d), NVML_SUCCESS);
    return d;
  }
  std::vector<nvmlProcessInfo_t> ComputeV3(nvmlDevice_t d) {
    unsigned int count = 16;
    std::vector<nvmlProcessInfo_t> infos(count);
    EXPECT_EQ(nvml().nvmlDeviceGetComputeRunningProcesses_v3(d, &count, infos.data()),
              NVML_SUCCESS);
    infos.resize(count);
    return infos;
  }

  TempDir dir_;
};

TEST_F(FakeNvmlProcessesTest, ListsEachGpusProcessesInEveryVersion) {
  Init("h200x2", dir_.Write("procs", "100 0 1000\n200 1 2000\n300 1 3000 graphics\n"));
  constexpr unsigned kNone = 0xFFFFFFFF;

  std::vector<nvmlProcessInfo_t> v3 = ComputeV3(Device(1));
  ASSERT_EQ(v3.size(), 1u);
  EXPECT_EQ(v3[0].pid, 200u);
  EXPECT_EQ(v3[0].usedGpuMemory, 2000u);
  EXPECT_EQ(v3[0].gpuInstanceId, kNone);
  EXPECT_EQ(v3[0].computeInstanceId, kNone);

  unsigned int count = 4;
  nvmlProcessInfo_v2_t v2[4] = {};
  ASSERT_EQ(nvml().nvmlDeviceGetComputeRunningProcesses_v2(Device(0), &count, v2), NVML_SUCCESS);
  ASSERT_EQ(count, 1u);
  EXPECT_EQ(v2[0].pid, 100u);
  EXPECT_EQ(v2[0].usedGpuMemory, 1000u);
  EXPECT_EQ(v2[0].gpuInstanceId, kNone);

  // v1 entries are 16 bytes apart: the second lands right after the first.
  nvmlProcessInfo_v1_t v1[4] = {};
  count = 4;
  ASSERT_EQ(nvml().nvmlDeviceGetGraphicsRunningProcesses(Device(1), &count, v1), NVML_SUCCESS);
  ASSERT_EQ(count, 1u);
  EXPECT_EQ(v1[0].pid, 300u);
  EXPECT_EQ(v1[0].usedGpuMemory, 3000u);
  EXPECT_EQ(v1[1].pid, 0u);

  count = 4;
  nvmlProcessInfo_t g3[4] = {};
  ASSERT_EQ(nvml().nvmlDeviceGetGraphicsRunningProcesses_v3(Device(0), &count, g3), NVML_SUCCESS);
  EXPECT_EQ(count, 0u);
  count = 4;
  ASSERT_EQ(nvml().nvmlDeviceGetGraphicsRunningProcesses_v2(Device(1), &count, v2), NVML_SUCCESS);
  EXPECT_EQ(count, 1u);
  count = 4;
  ASSERT_EQ(nvml().nvmlDeviceGetComputeRunningProcesses(Device(1), &count, v1), NVML_SUCCESS);
  EXPECT_EQ(count, 1u);
  EXPECT_EQ(v1[0].pid, 200u);
}

TEST_F(FakeNvmlProcessesTest, FollowsNvmlsSizeProtocol) {
  Init("h200x1", dir_.Write("procs", "1 0 1\n2 0 2\n3 0 3\n"));
  nvmlDevice_t d = Device(0);
  unsigned int count = 0;
  EXPECT_EQ(nvml().nvmlDeviceGetComputeRunningProcesses_v3(d, &count, nullptr),
            NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(count, 3u);
  nvmlProcessInfo_t infos[3] = {};
  count = 2;
  EXPECT_EQ(nvml().nvmlDeviceGetComputeRunningProcesses_v3(d, &count, infos),
            NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(count, 3u);
  EXPECT_EQ(infos[0].pid, 0u);  // nothing written
  count = 3;
  EXPECT_EQ(nvml().nvmlDeviceGetComputeRunningProcesses_v3(d, &count, infos), NVML_SUCCESS);
  EXPECT_EQ(infos[2].pid, 3u);
  // Argument checks, in NVML's order.
  EXPECT_EQ(nvml().nvmlDeviceGetComputeRunningProcesses_v3(d, nullptr, infos),
            NVML_ERROR_INVALID_ARGUMENT);
  count = 1;
  EXPECT_EQ(nvml().nvmlDeviceGetComputeRunningProcesses_v3(d, &count, nullptr),
            NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nvml().nvmlDeviceGetComputeRunningProcesses_v3(nullptr, &count, infos),
            NVML_ERROR_INVALID_ARGUMENT);
  // No processes: success with 0 and a null buffer.
  while (nvml().nvmlShutdown() == NVML_SUCCESS) {
  }
  EXPECT_EQ(nvml().nvmlDeviceGetComputeRunningProcesses_v3(d, &count, infos),
            NVML_ERROR_UNINITIALIZED);
  Init("h200x1", dir_.path("absent"));
  count = 0;
  EXPECT_EQ(nvml().nvmlDeviceGetComputeRunningProcesses_v3(Device(0), &count, nullptr),
            NVML_SUCCESS);
  EXPECT_EQ(count, 0u);
}

TEST_F(FakeNvmlProcessesTest, RereadsTheFileWhenItChanges) {
  const std::string path = dir_.path("procs");
  Init("h200x2", path);  // absent at init: no processes
  EXPECT_TRUE(ComputeV3(Device(0)).empty());
  dir_.Replace("procs", "42 0 4096\n");
  std::vector<nvmlProcessInfo_t> now = ComputeV3(Device(0));
  ASSERT_EQ(now.size(), 1u);
  EXPECT_EQ(now[0].pid, 42u);
  dir_.Replace("procs", "42 1 4096\n");
  EXPECT_TRUE(ComputeV3(Device(0)).empty());
  ASSERT_EQ(ComputeV3(Device(1)).size(), 1u);
  // A malformed version fails the calls until it is fixed.
  dir_.Replace("procs", "42 7 4096\n");
  unsigned int count = 4;
  nvmlProcessInfo_t infos[4];
  EXPECT_EQ(nvml().nvmlDeviceGetComputeRunningProcesses_v3(Device(1), &count, infos),
            NVML_ERROR_UNKNOWN);
  dir_.Replace("procs", "43 1 1\n");
  now = ComputeV3(Device(1));
  ASSERT_EQ(now.size(), 1u);
  EXPECT_EQ(now[0].pid, 43u);
}

TEST_F(FakeNvmlProcessesTest, MalformedFileAtInitFailsInit) {
  setenv("GPUMON_SIM_SPEC", "h200x2", 1);
  setenv("GPUMON_SIM_PROCESSES", dir_.Write("procs", "1 2 3\n").c_str(), 1);
  EXPECT_EQ(nvml().nvmlInit_v2(), NVML_ERROR_UNKNOWN);
}

TEST_F(FakeNvmlProcessesTest, MigProcessesAreOnTheFirstInstance) {
  Init("h200mig", dir_.Write("procs", "7 0 10\n"));
  std::vector<nvmlProcessInfo_t> parent = ComputeV3(Device(0));
  ASSERT_EQ(parent.size(), 1u);
  EXPECT_EQ(parent[0].gpuInstanceId, 1u);
  EXPECT_EQ(parent[0].computeInstanceId, 0u);
  nvmlDevice_t mig0 = nullptr, mig1 = nullptr;
  ASSERT_EQ(nvml().nvmlDeviceGetMigDeviceHandleByIndex(Device(0), 0, &mig0), NVML_SUCCESS);
  ASSERT_EQ(nvml().nvmlDeviceGetMigDeviceHandleByIndex(Device(0), 1, &mig1), NVML_SUCCESS);
  EXPECT_EQ(ComputeV3(mig0).size(), 1u);
  EXPECT_TRUE(ComputeV3(mig1).empty());
}

TEST_F(FakeNvmlProcessesTest, FindsDevicesByUuid) {
  Init("h200x2,h200mig", "");
  for (unsigned int i = 0; i < 3; ++i) {
    char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
    ASSERT_EQ(nvml().nvmlDeviceGetUUID(Device(i), uuid, sizeof(uuid)), NVML_SUCCESS);
    nvmlDevice_t d = nullptr;
    ASSERT_EQ(nvml().nvmlDeviceGetHandleByUUID(uuid, &d), NVML_SUCCESS);
    EXPECT_EQ(d, Device(i));
  }
  nvmlDevice_t mig = nullptr;
  ASSERT_EQ(nvml().nvmlDeviceGetMigDeviceHandleByIndex(Device(2), 1, &mig), NVML_SUCCESS);
  char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
  ASSERT_EQ(nvml().nvmlDeviceGetUUID(mig, uuid, sizeof(uuid)), NVML_SUCCESS);
  nvmlDevice_t d = nullptr;
  ASSERT_EQ(nvml().nvmlDeviceGetHandleByUUID(uuid, &d), NVML_SUCCESS);
  EXPECT_EQ(d, mig);
  EXPECT_EQ(nvml().nvmlDeviceGetHandleByUUID("GPU-00000000-0000-0000-0000-000000000000", &d),
            NVML_ERROR_NOT_FOUND);
  EXPECT_EQ(nvml().nvmlDeviceGetHandleByUUID(nullptr, &d), NVML_ERROR_INVALID_ARGUMENT);
}

}  // namespace
