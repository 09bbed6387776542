// The collector's readers: for each metric group, the NVML calls that make
// its metrics, through GpuCollector::Round (collector_round.h), and the
// fallbacks to older or newer NVML sources that collector.h describes.
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "gpu/clock_event_reasons.h"
#include "gpu/collector_round.h"
#include "gpu/temperature_limits.h"

namespace gpumon::gpu {
namespace {

// Cumulative clock-event time fields (nanoseconds).
struct CounterField {
  unsigned field;
  const char* reason;
};
constexpr CounterField kClockEventCounterFields[] = {
    {NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP, "sw_power_cap"},
    {NVML_FI_DEV_CLOCKS_EVENT_REASON_SYNC_BOOST, "sync_boost"},
    {NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN, "sw_thermal_slowdown"},
    {NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN, "hw_thermal_slowdown"},
    {NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN, "hw_power_brake_slowdown"},
};

constexpr const char* kNvlinkErrorNames[] = {"replay", "recovery", "crc_flit", "crc_data",
                                             "ecc_data"};

// The MIG profile ("3g.71gb") is the last word of a MIG device's name.
std::string MigProfileFromName(const std::string& name) {
  auto pos = name.rfind(' ');
  return pos == std::string::npos ? name : name.substr(pos + 1);
}

}  // namespace

void GpuCollector::Round::Temperature() {
  std::optional<double> die;  // this round's readings anchor T.Limit offsets
  if (Wanted(Metric::kTemperature)) {
    bool done = false;
    if (!dev_->legacy_temperature) {
      nvmlTemperature_t t{};
      t.version = nvmlTemperature_v1;
      t.sensorType = NVML_TEMPERATURE_GPU;
      nvmlReturn_t rc = Call(nvml_.nvmlDeviceGetTemperatureV, dev_->handle, &t);
      if (rc == NVML_SUCCESS) {
        Emit(Metric::kTemperature, t.temperature);
        die = t.temperature;
        done = true;
      } else if (c_.discovering_ && IsPermanent(rc)) {
        dev_->legacy_temperature = true;  // older driver: fall back below
      } else {
        Ok(Metric::kTemperature, "nvmlDeviceGetTemperatureV", rc);
        done = true;
      }
    }
    if (!done && dev_->legacy_temperature) {
      unsigned v = 0;
      if (GPUMON_CALL(Metric::kTemperature, nvmlDeviceGetTemperature, dev_->handle,
                      NVML_TEMPERATURE_GPU, &v)) {
        Emit(Metric::kTemperature, v);
        die = v;
      }
    }
  }
  double v;
  if (Wanted(Metric::kMemoryTemperature) && !Lost() &&
      Field(Metric::kMemoryTemperature, NVML_FI_DEV_MEMORY_TEMP, 0, &v)) {
    Emit(Metric::kMemoryTemperature, v);
  }
  std::optional<double> margin;
  nvmlMarginTemperature_t m{};
  m.version = nvmlMarginTemperature_v1;
  if (Wanted(Metric::kTemperatureMargin) && !Lost() &&
      GPUMON_CALL(Metric::kTemperatureMargin, nvmlDeviceGetMarginTemperature, dev_->handle, &m)) {
    Emit(Metric::kTemperatureMargin, m.marginTemperature);
    margin = m.marginTemperature;
  }
  for (size_t i = 0; i < std::size(kTemperatureLimits); ++i) ThermalLimit(i, die, margin);
}

void GpuCollector::Round::ThermalLimit(size_t i, std::optional<double> die,
                                       std::optional<double> margin) {
  const auto& limit = kTemperatureLimits[i];
  const auto bit = static_cast<uint8_t>(1u << i);
  if (!Wanted(limit.metric) || Lost()) return;
  if ((dev_->tlimit_limits & bit) == 0) {
    unsigned celsius = 0;
    nvmlReturn_t rc =
        Call(nvml_.nvmlDeviceGetTemperatureThreshold, dev_->handle, limit.threshold, &celsius);
    if (rc == NVML_SUCCESS) {
      Emit(limit.metric, celsius);
      return;
    }
    if (!c_.discovering_ || !IsPermanent(rc) || limit.tlimit_field == 0) {
      Ok(limit.metric, "nvmlDeviceGetTemperatureThreshold", rc);
      return;
    }
    dev_->tlimit_limits |= bit;
  }
  double offset;
  if (!Field(limit.metric, limit.tlimit_field, 0, &offset)) return;
  if (die && margin) {
    Emit(limit.metric, LimitFromTlimitOffset(*die, *margin, offset));
  } else if (c_.discovering_ &&
             (!Wanted(Metric::kTemperature) || !Wanted(Metric::kTemperatureMargin))) {
    dev_->unsupported.set(static_cast<size_t>(limit.metric));  // an offset from nothing
  }
}

void GpuCollector::Round::Health() {
  double v;
  if (Wanted(Metric::kRecoveryAction) &&
      Field(Metric::kRecoveryAction, NVML_FI_DEV_GET_GPU_RECOVERY_ACTION, 0, &v)) {
    Emit(Metric::kRecoveryAction, v);
  }
}

void GpuCollector::Round::Power() {
  unsigned mw = 0;
  if (Wanted(Metric::kPowerUsage) &&
      GPUMON_CALL(Metric::kPowerUsage, nvmlDeviceGetPowerUsage, dev_->handle, &mw)) {
    Emit(Metric::kPowerUsage, mw / 1000.0);
  }
  double v;
  if (Wanted(Metric::kPowerInstant) && !Lost() &&
      Field(Metric::kPowerInstant, NVML_FI_DEV_POWER_INSTANT, 0, &v)) {
    Emit(Metric::kPowerInstant, v / 1000.0);
  }
  unsigned long long mj = 0;
  if (Wanted(Metric::kEnergy) && !Lost() &&
      GPUMON_CALL(Metric::kEnergy, nvmlDeviceGetTotalEnergyConsumption, dev_->handle, &mj)) {
    Emit(Metric::kEnergy, static_cast<double>(mj) / 1000.0);
  }
  if (Wanted(Metric::kPowerLimit) && !Lost() &&
      GPUMON_CALL(Metric::kPowerLimit, nvmlDeviceGetPowerManagementLimit, dev_->handle, &mw)) {
    Emit(Metric::kPowerLimit, mw / 1000.0);
  }
  if (Wanted(Metric::kPowerEnforcedLimit) && !Lost() &&
      GPUMON_CALL(Metric::kPowerEnforcedLimit, nvmlDeviceGetEnforcedPowerLimit, dev_->handle,
                  &mw)) {
    Emit(Metric::kPowerEnforcedLimit, mw / 1000.0);
  }
}

void GpuCollector::Round::Utilization() {
  nvmlUtilization_t u{};
  if (Wanted(Metric::kUtilization) &&
      GPUMON_CALL(Metric::kUtilization, nvmlDeviceGetUtilizationRates, dev_->handle, &u)) {
    Emit(Metric::kUtilization, u.gpu / 100.0);
    Emit(Metric::kMemoryUtilization, u.memory / 100.0);
  }
  unsigned util = 0, period = 0;
  if (Wanted(Metric::kEncoderUtilization) && !Lost() &&
      GPUMON_CALL(Metric::kEncoderUtilization, nvmlDeviceGetEncoderUtilization, dev_->handle, &util,
                  &period)) {
    Emit(Metric::kEncoderUtilization, util / 100.0);
  }
  if (Wanted(Metric::kDecoderUtilization) && !Lost() &&
      GPUMON_CALL(Metric::kDecoderUtilization, nvmlDeviceGetDecoderUtilization, dev_->handle, &util,
                  &period)) {
    Emit(Metric::kDecoderUtilization, util / 100.0);
  }
}

void GpuCollector::Round::Clock(Metric m, nvmlClockType_t type, bool max) {
  unsigned mhz = 0;
  if (!Wanted(m) || Lost()) return;
  bool ok = max ? GPUMON_CALL(m, nvmlDeviceGetMaxClockInfo, dev_->handle, type, &mhz)
                : GPUMON_CALL(m, nvmlDeviceGetClockInfo, dev_->handle, type, &mhz);
  if (ok) Emit(m, mhz * 1e6);
}

void GpuCollector::Round::Clocks() {
  Clock(Metric::kGraphicsClock, NVML_CLOCK_GRAPHICS, false);
  Clock(Metric::kSmClock, NVML_CLOCK_SM, false);
  Clock(Metric::kMemoryClock, NVML_CLOCK_MEM, false);
  Clock(Metric::kVideoClock, NVML_CLOCK_VIDEO, false);
  nvmlPstates_t p = NVML_PSTATE_UNKNOWN;
  if (Wanted(Metric::kPerformanceState) && !Lost() &&
      GPUMON_CALL(Metric::kPerformanceState, nvmlDeviceGetPerformanceState, dev_->handle, &p) &&
      p != NVML_PSTATE_UNKNOWN) {
    Emit(Metric::kPerformanceState, static_cast<int>(p));
  }
}

void GpuCollector::Round::ClockEvents() {
  if (c_.discovering_) {
    unsigned long long supported = 0;
    if (GPUMON_CALL(Metric::kClockEventActive, nvmlDeviceGetSupportedClocksEventReasons,
                    dev_->handle, &supported)) {
      dev_->supported_event_reasons = supported;
    }
  }
  unsigned long long active = 0;
  if (Wanted(Metric::kClockEventActive) && dev_->supported_event_reasons != 0 &&
      GPUMON_CALL(Metric::kClockEventActive, nvmlDeviceGetCurrentClocksEventReasons, dev_->handle,
                  &active)) {
    for (const auto& r : ClockEventReasons()) {
      if (dev_->supported_event_reasons & r.bit) {
        Emit(Metric::kClockEventActive, (active & r.bit) ? 1 : 0, {std::string(r.name)});
      }
    }
    Emit(Metric::kClockEventReasonsMask, static_cast<double>(active));
  }
  if (!Wanted(Metric::kClockEventDuration) || Lost()) return;
  nvmlFieldValue_t fields[std::size(kClockEventCounterFields)] = {};
  for (size_t i = 0; i < std::size(kClockEventCounterFields); ++i) {
    fields[i].fieldId = kClockEventCounterFields[i].field;
  }
  if (!GPUMON_CALL(Metric::kClockEventDuration, nvmlDeviceGetFieldValues, dev_->handle,
                   static_cast<int>(std::size(fields)), fields)) {
    return;
  }
  if (c_.discovering_) {
    dev_->clock_event_fields = 0;
    for (size_t i = 0; i < std::size(fields); ++i) {
      if (fields[i].nvmlReturn == NVML_SUCCESS) dev_->clock_event_fields |= 1u << i;
    }
    if (dev_->clock_event_fields == 0) {
      dev_->unsupported.set(static_cast<size_t>(Metric::kClockEventDuration));
    }
  }
  for (size_t i = 0; i < std::size(fields); ++i) {
    if (!(dev_->clock_event_fields & (1u << i))) continue;
    if (Ok(Metric::kClockEventDuration, "nvmlDeviceGetFieldValues", fields[i].nvmlReturn)) {
      Emit(Metric::kClockEventDuration, FieldAsDouble(fields[i]) / 1e9,
           {kClockEventCounterFields[i].reason});
    }
  }
}

void GpuCollector::Round::Memory() {
  if (!Wanted(Metric::kMemoryUsed)) return;
  if (!dev_->legacy_memory_info) {
    nvmlMemory_v2_t m{};
    m.version = nvmlMemory_v2;
    nvmlReturn_t rc = Call(nvml_.nvmlDeviceGetMemoryInfo_v2, dev_->handle, &m);
    if (rc == NVML_SUCCESS) {
      Emit(Metric::kMemoryTotal, static_cast<double>(m.total));
      Emit(Metric::kMemoryUsed, static_cast<double>(m.used));
      Emit(Metric::kMemoryFree, static_cast<double>(m.free));
      Emit(Metric::kMemoryReserved, static_cast<double>(m.reserved));
      return;
    }
    if (!(c_.discovering_ && IsPermanent(rc))) {
      Ok(Metric::kMemoryUsed, "nvmlDeviceGetMemoryInfo_v2", rc);
      return;
    }
    dev_->legacy_memory_info = true;
    dev_->unsupported.set(static_cast<size_t>(Metric::kMemoryReserved));
  }
  nvmlMemory_t m{};
  if (GPUMON_CALL(Metric::kMemoryUsed, nvmlDeviceGetMemoryInfo, dev_->handle, &m)) {
    Emit(Metric::kMemoryTotal, static_cast<double>(m.total));
    Emit(Metric::kMemoryUsed, static_cast<double>(m.used));
    Emit(Metric::kMemoryFree, static_cast<double>(m.free));
  }
}

void GpuCollector::Round::Ecc() {
  if (!Wanted(Metric::kEccErrors)) return;
  static constexpr struct {
    nvmlMemoryErrorType_t type;
    nvmlEccCounterType_t counter;
    const char* type_name;
    const char* scope_name;
  } kCounters[] = {
      {NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, "corrected", "volatile"},
      {NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, "uncorrected", "volatile"},
      {NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC, "corrected", "aggregate"},
      {NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC, "uncorrected", "aggregate"},
  };
  for (const auto& k : kCounters) {
    unsigned long long n = 0;
    if (!Wanted(Metric::kEccErrors) || Lost()) return;
    if (GPUMON_CALL(Metric::kEccErrors, nvmlDeviceGetTotalEccErrors, dev_->handle, k.type,
                    k.counter, &n)) {
      Emit(Metric::kEccErrors, static_cast<double>(n), {k.type_name, k.scope_name});
    }
  }
}

void GpuCollector::Round::Retirement() {
  static constexpr struct {
    nvmlPageRetirementCause_t cause;
    const char* name;
  } kCauses[] = {
      {NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS, "multiple_single_bit_ecc"},
      {NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR, "double_bit_ecc"},
  };
  for (const auto& k : kCauses) {
    unsigned count = 0;  // a null address buffer asks for the count only
    if (Wanted(Metric::kRetiredPages) && !Lost() &&
        GPUMON_CALL(Metric::kRetiredPages, nvmlDeviceGetRetiredPages, dev_->handle, k.cause, &count,
                    nullptr)) {
      Emit(Metric::kRetiredPages, count, {k.name});
    }
  }
  nvmlEnableState_t pending = NVML_FEATURE_DISABLED;
  if (Wanted(Metric::kRetiredPagesPending) && !Lost() &&
      GPUMON_CALL(Metric::kRetiredPagesPending, nvmlDeviceGetRetiredPagesPendingStatus,
                  dev_->handle, &pending)) {
    Emit(Metric::kRetiredPagesPending, pending == NVML_FEATURE_ENABLED ? 1 : 0);
  }
  unsigned corr = 0, unc = 0, is_pending = 0, failure = 0;
  if (Wanted(Metric::kRemappedRows) && !Lost() &&
      GPUMON_CALL(Metric::kRemappedRows, nvmlDeviceGetRemappedRows, dev_->handle, &corr, &unc,
                  &is_pending, &failure)) {
    Emit(Metric::kRemappedRows, corr, {"correctable"});
    Emit(Metric::kRemappedRows, unc, {"uncorrectable"});
    Emit(Metric::kRemappedRowsPending, is_pending ? 1 : 0);
    Emit(Metric::kRemappedRowsFailure, failure ? 1 : 0);
  }
}

void GpuCollector::Round::Pcie() {
  unsigned v = 0;
  if (Wanted(Metric::kPcieReplay) &&
      GPUMON_CALL(Metric::kPcieReplay, nvmlDeviceGetPcieReplayCounter, dev_->handle, &v)) {
    Emit(Metric::kPcieReplay, v);
  }
  if (Wanted(Metric::kPcieLinkGeneration) && !Lost() &&
      GPUMON_CALL(Metric::kPcieLinkGeneration, nvmlDeviceGetCurrPcieLinkGeneration, dev_->handle,
                  &v)) {
    Emit(Metric::kPcieLinkGeneration, v);
  }
  if (Wanted(Metric::kPcieLinkWidth) && !Lost() &&
      GPUMON_CALL(Metric::kPcieLinkWidth, nvmlDeviceGetCurrPcieLinkWidth, dev_->handle, &v)) {
    Emit(Metric::kPcieLinkWidth, v);
  }
  double bytes;
  if (Wanted(Metric::kPcieTransmitBytes) && !Lost() &&
      Field(Metric::kPcieTransmitBytes, NVML_FI_DEV_PCIE_COUNT_TX_BYTES, 0, &bytes)) {
    Emit(Metric::kPcieTransmitBytes, bytes);
  }
  if (Wanted(Metric::kPcieReceiveBytes) && !Lost() &&
      Field(Metric::kPcieReceiveBytes, NVML_FI_DEV_PCIE_COUNT_RX_BYTES, 0, &bytes)) {
    Emit(Metric::kPcieReceiveBytes, bytes);
  }
}

void GpuCollector::Round::Nvlink() {
  if (!Wanted(Metric::kNvlinkUp)) return;
  if (c_.discovering_) {
    dev_->nvlinks.clear();
    for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
      nvmlEnableState_t s;
      nvmlReturn_t rc = Call(nvml_.nvmlDeviceGetNvLinkState, dev_->handle, link, &s);
      if (rc == NVML_SUCCESS) dev_->nvlinks.push_back(link);
    }
    if (dev_->nvlinks.empty()) {
      for (Metric m : {Metric::kNvlinkUp, Metric::kNvlinkErrors, Metric::kNvlinkTransmitBytes,
                       Metric::kNvlinkReceiveBytes}) {
        dev_->unsupported.set(static_cast<size_t>(m));
      }
      return;
    }
  }
  std::vector<nvmlFieldValue_t> fields;
  for (unsigned link : dev_->nvlinks) {
    if (Lost()) return;
    std::string l = std::to_string(link);
    nvmlEnableState_t s = NVML_FEATURE_DISABLED;
    if (GPUMON_CALL(Metric::kNvlinkUp, nvmlDeviceGetNvLinkState, dev_->handle, link, &s)) {
      Emit(Metric::kNvlinkUp, s == NVML_FEATURE_ENABLED ? 1 : 0, {l});
    }
    for (int e = 0; e < 5 && Wanted(Metric::kNvlinkErrors); ++e) {
      unsigned long long n = 0;
      if (GPUMON_CALL(Metric::kNvlinkErrors, nvmlDeviceGetNvLinkErrorCounter, dev_->handle, link,
                      static_cast<nvmlNvLinkErrorCounter_t>(e), &n)) {
        Emit(Metric::kNvlinkErrors, static_cast<double>(n), {l, kNvlinkErrorNames[e]});
      }
    }
    for (unsigned id :
         {NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX}) {
      nvmlFieldValue_t f{};
      f.fieldId = id;
      f.scopeId = link;
      fields.push_back(f);
    }
  }
  if (!Wanted(Metric::kNvlinkTransmitBytes) || fields.empty() || Lost()) return;
  if (!GPUMON_CALL(Metric::kNvlinkTransmitBytes, nvmlDeviceGetFieldValues, dev_->handle,
                   static_cast<int>(fields.size()), fields.data())) {
    return;
  }
  for (const auto& f : fields) {
    Metric m = f.fieldId == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX ? Metric::kNvlinkTransmitBytes
                                                                  : Metric::kNvlinkReceiveBytes;
    if (Ok(m, "nvmlDeviceGetFieldValues", f.nvmlReturn)) {
      // NVML counts KiB.
      Emit(m, FieldAsDouble(f) * 1024.0, {std::to_string(f.scopeId)});
    }
  }
}

void GpuCollector::Round::Fans() {
  if (!Wanted(Metric::kFanSpeed)) return;
  if (c_.discovering_) {
    unsigned n = 0;
    if (!GPUMON_CALL(Metric::kFanSpeed, nvmlDeviceGetNumFans, dev_->handle, &n)) return;
    dev_->fan_count = n;
    if (n == 0) {
      dev_->unsupported.set(static_cast<size_t>(Metric::kFanSpeed));
      return;
    }
  }
  for (unsigned fan = 0; fan < dev_->fan_count && !Lost(); ++fan) {
    unsigned pct = 0;
    if (GPUMON_CALL(Metric::kFanSpeed, nvmlDeviceGetFanSpeed_v2, dev_->handle, fan, &pct)) {
      Emit(Metric::kFanSpeed, pct / 100.0, {std::to_string(fan)});
    }
  }
}

void GpuCollector::Round::Inventory() {
  Emit(Metric::kInfo, 1, {c_.versions_.driver, c_.versions_.nvml, c_.versions_.cuda, dev_->vbios});
  Clock(Metric::kGraphicsClockMax, NVML_CLOCK_GRAPHICS, true);
  Clock(Metric::kSmClockMax, NVML_CLOCK_SM, true);
  Clock(Metric::kMemoryClockMax, NVML_CLOCK_MEM, true);
  Clock(Metric::kVideoClockMax, NVML_CLOCK_VIDEO, true);
  unsigned v = 0;
  if (Wanted(Metric::kPcieLinkGenerationMax) && !Lost() &&
      GPUMON_CALL(Metric::kPcieLinkGenerationMax, nvmlDeviceGetMaxPcieLinkGeneration, dev_->handle,
                  &v)) {
    Emit(Metric::kPcieLinkGenerationMax, v);
  }
  if (Wanted(Metric::kPcieLinkWidthMax) && !Lost() &&
      GPUMON_CALL(Metric::kPcieLinkWidthMax, nvmlDeviceGetMaxPcieLinkWidth, dev_->handle, &v)) {
    Emit(Metric::kPcieLinkWidthMax, v);
  }
}

void GpuCollector::Round::Mig() {
  if (!Wanted(Metric::kMigModeEnabled)) return;
  unsigned current = 0, pending = 0;
  if (!GPUMON_CALL(Metric::kMigModeEnabled, nvmlDeviceGetMigMode, dev_->handle, &current,
                   &pending)) {
    return;
  }
  Emit(Metric::kMigModeEnabled, current == NVML_DEVICE_MIG_ENABLE ? 1 : 0);
  if (c_.discovering_) DiscoverMig(current == NVML_DEVICE_MIG_ENABLE);
  for (size_t i = 0; i < dev_->mig.size() && Wanted(Metric::kMigMemoryUsed); ++i) {
    const MigInstance& mi = dev_->mig[i];
    nvmlMemory_t m{};
    if (GPUMON_CALL(Metric::kMigMemoryUsed, nvmlDeviceGetMemoryInfo, mi.handle, &m)) {
      Emit(Metric::kMigMemoryTotal, static_cast<double>(m.total), {}, static_cast<int16_t>(i));
      Emit(Metric::kMigMemoryUsed, static_cast<double>(m.used), {}, static_cast<int16_t>(i));
    }
  }
}

void GpuCollector::Round::DiscoverMig(bool enabled) {
  dev_->mig_enabled = enabled;
  dev_->mig.clear();
  if (!enabled) return;
  unsigned max = 0;
  if (Call(nvml_.nvmlDeviceGetMaxMigDeviceCount, dev_->handle, &max) != NVML_SUCCESS) return;
  for (unsigned i = 0; i < max; ++i) {
    MigInstance mi;
    if (Call(nvml_.nvmlDeviceGetMigDeviceHandleByIndex, dev_->handle, i, &mi.handle) !=
        NVML_SUCCESS) {
      continue;  // empty slot
    }
    char buf[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
    if (Call(nvml_.nvmlDeviceGetUUID, mi.handle, buf, sizeof buf) == NVML_SUCCESS) mi.uuid = buf;
    char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
    if (Call(nvml_.nvmlDeviceGetName, mi.handle, name, sizeof name) == NVML_SUCCESS) {
      mi.profile = MigProfileFromName(name);
    }
    Call(nvml_.nvmlDeviceGetGpuInstanceId, mi.handle, &mi.gpu_instance_id);
    Call(nvml_.nvmlDeviceGetComputeInstanceId, mi.handle, &mi.compute_instance_id);
    dev_->mig.push_back(std::move(mi));
  }
}

}  // namespace gpumon::gpu
