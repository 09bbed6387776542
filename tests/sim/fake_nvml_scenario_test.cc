// Scenarios, time scaling and ground truth through the built
// libgpumon-fake-nvml.so, loaded with dlopen as gpumon loads it.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "gpu/nvml_api.h"

namespace {

using SetTimeFn = void (*)(int64_t);
using GroundTruthFn = size_t (*)(char*, size_t);

struct Lib {
  void* handle = nullptr;
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  nvmlReturn_t (*handle_by_index)(unsigned int, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*nvlink_state)(nvmlDevice_t, unsigned int, nvmlEnableState_t*) = nullptr;
  nvmlReturn_t (*width)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*max_width)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned int*) = nullptr;
  SetTimeFn set_time = nullptr;
  GroundTruthFn ground_truth = nullptr;
};

const Lib& L() {
  static const Lib lib = [] {
    Lib l;
    l.handle = dlopen(GPUMON_FAKE_NVML_PATH, RTLD_NOW | RTLD_LOCAL);
    if (l.handle == nullptr) return l;
    auto sym = [&](const char* name) { return dlsym(l.handle, name); };
    l.init = reinterpret_cast<decltype(l.init)>(sym("nvmlInit_v2"));
    l.shutdown = reinterpret_cast<decltype(l.shutdown)>(sym("nvmlShutdown"));
    l.handle_by_index =
        reinterpret_cast<decltype(l.handle_by_index)>(sym("nvmlDeviceGetHandleByIndex_v2"));
    l.nvlink_state = reinterpret_cast<decltype(l.nvlink_state)>(sym("nvmlDeviceGetNvLinkState"));
    l.width = reinterpret_cast<decltype(l.width)>(sym("nvmlDeviceGetCurrPcieLinkWidth"));
    l.max_width = reinterpret_cast<decltype(l.max_width)>(sym("nvmlDeviceGetMaxPcieLinkWidth"));
    l.power = reinterpret_cast<decltype(l.power)>(sym("nvmlDeviceGetPowerUsage"));
    l.set_time = reinterpret_cast<SetTimeFn>(sym("gpumonSimSetTimeMs"));
    l.ground_truth = reinterpret_cast<GroundTruthFn>(sym("gpumonSimGroundTruth"));
    return l;
  }();
  return lib;
}

class FakeNvmlScenarioTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(L().handle, nullptr) << dlerror();
    ASSERT_NE(L().ground_truth, nullptr);
    while (L().shutdown() == NVML_SUCCESS) {
    }
    for (const char* v :
         {"GPUMON_SIM_SPEC", "GPUMON_SIM_SEED", "GPUMON_SIM_FAULTS", "GPUMON_SIM_CLOCK",
          "GPUMON_SIM_SCENARIO", "GPUMON_SIM_SPEED", "GPUMON_SIM_NODE_SIZE"}) {
      unsetenv(v);
    }
  }
  void TearDown() override {
    while (L().shutdown() == NVML_SUCCESS) {
    }
  }
  nvmlDevice_t Device(unsigned i) {
    nvmlDevice_t d = nullptr;
    EXPECT_EQ(L().handle_by_index(i, &d), NVML_SUCCESS);
    return d;
  }
  std::string GroundTruth() {
    // The JSON carries the simulated time ("now_ms"), which can gain a digit
    // between the two calls on the steady clock: leave room for it.
    const size_t n = L().ground_truth(nullptr, 0);
    std::string buf(n + 64, '\0');
    const size_t written = L().ground_truth(buf.data(), buf.size());
    EXPECT_GE(written, n);
    EXPECT_LT(written, buf.size());
    buf.resize(std::min(written, buf.size()));
    return buf;
  }
};

TEST_F(FakeNvmlScenarioTest, BadScenarioSpeedOrNodeSizeFailsInit) {
  setenv("GPUMON_SIM_SCENARIO", "thermal-runaway:gpu=9", 1);
  testing::internal::CaptureStderr();
  EXPECT_EQ(L().init(), NVML_ERROR_UNKNOWN);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("scenario \"thermal-runaway:gpu=9\": gpu 9 out of range"), std::string::npos)
      << err;
  unsetenv("GPUMON_SIM_SCENARIO");
  for (const char* bad : {"0", "-2", "fast", "1e999", ""}) {
    setenv("GPUMON_SIM_SPEED", bad, 1);
    EXPECT_EQ(L().init() == NVML_SUCCESS, *bad == '\0') << bad;
    while (L().shutdown() == NVML_SUCCESS) {
    }
  }
  unsetenv("GPUMON_SIM_SPEED");
  setenv("GPUMON_SIM_NODE_SIZE", "0", 1);
  EXPECT_EQ(L().init(), NVML_ERROR_UNKNOWN);
  setenv("GPUMON_SIM_NODE_SIZE", "4", 1);
  setenv("GPUMON_SIM_SCENARIO", "fall-off-bus:node=1:gpu=3", 1);
  EXPECT_EQ(L().init(), NVML_SUCCESS);  // h200x8: node 1 gpu 3 is GPU 7
  const std::string json = GroundTruth();
  EXPECT_NE(json.find("\"gpus\":[7]"), std::string::npos) << json;
}

TEST_F(FakeNvmlScenarioTest, ScenariosShowThroughNvmlOnTheVirtualClock) {
  setenv("GPUMON_SIM_SPEC", "h200x2", 1);
  setenv("GPUMON_SIM_CLOCK", "virtual", 1);
  setenv("GPUMON_SIM_SCENARIO",
         "nvlink-flap:gpu=0:link=5:start=1m:down=30s:up=1m:count=2;pcie-degrade:gpu=1:width=8", 1);
  ASSERT_EQ(L().init(), NVML_SUCCESS);
  nvmlDevice_t d0 = Device(0), d1 = Device(1);
  auto state = [&](int64_t t) {
    L().set_time(t);
    nvmlEnableState_t s = NVML_FEATURE_ENABLED;
    EXPECT_EQ(L().nvlink_state(d0, 5, &s), NVML_SUCCESS);
    return s;
  };
  EXPECT_EQ(state(59000), NVML_FEATURE_ENABLED);
  EXPECT_EQ(state(60000), NVML_FEATURE_DISABLED);
  EXPECT_EQ(state(89900), NVML_FEATURE_DISABLED);
  EXPECT_EQ(state(90000), NVML_FEATURE_ENABLED);
  EXPECT_EQ(state(150000), NVML_FEATURE_DISABLED);
  EXPECT_EQ(state(180000), NVML_FEATURE_ENABLED);
  EXPECT_EQ(state(600000), NVML_FEATURE_ENABLED);  // count=2: flapping is over
  unsigned width = 0, max_width = 0;
  EXPECT_EQ(L().width(d1, &width), NVML_SUCCESS);
  EXPECT_EQ(L().max_width(d1, &max_width), NVML_SUCCESS);
  EXPECT_EQ(width, 8u);
  EXPECT_EQ(max_width, 16u);

  rapidjson::Document d;
  const std::string json = GroundTruth();
  d.Parse(json.c_str());
  ASSERT_FALSE(d.HasParseError()) << json;
  EXPECT_STREQ(d["clock"].GetString(), "virtual");
  EXPECT_EQ(d["now_ms"].GetInt64(), 600000);
  int downs = 0;
  for (const auto& e : d["events"].GetArray()) {
    if (std::string(e["event"].GetString()) == "link_down") {
      ++downs;
      EXPECT_EQ(e["link"].GetInt(), 5);
      EXPECT_STREQ(e["scenario"].GetString(), "nvlink-flap");
    }
  }
  EXPECT_EQ(downs, 2);
  // A short buffer gets nothing but the length.
  char small[8] = "xxxxxxx";
  EXPECT_EQ(L().ground_truth(small, sizeof small), json.size());
  EXPECT_STREQ(small, "xxxxxxx");
}

TEST_F(FakeNvmlScenarioTest, SpeedScalesTheSteadyClock) {
  setenv("GPUMON_SIM_SPEC", "h200x1", 1);
  setenv("GPUMON_SIM_SPEED", "120", 1);
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(L().init(), NVML_SUCCESS);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  rapidjson::Document d;
  d.Parse(GroundTruth().c_str());
  const double real_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(d.HasParseError());
  EXPECT_EQ(d["speed"].GetDouble(), 120.0);
  EXPECT_STREQ(d["clock"].GetString(), "steady");
  const int64_t sim_ms = d["now_ms"].GetInt64();
  EXPECT_GE(sim_ms, 300 * 120);
  EXPECT_LE(sim_ms, real_ms * 120 + 1);
}

TEST_F(FakeNvmlScenarioTest, NoGroundTruthBeforeInit) {
  char buf[4] = "abc";
  EXPECT_EQ(L().ground_truth(buf, sizeof buf), 0u);
  EXPECT_STREQ(buf, "");
}

}  // namespace
