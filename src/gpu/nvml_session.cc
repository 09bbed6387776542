#include "gpu/nvml_session.h"

namespace gpumon::gpu {

Result<std::unique_ptr<NvmlSession>> NvmlSession::Start(const std::string& library_path) {
  auto lib = NvmlLibrary::Open(library_path);
  if (!lib.ok()) return lib.status();
  nvmlReturn_t rc = (*lib)->nvmlInit_v2();
  if (rc != NVML_SUCCESS) {
    const char* text = (*lib)->nvmlErrorString ? (*lib)->nvmlErrorString(rc) : "";
    return Status::Error("nvmlInit_v2 failed: " + std::string(ReturnCodeName(rc)) +
                         (text && *text ? std::string(" (") + text + ")" : ""));
  }
  std::unique_ptr<NvmlSession> s(new NvmlSession());
  s->lib_ = std::move(lib).value();
  char buf[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
  if (s->lib_->nvmlSystemGetDriverVersion &&
      s->lib_->nvmlSystemGetDriverVersion(buf, sizeof buf) == NVML_SUCCESS) {
    s->versions_.driver = buf;
  }
  char nvml_buf[NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE] = {};
  if (s->lib_->nvmlSystemGetNVMLVersion &&
      s->lib_->nvmlSystemGetNVMLVersion(nvml_buf, sizeof nvml_buf) == NVML_SUCCESS) {
    s->versions_.nvml = nvml_buf;
  }
  int cuda = 0;
  if (s->lib_->nvmlSystemGetCudaDriverVersion_v2 &&
      s->lib_->nvmlSystemGetCudaDriverVersion_v2(&cuda) == NVML_SUCCESS) {
    s->versions_.cuda = std::to_string(cuda / 1000) + "." + std::to_string(cuda % 1000 / 10);
  }
  return s;
}

NvmlSession::~NvmlSession() {
  if (lib_ && lib_->nvmlShutdown) lib_->nvmlShutdown();
}

}  // namespace gpumon::gpu
