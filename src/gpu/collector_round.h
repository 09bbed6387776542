// Private to the collector (collector*.cc): GpuCollector::Round, the
// collection of one group over all devices. Every NVML call goes through
// Ok(), which applies the discovery and error rules of collector.h's
// contract; collector_round.cc holds those rules and the dispatch by group,
// collector_readers.cc the readers that make each group's metrics.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "gpu/collector.h"

namespace gpumon::gpu {

class GpuCollector::Round {
 public:
  Round(GpuCollector& c, GroupResult* out) : c_(c), nvml_(*c.nvml_), out_(out) {}

  void Run(Group group);

 private:
  // The return codes that, at discovery, switch a metric off for the GPU.
  static bool IsPermanent(nvmlReturn_t rc);
  static double FieldAsDouble(const nvmlFieldValue_t& f);

  bool Wanted(Metric m) const { return !dev_->unsupported.test(static_cast<size_t>(m)); }

  // Applies the contract to one call's result; true when the value is usable.
  bool Ok(Metric m, const char* function, nvmlReturn_t rc);
  bool Lost() {
    std::lock_guard<std::mutex> lock(c_.state_mutex_);
    return dev_->lost;
  }

  void Emit(Metric m, double value, std::array<std::string, 4> labels = {}, int16_t mig = -1) {
    out_->values.push_back(SeriesValue{m, slot_, mig, std::move(labels), value});
  }

  // Calls fn(args...) when the library has it, else FUNCTION_NOT_FOUND.
  template <typename Fn, typename... Args>
  static nvmlReturn_t Call(Fn fn, Args... args) {
    return fn ? fn(args...) : NVML_ERROR_FUNCTION_NOT_FOUND;
  }

  // Reads a single device-scope field value; true when it was supported.
  bool Field(Metric m, unsigned field_id, unsigned scope, double* value);

  // The readers, one or more per group (collector_readers.cc).
  void Temperature();
  // One of the GPU's limits, from its threshold or its T.Limit field (see
  // temperature_limits.h for the choice).
  void ThermalLimit(size_t i, std::optional<double> die, std::optional<double> margin);
  void Health();
  void Power();
  void Utilization();
  void Clock(Metric m, nvmlClockType_t type, bool max);
  void Clocks();
  void ClockEvents();
  void Memory();
  void Ecc();
  void Retirement();
  void Pcie();
  void Nvlink();
  void Fans();
  void Inventory();
  void Mig();
  void DiscoverMig(bool enabled);

  GpuCollector& c_;
  NvmlLibrary& nvml_;
  GroupResult* out_;
  GpuDevice* dev_ = nullptr;
  uint16_t slot_ = 0;
};

// Ok() on fn(args...) called through the library (FUNCTION_NOT_FOUND when it
// lacks fn), naming fn in the error count.
#define GPUMON_CALL(metric, fn, ...) Ok(metric, #fn, Call(nvml_.fn, __VA_ARGS__))

}  // namespace gpumon::gpu
