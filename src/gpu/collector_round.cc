#include "gpu/collector_round.h"

namespace gpumon::gpu {

bool GpuCollector::Round::IsPermanent(nvmlReturn_t rc) {
  return rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_FUNCTION_NOT_FOUND ||
         rc == NVML_ERROR_NO_PERMISSION || rc == NVML_ERROR_INVALID_ARGUMENT ||
         rc == NVML_ERROR_NOT_FOUND || rc == NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
}

double GpuCollector::Round::FieldAsDouble(const nvmlFieldValue_t& f) {
  switch (f.valueType) {
    case NVML_VALUE_TYPE_DOUBLE:
      return f.value.dVal;
    case NVML_VALUE_TYPE_UNSIGNED_INT:
      return f.value.uiVal;
    case NVML_VALUE_TYPE_UNSIGNED_LONG:
      return static_cast<double>(f.value.ulVal);
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
      return static_cast<double>(f.value.ullVal);
    case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
      return static_cast<double>(f.value.sllVal);
    case NVML_VALUE_TYPE_SIGNED_INT:
      return f.value.siVal;
    case NVML_VALUE_TYPE_UNSIGNED_SHORT:
      return f.value.usVal;
  }
  return 0;
}

void GpuCollector::Round::Run(Group group) {
  for (size_t i = 0; i < c_.devices_.size(); ++i) {
    GpuDevice& d = c_.devices_[i];
    {
      std::lock_guard<std::mutex> lock(c_.state_mutex_);
      if (d.lost) continue;
    }
    dev_ = &d;
    slot_ = static_cast<uint16_t>(i);
    switch (group) {
      case Group::kTemperature:
        Temperature();
        break;
      case Group::kPower:
        Power();
        break;
      case Group::kUtilization:
        Utilization();
        break;
      case Group::kClocks:
        Clocks();
        break;
      case Group::kClockEvents:
        ClockEvents();
        break;
      case Group::kMemory:
        Memory();
        break;
      case Group::kEcc:
        Ecc();
        break;
      case Group::kRetirement:
        Retirement();
        break;
      case Group::kPcie:
        Pcie();
        break;
      case Group::kNvlink:
        Nvlink();
        break;
      case Group::kFan:
        Fans();
        break;
      case Group::kInventory:
        Inventory();
        break;
      case Group::kMig:
        Mig();
        break;
      case Group::kHealth:
        Health();
        break;
      default:
        break;
    }
  }
}

bool GpuCollector::Round::Ok(Metric m, const char* function, nvmlReturn_t rc) {
  if (rc == NVML_SUCCESS) return true;
  if (rc == NVML_ERROR_GPU_IS_LOST) {
    std::lock_guard<std::mutex> lock(c_.state_mutex_);
    dev_->lost = true;
  }
  if (c_.discovering_ && IsPermanent(rc)) {
    dev_->unsupported.set(static_cast<size_t>(m));
  } else {
    c_.CountError(function, rc);
  }
  return false;
}

bool GpuCollector::Round::Field(Metric m, unsigned field_id, unsigned scope, double* value) {
  nvmlFieldValue_t f{};
  f.fieldId = field_id;
  f.scopeId = scope;
  if (!GPUMON_CALL(m, nvmlDeviceGetFieldValues, dev_->handle, 1, &f)) return false;
  if (!Ok(m, "nvmlDeviceGetFieldValues", f.nvmlReturn)) return false;
  *value = FieldAsDouble(f);
  return true;
}

}  // namespace gpumon::gpu
