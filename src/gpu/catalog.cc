#include "gpu/catalog.h"

#include <algorithm>

namespace gpumon::gpu {
namespace {

using exposition::MetricType;
constexpr auto G = MetricType::kGauge;
constexpr auto C = MetricType::kCounter;
constexpr auto I = MetricType::kInfo;

constexpr std::string_view kGroupNames[kGroupCount] = {
    "temperature", "power",      "utilization", "clocks", "clock_events", "memory",
    "ecc",         "retirement", "pcie",        "nvlink", "fan",          "inventory",
    "xid",         "mig",        "health",      "agent"};

constexpr std::string_view kFeatureDescriptions[kFeatureCount] = {
    "all GPUs",
    "GPUs with HBM (H100, H200, A100); not L40S or GeForce",
    "Hopper and newer data-center GPUs",
    "Volta and newer",
    "GPUs not in MIG mode",
    "GPUs with NVENC, not in MIG mode",
    "GPUs with NVDEC, not in MIG mode",
    "data-center GPUs (driver 535+)",
    "driver 510+",
    "GPUs with ECC memory (data center, workstation)",
    "pre-Ampere data-center GPUs (page retirement)",
    "Ampere and newer data-center GPUs, not in MIG mode",
    "GPUs that report PCIe replays",
    "driver 550+ data-center GPUs",
    "GPUs with NVLink (SXM data center)",
    "boards with fans (consumer, workstation)",
    "MIG-capable GPUs (A100, H100, H200)",
    "all GPUs (XID critical error events)",
    "Ada, Hopper and newer GPUs, driver 570+",
    "Ampere and newer data-center GPUs, driver 570+",
};

using L = std::array<std::string_view, 4>;
using D = std::array<DcgmAlias, 4>;

const std::array<MetricDef, kMetricCount> kCatalog = {{
    {Metric::kTemperature, "gpu_temperature_celsius", G, "celsius", Group::kTemperature,
     Feature::kAny, Scope::kGpu, L{}, "GPU die temperature.",
     "nvmlDeviceGetTemperatureV(NVML_TEMPERATURE_GPU)", D{{{"DCGM_FI_DEV_GPU_TEMP", "", 1}}}},
    {Metric::kMemoryTemperature, "gpu_memory_temperature_celsius", G, "celsius",
     Group::kTemperature, Feature::kMemoryTemperature, Scope::kGpu, L{},
     "Memory (HBM junction) temperature.", "nvmlDeviceGetFieldValues(NVML_FI_DEV_MEMORY_TEMP)",
     D{{{"DCGM_FI_DEV_MEMORY_TEMP", "", 1}}}},
    // The GPU's own limits. Read from the absolute thresholds, or derived
    // from the T.Limit fields where the driver has dropped them (see
    // temperature_limits.h).
    {Metric::kShutdownTemperature, "gpu_shutdown_temperature_celsius", G, "celsius",
     Group::kTemperature, Feature::kAny, Scope::kGpu, L{},
     "Die temperature at which the GPU shuts down to protect the hardware.",
     "nvmlDeviceGetTemperatureThreshold(NVML_TEMPERATURE_THRESHOLD_SHUTDOWN), else "
     "NVML_FI_DEV_TEMPERATURE_SHUTDOWN_TLIMIT",
     D{{{"DCGM_FI_DEV_SHUTDOWN_TEMP", "", 1}}}},
    {Metric::kSlowdownTemperature, "gpu_slowdown_temperature_celsius", G, "celsius",
     Group::kTemperature, Feature::kAny, Scope::kGpu, L{},
     "Die temperature at which hardware slowdown begins (clock event reason "
     "hw_thermal_slowdown).",
     "nvmlDeviceGetTemperatureThreshold(NVML_TEMPERATURE_THRESHOLD_SLOWDOWN), else "
     "NVML_FI_DEV_TEMPERATURE_SLOWDOWN_TLIMIT",
     D{{{"DCGM_FI_DEV_SLOWDOWN_TEMP", "", 1}}}},
    {Metric::kMaxOperatingTemperature, "gpu_max_operating_temperature_celsius", G, "celsius",
     Group::kTemperature, Feature::kAny, Scope::kGpu, L{},
     "Maximum operating die temperature; above it the driver lowers clocks (clock event reason "
     "sw_thermal_slowdown), possibly below the base clock.",
     "nvmlDeviceGetTemperatureThreshold(NVML_TEMPERATURE_THRESHOLD_GPU_MAX), else "
     "NVML_FI_DEV_TEMPERATURE_GPU_MAX_TLIMIT",
     D{{{"DCGM_FI_DEV_GPU_MAX_OP_TEMP", "", 1}}}},
    {Metric::kMemoryMaxOperatingTemperature, "gpu_memory_max_operating_temperature_celsius", G,
     "celsius", Group::kTemperature, Feature::kMemoryTemperature, Scope::kGpu, L{},
     "Maximum operating memory (HBM) temperature, the memory slowdown limit; above it the driver "
     "lowers clocks (clock event reason sw_thermal_slowdown).",
     "nvmlDeviceGetTemperatureThreshold(NVML_TEMPERATURE_THRESHOLD_MEM_MAX)",
     D{{{"DCGM_FI_DEV_MEM_MAX_OP_TEMP", "", 1}}}},
    {Metric::kTemperatureMargin, "gpu_temperature_margin_celsius", G, "celsius",
     Group::kTemperature, Feature::kThermalMargin, Scope::kGpu, L{},
     "The driver's thermal margin (T.Limit, nvidia-smi temperature.gpu.tlimit): degrees the die "
     "is below the driver's reference limit, the maximum operating temperature on data-center "
     "GPUs; negative once past it.",
     "nvmlDeviceGetMarginTemperature", D{{{"DCGM_FI_DEV_GPU_TEMP_LIMIT", "", 1}}}},
    {Metric::kPowerUsage, "gpu_power_usage_watts", G, "watts", Group::kPower, Feature::kAny,
     Scope::kGpu, L{}, "Board power draw (averaged by the driver over about one second).",
     "nvmlDeviceGetPowerUsage", D{{{"DCGM_FI_DEV_POWER_USAGE", "", 1}}}},
    {Metric::kPowerInstant, "gpu_power_instant_watts", G, "watts", Group::kPower,
     Feature::kPowerInstant, Scope::kGpu, L{}, "Instantaneous board power draw.",
     "nvmlDeviceGetFieldValues(NVML_FI_DEV_POWER_INSTANT)",
     D{{{"DCGM_FI_DEV_POWER_USAGE_INSTANT", "", 1}}}},
    {Metric::kEnergy, "gpu_energy_joules_total", C, "joules", Group::kPower, Feature::kEnergy,
     Scope::kGpu, L{}, "Energy consumed since the driver was loaded.",
     "nvmlDeviceGetTotalEnergyConsumption",
     D{{{"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "", 1000}}}},
    {Metric::kPowerLimit, "gpu_power_limit_watts", G, "watts", Group::kPower, Feature::kAny,
     Scope::kGpu, L{}, "Power management limit configured for the board.",
     "nvmlDeviceGetPowerManagementLimit", D{{{"DCGM_FI_DEV_POWER_MGMT_LIMIT", "", 1}}}},
    {Metric::kPowerEnforcedLimit, "gpu_power_enforced_limit_watts", G, "watts", Group::kPower,
     Feature::kAny, Scope::kGpu, L{}, "Power limit actually enforced (the lowest of all limiters).",
     "nvmlDeviceGetEnforcedPowerLimit", D{{{"DCGM_FI_DEV_ENFORCED_POWER_LIMIT", "", 1}}}},
    {Metric::kUtilization, "gpu_utilization_ratio", G, "ratio", Group::kUtilization,
     Feature::kUtilization, Scope::kGpu, L{},
     "Fraction of the last sample period in which a kernel was running.",
     "nvmlDeviceGetUtilizationRates().gpu", D{{{"DCGM_FI_DEV_GPU_UTIL", "", 100}}}},
    {Metric::kMemoryUtilization, "gpu_memory_utilization_ratio", G, "ratio", Group::kUtilization,
     Feature::kUtilization, Scope::kGpu, L{},
     "Fraction of the last sample period in which device memory was read or written.",
     "nvmlDeviceGetUtilizationRates().memory", D{{{"DCGM_FI_DEV_MEM_COPY_UTIL", "", 100}}}},
    {Metric::kEncoderUtilization, "gpu_encoder_utilization_ratio", G, "ratio", Group::kUtilization,
     Feature::kEncoder, Scope::kGpu, L{}, "Video encoder (NVENC) utilization.",
     "nvmlDeviceGetEncoderUtilization", D{{{"DCGM_FI_DEV_ENC_UTIL", "", 100}}}},
    {Metric::kDecoderUtilization, "gpu_decoder_utilization_ratio", G, "ratio", Group::kUtilization,
     Feature::kDecoder, Scope::kGpu, L{}, "Video decoder (NVDEC) utilization.",
     "nvmlDeviceGetDecoderUtilization", D{{{"DCGM_FI_DEV_DEC_UTIL", "", 100}}}},
    {Metric::kGraphicsClock, "gpu_graphics_clock_hertz", G, "hertz", Group::kClocks, Feature::kAny,
     Scope::kGpu, L{}, "Current graphics clock.", "nvmlDeviceGetClockInfo(NVML_CLOCK_GRAPHICS)",
     D{}},
    {Metric::kSmClock, "gpu_sm_clock_hertz", G, "hertz", Group::kClocks, Feature::kAny, Scope::kGpu,
     L{}, "Current SM clock.", "nvmlDeviceGetClockInfo(NVML_CLOCK_SM)",
     D{{{"DCGM_FI_DEV_SM_CLOCK", "", 1e-6}}}},
    {Metric::kMemoryClock, "gpu_memory_clock_hertz", G, "hertz", Group::kClocks, Feature::kAny,
     Scope::kGpu, L{}, "Current memory clock.", "nvmlDeviceGetClockInfo(NVML_CLOCK_MEM)",
     D{{{"DCGM_FI_DEV_MEM_CLOCK", "", 1e-6}}}},
    {Metric::kVideoClock, "gpu_video_clock_hertz", G, "hertz", Group::kClocks, Feature::kAny,
     Scope::kGpu, L{}, "Current video clock.", "nvmlDeviceGetClockInfo(NVML_CLOCK_VIDEO)",
     D{{{"DCGM_FI_DEV_VIDEO_CLOCK", "", 1e-6}}}},
    {Metric::kPerformanceState, "gpu_performance_state", G, "", Group::kClocks, Feature::kAny,
     Scope::kGpu, L{}, "Performance state (0 = P0, maximum performance, to 15 = P15).",
     "nvmlDeviceGetPerformanceState", D{{{"DCGM_FI_DEV_PSTATE", "", 1}}}},
    {Metric::kClockEventActive, "gpu_clock_event_reason_active", G, "", Group::kClockEvents,
     Feature::kAny, Scope::kGpu, L{"reason"},
     "1 while the given reason is holding clocks down (or idle), else 0; one series per reason "
     "the GPU supports.",
     "nvmlDeviceGetCurrentClocksEventReasons", D{}},
    {Metric::kClockEventReasonsMask, "", G, "", Group::kClockEvents, Feature::kAny, Scope::kGpu,
     L{}, "Bit mask of active clock event reasons (dcgm-exporter compatibility).",
     "nvmlDeviceGetCurrentClocksEventReasons", D{{{"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "", 1}}}},
    {Metric::kClockEventDuration, "gpu_clock_event_duration_seconds_total", C, "seconds",
     Group::kClockEvents, Feature::kClockEventCounters, Scope::kGpu, L{"reason"},
     "Cumulative time clocks were held down, per reason.",
     "nvmlDeviceGetFieldValues(NVML_FI_DEV_CLOCKS_EVENT_REASON_*)",
     D{{{"DCGM_FI_DEV_POWER_VIOLATION", "sw_power_cap", 1e6},
        {"DCGM_FI_DEV_SYNC_BOOST_VIOLATION", "sync_boost", 1e6}}}},
    {Metric::kMemoryTotal, "gpu_memory_total_bytes", G, "bytes", Group::kMemory, Feature::kAny,
     Scope::kGpu, L{}, "Total framebuffer memory.", "nvmlDeviceGetMemoryInfo_v2().total",
     D{{{"DCGM_FI_DEV_FB_TOTAL", "", 1.0 / 1048576}}}},
    {Metric::kMemoryUsed, "gpu_memory_used_bytes", G, "bytes", Group::kMemory, Feature::kAny,
     Scope::kGpu, L{}, "Framebuffer memory in use.", "nvmlDeviceGetMemoryInfo_v2().used",
     D{{{"DCGM_FI_DEV_FB_USED", "", 1.0 / 1048576}}}},
    {Metric::kMemoryFree, "gpu_memory_free_bytes", G, "bytes", Group::kMemory, Feature::kAny,
     Scope::kGpu, L{}, "Framebuffer memory free.", "nvmlDeviceGetMemoryInfo_v2().free",
     D{{{"DCGM_FI_DEV_FB_FREE", "", 1.0 / 1048576}}}},
    {Metric::kMemoryReserved, "gpu_memory_reserved_bytes", G, "bytes", Group::kMemory,
     Feature::kMemoryReserved, Scope::kGpu, L{}, "Framebuffer memory reserved by the driver.",
     "nvmlDeviceGetMemoryInfo_v2().reserved", D{{{"DCGM_FI_DEV_FB_RESERVED", "", 1.0 / 1048576}}}},
    {Metric::kEccErrors, "gpu_ecc_errors_total", C, "", Group::kEcc, Feature::kEcc, Scope::kGpu,
     L{"error_type", "scope"},
     "ECC errors by type (corrected, uncorrected) and counter scope (volatile: since driver "
     "load; aggregate: lifetime).",
     "nvmlDeviceGetTotalEccErrors",
     D{{{"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "corrected,volatile", 1},
        {"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "uncorrected,volatile", 1},
        {"DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", "corrected,aggregate", 1},
        {"DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", "uncorrected,aggregate", 1}}}},
    {Metric::kRetiredPages, "gpu_retired_pages", G, "", Group::kRetirement, Feature::kRetiredPages,
     Scope::kGpu, L{"cause"},
     "Framebuffer pages retired, by cause (multiple_single_bit_ecc, double_bit_ecc).",
     "nvmlDeviceGetRetiredPages",
     D{{{"DCGM_FI_DEV_RETIRED_SBE", "multiple_single_bit_ecc", 1},
        {"DCGM_FI_DEV_RETIRED_DBE", "double_bit_ecc", 1}}}},
    {Metric::kRetiredPagesPending, "gpu_retired_pages_pending", G, "", Group::kRetirement,
     Feature::kRetiredPages, Scope::kGpu, L{},
     "1 when a page retirement is pending until the next driver reload.",
     "nvmlDeviceGetRetiredPagesPendingStatus", D{{{"DCGM_FI_DEV_RETIRED_PENDING", "", 1}}}},
    {Metric::kRemappedRows, "gpu_remapped_rows", G, "", Group::kRetirement, Feature::kRowRemapping,
     Scope::kGpu, L{"type"},
     "Memory rows remapped, by the kind of error that caused it (correctable, uncorrectable).",
     "nvmlDeviceGetRemappedRows",
     D{{{"DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "correctable", 1},
        {"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "uncorrectable", 1}}}},
    {Metric::kRemappedRowsPending, "gpu_remapped_rows_pending", G, "", Group::kRetirement,
     Feature::kRowRemapping, Scope::kGpu, L{},
     "1 when a row remapping is pending (GPU reset needed).", "nvmlDeviceGetRemappedRows",
     D{{{"DCGM_FI_DEV_ROW_REMAP_PENDING", "", 1}}}},
    {Metric::kRemappedRowsFailure, "gpu_remapped_rows_failure", G, "", Group::kRetirement,
     Feature::kRowRemapping, Scope::kGpu, L{},
     "1 when a row remapping has failed (the GPU needs service).", "nvmlDeviceGetRemappedRows",
     D{{{"DCGM_FI_DEV_ROW_REMAP_FAILURE", "", 1}}}},
    {Metric::kPcieReplay, "gpu_pcie_replay_errors_total", C, "", Group::kPcie, Feature::kPcieReplay,
     Scope::kGpu, L{}, "PCIe replays (link-level retransmissions).",
     "nvmlDeviceGetPcieReplayCounter", D{{{"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "", 1}}}},
    {Metric::kPcieLinkGeneration, "gpu_pcie_link_generation", G, "", Group::kPcie, Feature::kAny,
     Scope::kGpu, L{}, "Current PCIe link generation.", "nvmlDeviceGetCurrPcieLinkGeneration",
     D{{{"DCGM_FI_DEV_PCIE_LINK_GEN", "", 1}}}},
    {Metric::kPcieLinkWidth, "gpu_pcie_link_width", G, "", Group::kPcie, Feature::kAny, Scope::kGpu,
     L{}, "Current PCIe link width (lanes).", "nvmlDeviceGetCurrPcieLinkWidth",
     D{{{"DCGM_FI_DEV_PCIE_LINK_WIDTH", "", 1}}}},
    {Metric::kPcieTransmitBytes, "gpu_pcie_transmit_bytes_total", C, "bytes", Group::kPcie,
     Feature::kPcieByteCounters, Scope::kGpu, L{}, "Bytes transmitted over PCIe by the GPU.",
     "nvmlDeviceGetFieldValues(NVML_FI_DEV_PCIE_COUNT_TX_BYTES)", D{}},
    {Metric::kPcieReceiveBytes, "gpu_pcie_receive_bytes_total", C, "bytes", Group::kPcie,
     Feature::kPcieByteCounters, Scope::kGpu, L{}, "Bytes received over PCIe by the GPU.",
     "nvmlDeviceGetFieldValues(NVML_FI_DEV_PCIE_COUNT_RX_BYTES)", D{}},
    {Metric::kNvlinkUp, "gpu_nvlink_up", G, "", Group::kNvlink, Feature::kNvlink, Scope::kGpu,
     L{"link"}, "1 when the NVLink link is active, else 0.", "nvmlDeviceGetNvLinkState", D{}},
    {Metric::kNvlinkErrors, "gpu_nvlink_errors_total", C, "", Group::kNvlink, Feature::kNvlink,
     Scope::kGpu, L{"link", "error"},
     "NVLink data-link errors by link and kind (replay, recovery, crc_flit, crc_data, ecc_data).",
     "nvmlDeviceGetNvLinkErrorCounter", D{}},
    {Metric::kNvlinkTransmitBytes, "gpu_nvlink_transmit_bytes_total", C, "bytes", Group::kNvlink,
     Feature::kNvlink, Scope::kGpu, L{"link"}, "Payload bytes transmitted over the NVLink link.",
     "nvmlDeviceGetFieldValues(NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX)", D{}},
    {Metric::kNvlinkReceiveBytes, "gpu_nvlink_receive_bytes_total", C, "bytes", Group::kNvlink,
     Feature::kNvlink, Scope::kGpu, L{"link"}, "Payload bytes received over the NVLink link.",
     "nvmlDeviceGetFieldValues(NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX)", D{}},
    {Metric::kFanSpeed, "gpu_fan_speed_ratio", G, "ratio", Group::kFan, Feature::kFans, Scope::kGpu,
     L{"fan"}, "Fan speed as a fraction of its maximum, per fan.", "nvmlDeviceGetFanSpeed_v2",
     D{{{"DCGM_FI_DEV_FAN_SPEED", "0", 100}}}},
    {Metric::kInfo, "gpu_info", I, "", Group::kInventory, Feature::kAny, Scope::kGpu,
     L{"driver_version", "nvml_version", "cuda_version", "vbios_version"},
     "Driver, NVML, CUDA driver and VBIOS versions; value is always 1.",
     "nvmlSystemGetDriverVersion, nvmlSystemGetNVMLVersion, nvmlSystemGetCudaDriverVersion_v2, "
     "nvmlDeviceGetVbiosVersion",
     D{}},
    {Metric::kGraphicsClockMax, "gpu_graphics_clock_max_hertz", G, "hertz", Group::kInventory,
     Feature::kAny, Scope::kGpu, L{}, "Maximum graphics clock.",
     "nvmlDeviceGetMaxClockInfo(NVML_CLOCK_GRAPHICS)", D{}},
    {Metric::kSmClockMax, "gpu_sm_clock_max_hertz", G, "hertz", Group::kInventory, Feature::kAny,
     Scope::kGpu, L{}, "Maximum SM clock.", "nvmlDeviceGetMaxClockInfo(NVML_CLOCK_SM)",
     D{{{"DCGM_FI_DEV_MAX_SM_CLOCK", "", 1e-6}}}},
    {Metric::kMemoryClockMax, "gpu_memory_clock_max_hertz", G, "hertz", Group::kInventory,
     Feature::kAny, Scope::kGpu, L{}, "Maximum memory clock.",
     "nvmlDeviceGetMaxClockInfo(NVML_CLOCK_MEM)", D{{{"DCGM_FI_DEV_MAX_MEM_CLOCK", "", 1e-6}}}},
    {Metric::kVideoClockMax, "gpu_video_clock_max_hertz", G, "hertz", Group::kInventory,
     Feature::kAny, Scope::kGpu, L{}, "Maximum video clock.",
     "nvmlDeviceGetMaxClockInfo(NVML_CLOCK_VIDEO)", D{{{"DCGM_FI_DEV_MAX_VIDEO_CLOCK", "", 1e-6}}}},
    {Metric::kPcieLinkGenerationMax, "gpu_pcie_link_generation_max", G, "", Group::kInventory,
     Feature::kAny, Scope::kGpu, L{}, "Maximum PCIe link generation of the GPU and slot.",
     "nvmlDeviceGetMaxPcieLinkGeneration", D{{{"DCGM_FI_DEV_PCIE_MAX_LINK_GEN", "", 1}}}},
    {Metric::kPcieLinkWidthMax, "gpu_pcie_link_width_max", G, "", Group::kInventory, Feature::kAny,
     Scope::kGpu, L{}, "Maximum PCIe link width (lanes).", "nvmlDeviceGetMaxPcieLinkWidth",
     D{{{"DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH", "", 1}}}},
    {Metric::kXidErrors, "gpu_xid_errors_total", C, "", Group::kXid, Feature::kXidEvents,
     Scope::kGpu, L{"xid"}, "XID critical error events seen since the agent started, per XID code.",
     "nvmlEventSetWait_v2(nvmlEventTypeXidCriticalError)", D{}},
    {Metric::kXidLast, "", G, "", Group::kXid, Feature::kXidEvents, Scope::kGpu, L{},
     "The most recent XID error code (dcgm-exporter compatibility; present once an XID "
     "occurred).",
     "nvmlEventSetWait_v2(nvmlEventTypeXidCriticalError)", D{{{"DCGM_FI_DEV_XID_ERRORS", "", 1}}}},
    {Metric::kMigModeEnabled, "gpu_mig_mode_enabled", G, "", Group::kMig, Feature::kMig,
     Scope::kGpu, L{}, "1 when MIG mode is enabled on the GPU.", "nvmlDeviceGetMigMode", D{}},
    {Metric::kMigMemoryTotal, "gpu_mig_memory_total_bytes", G, "bytes", Group::kMig, Feature::kMig,
     Scope::kMigInstance, L{}, "Framebuffer memory of a MIG instance.",
     "nvmlDeviceGetMemoryInfo_v2(MIG device)", D{{{"DCGM_FI_DEV_FB_TOTAL", "", 1.0 / 1048576}}}},
    {Metric::kMigMemoryUsed, "gpu_mig_memory_used_bytes", G, "bytes", Group::kMig, Feature::kMig,
     Scope::kMigInstance, L{}, "Framebuffer memory in use in a MIG instance.",
     "nvmlDeviceGetMemoryInfo_v2(MIG device)", D{{{"DCGM_FI_DEV_FB_USED", "", 1.0 / 1048576}}}},
    {Metric::kRecoveryAction, "gpu_recovery_action", G, "", Group::kHealth,
     Feature::kRecoveryAction, Scope::kGpu, L{},
     "Recovery action the driver recommends: 0 none, 1 GPU reset, 2 node reboot, 3 drain "
     "peer-to-peer traffic, 4 drain peer-to-peer traffic and reset, 5 recover the IMEX domain.",
     "nvmlDeviceGetFieldValues(NVML_FI_DEV_GET_GPU_RECOVERY_ACTION)",
     D{{{"DCGM_FI_DEV_GET_GPU_RECOVERY_ACTION", "", 1}}}},
    {Metric::kLost, "gpu_lost", G, "", Group::kHealth, Feature::kAny, Scope::kGpu, L{},
     "1 once NVML reported the GPU lost (fallen off the bus); its other metrics are then absent.",
     "any per-device call returning NVML_ERROR_GPU_IS_LOST", D{}},
    {Metric::kAgentNvmlUp, "gpumon_nvml_up", G, "", Group::kAgent, Feature::kAny, Scope::kAgent,
     L{}, "1 when NVML is loaded and initialized, else 0 (see the log for why).", "nvmlInit_v2",
     D{}},
    {Metric::kAgentGpus, "gpumon_gpus", G, "", Group::kAgent, Feature::kAny, Scope::kAgent, L{},
     "Number of GPUs discovered.", "nvmlDeviceGetCount_v2", D{}},
    {Metric::kAgentCollectionDuration, "gpumon_collection_duration_seconds", G, "seconds",
     Group::kAgent, Feature::kAny, Scope::kAgent, L{"group"},
     "Wall time of the last collection of a metric group over all GPUs.", "agent", D{}},
    {Metric::kAgentCollections, "gpumon_collections_total", C, "", Group::kAgent, Feature::kAny,
     Scope::kAgent, L{"group"}, "Collections of a metric group.", "agent", D{}},
    {Metric::kAgentNvmlErrors, "gpumon_nvml_errors_total", C, "", Group::kAgent, Feature::kAny,
     Scope::kAgent, L{"function", "return_code"},
     "NVML calls that failed after start-up discovery, by function and return code.", "agent", D{}},
    {Metric::kAgentBuildInfo, "gpumon_build_info", G, "", Group::kAgent, Feature::kAny,
     Scope::kAgent, L{"version"}, "gpumon version; value is always 1.", "agent", D{}},
    {Metric::kProcessCpu, "process_cpu_seconds_total", C, "seconds", Group::kAgent, Feature::kAny,
     Scope::kAgent, L{}, "CPU time (user + system) used by the agent.", "/proc/self/stat", D{}},
    {Metric::kProcessResident, "process_resident_memory_bytes", G, "bytes", Group::kAgent,
     Feature::kAny, Scope::kAgent, L{}, "Resident memory of the agent.", "/proc/self/stat", D{}},
    {Metric::kProcessStartTime, "process_start_time_seconds", G, "seconds", Group::kAgent,
     Feature::kAny, Scope::kAgent, L{}, "Start time of the agent since the Unix epoch.",
     "/proc/self/stat", D{}},
    {Metric::kProcessOpenFds, "process_open_fds", G, "", Group::kAgent, Feature::kAny,
     Scope::kAgent, L{}, "Open file descriptors of the agent.", "/proc/self/fd", D{}},
}};

}  // namespace

std::string_view GroupName(Group group) { return kGroupNames[static_cast<int>(group)]; }

std::optional<Group> GroupFromName(std::string_view name) {
  for (int i = 0; i < kGroupCount; ++i) {
    if (kGroupNames[i] == name) return static_cast<Group>(i);
  }
  return std::nullopt;
}

std::chrono::milliseconds DefaultInterval(Group group) {
  using std::chrono::seconds;
  switch (group) {
    case Group::kPcie:
    case Group::kNvlink:
    case Group::kMig:
      return seconds(5);
    case Group::kEcc:
    case Group::kRetirement:
    case Group::kInventory:
      return seconds(30);
    default:
      return seconds(1);
  }
}

bool IsSelectableGroup(Group group) {
  return group != Group::kHealth && group != Group::kAgent && group != Group::kCount;
}

std::string_view FeatureDescription(Feature feature) {
  return kFeatureDescriptions[static_cast<int>(feature)];
}

int MetricDef::label_count() const {
  return static_cast<int>(
      std::count_if(labels.begin(), labels.end(), [](std::string_view l) { return !l.empty(); }));
}

const std::array<MetricDef, kMetricCount>& Catalog() { return kCatalog; }

std::string RenderMetricsReference() {
  std::string out =
      "# gpumon metrics reference\n\n"
      "Generated from the metric catalog (`src/gpu/catalog.cc`) by `gpumon catalog --markdown`;\n"
      "do not edit by hand. A test fails when this file and the catalog differ.\n\n"
      "Every GPU metric carries the labels `gpu` (index), `uuid`, `pci_bus_id`, `device`\n"
      "(`nvidia<index>`), `model` and `hostname` (native names) or `gpu`, `UUID`, `pci_bus_id`,\n"
      "`device`, `modelName`, `Hostname` and `DCGM_FI_DRIVER_VERSION` (DCGM-compatible names),\n"
      "plus `simulated=\"true\"` when the data comes from the simulator. MIG-instance metrics add\n"
      "`gpu_instance_id`, `compute_instance_id`, `mig_profile` and `mig_uuid` (native) or\n"
      "`GPU_I_ID`, `GPU_I_PROFILE` (DCGM).\n\n"
      "A metric the GPU or driver does not support is absent for that GPU, never a placeholder\n"
      "value.\n";
  for (int g = 0; g < kGroupCount; ++g) {
    auto group = static_cast<Group>(g);
    out += "\n## Group `" + std::string(GroupName(group)) + "`";
    if (IsSelectableGroup(group)) {
      auto ms = DefaultInterval(group).count();
      out += " (default interval " + std::to_string(ms / 1000) + "s)";
    }
    out +=
        "\n\n| name | type | labels | description | DCGM-compatible name | NVML source | supported "
        "on |\n";
    out += "| --- | --- | --- | --- | --- | --- | --- |\n";
    for (const auto& m : kCatalog) {
      if (m.group != group) continue;
      std::string labels;
      for (auto l : m.labels) {
        if (l.empty()) continue;
        if (!labels.empty()) labels += ", ";
        labels += '`';
        labels += l;
        labels += '`';
      }
      std::string dcgm;
      for (const auto& a : m.dcgm) {
        if (a.name.empty()) continue;
        if (!dcgm.empty()) dcgm += "<br>";
        dcgm += '`';
        dcgm += a.name;
        dcgm += '`';
        if (!a.match.empty()) dcgm += " (" + std::string(a.match) + ")";
        if (a.scale != 1) {
          char buf[32];
          std::snprintf(buf, sizeof buf, " ×%g", a.scale);
          dcgm += buf;
        }
      }
      std::string name = "—";
      if (!m.name.empty()) {
        name = "`";
        name += m.name;
        name += '`';
      }
      for (std::string_view cell :
           {std::string_view(name), std::string_view(exposition::MetricTypeName(m.type)),
            std::string_view(labels), m.help, std::string_view(dcgm), m.source,
            FeatureDescription(m.feature)}) {
        out += "| ";
        out += cell;
        out += ' ';
      }
      out += "|\n";
    }
  }
  return out;
}

}  // namespace gpumon::gpu
