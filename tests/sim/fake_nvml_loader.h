// The built fake NVML (GPUMON_FAKE_NVML_PATH) loaded with dlopen and every
// entry point of gpu/nvml_api.h resolved by name, as gpumon loads NVML; for
// the simulator's tests that call the library's C ABI directly.
//
// Contract: Lib() loads once per process; handle is null when dlopen failed
// (dlerror() says why) and `missing` names the entry points not exported.
#pragma once

#include <dlfcn.h>

#include <string>
#include <vector>

#include "gpu/nvml_api.h"

namespace gpumon::testing {

struct FakeNvml {
#define GPUMON_TEST_MEMBER(name, ret, params) ret(*name) params = nullptr;
  GPUMON_NVML_FUNCTIONS(GPUMON_TEST_MEMBER)
#undef GPUMON_TEST_MEMBER
  void* handle = nullptr;
  std::vector<std::string> missing;
};

inline const FakeNvml& Lib() {
  static const FakeNvml lib = [] {
    FakeNvml l;
    l.handle = dlopen(GPUMON_FAKE_NVML_PATH, RTLD_NOW | RTLD_LOCAL);
    if (l.handle == nullptr) return l;
#define GPUMON_TEST_RESOLVE(name, ret, params)                      \
  l.name = reinterpret_cast<ret(*) params>(dlsym(l.handle, #name)); \
  if (l.name == nullptr) l.missing.push_back(#name);
    GPUMON_NVML_FUNCTIONS(GPUMON_TEST_RESOLVE)
#undef GPUMON_TEST_RESOLVE
    return l;
  }();
  return lib;
}

}  // namespace gpumon::testing
