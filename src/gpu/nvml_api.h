// NVML declarations, written for gpumon from NVIDIA's public NVML API reference.
//
// Contract: this header declares exactly the NVML types, constants and entry
// points gpumon calls, with the C ABI of the public API (same names, same
// layouts, same values). gpumon never links against NVML: the real
// libnvidia-ml.so.1 (or the simulator's fake one) is opened at run time with
// dlopen and every function is resolved on its own (see nvml_library.h), so a
// driver that lacks an entry point only loses the metrics that need it.
//
// The simulator's fake NVML (src/sim/fake_nvml*.cc) implements these same
// declarations, which keeps both sides of the ABI in one place.
#pragma once

#include <cstdint>

extern "C" {

typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct nvmlEventSet_st* nvmlEventSet_t;

typedef enum nvmlReturn_enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_ALREADY_INITIALIZED = 5,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_INSUFFICIENT_POWER = 8,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_TIMEOUT = 10,
  NVML_ERROR_IRQ_ISSUE = 11,
  NVML_ERROR_LIBRARY_NOT_FOUND = 12,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_CORRUPTED_INFOROM = 14,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_RESET_REQUIRED = 16,
  NVML_ERROR_OPERATING_SYSTEM = 17,
  NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
  NVML_ERROR_IN_USE = 19,
  NVML_ERROR_MEMORY = 20,
  NVML_ERROR_NO_DATA = 21,
  NVML_ERROR_VGPU_ECC_NOT_ENABLED = 22,
  NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
  NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
  NVML_ERROR_DEPRECATED = 26,
  NVML_ERROR_NOT_READY = 27,
  NVML_ERROR_GPU_NOT_FOUND = 28,
  NVML_ERROR_INVALID_STATE = 29,
  NVML_ERROR_UNKNOWN = 999
} nvmlReturn_t;

typedef enum nvmlEnableState_enum {
  NVML_FEATURE_DISABLED = 0,
  NVML_FEATURE_ENABLED = 1
} nvmlEnableState_t;

typedef enum nvmlTemperatureSensors_enum { NVML_TEMPERATURE_GPU = 0 } nvmlTemperatureSensors_t;

// Absolute temperature limits, degrees C (nvmlDeviceGetTemperatureThreshold).
typedef enum nvmlTemperatureThresholds_enum {
  NVML_TEMPERATURE_THRESHOLD_SHUTDOWN = 0,       // HW protection shutdown
  NVML_TEMPERATURE_THRESHOLD_SLOWDOWN = 1,       // HW slowdown begins
  NVML_TEMPERATURE_THRESHOLD_MEM_MAX = 2,        // memory: SW slowdown begins
  NVML_TEMPERATURE_THRESHOLD_GPU_MAX = 3,        // may throttle below base clock
  NVML_TEMPERATURE_THRESHOLD_ACOUSTIC_MIN = 4,   // acoustic threshold range
  NVML_TEMPERATURE_THRESHOLD_ACOUSTIC_CURR = 5,  // and current setting
  NVML_TEMPERATURE_THRESHOLD_ACOUSTIC_MAX = 6,
  NVML_TEMPERATURE_THRESHOLD_GPS_CURR = 7,
  NVML_TEMPERATURE_THRESHOLD_COUNT = 8
} nvmlTemperatureThresholds_t;

// What the driver recommends doing to the GPU
// (NVML_FI_DEV_GET_GPU_RECOVERY_ACTION).
typedef enum nvmlDeviceGpuRecoveryAction_s {
  NVML_GPU_RECOVERY_ACTION_NONE = 0,
  NVML_GPU_RECOVERY_ACTION_GPU_RESET = 1,
  NVML_GPU_RECOVERY_ACTION_NODE_REBOOT = 2,
  NVML_GPU_RECOVERY_ACTION_DRAIN_P2P = 3,
  NVML_GPU_RECOVERY_ACTION_DRAIN_AND_RESET = 4,
  NVML_GPU_RECOVERY_ACTION_RECOVER_IMEX_DOMAIN = 5  // newer drivers
} nvmlDeviceGpuRecoveryAction_t;

typedef enum nvmlClockType_enum {
  NVML_CLOCK_GRAPHICS = 0,
  NVML_CLOCK_SM = 1,
  NVML_CLOCK_MEM = 2,
  NVML_CLOCK_VIDEO = 3
} nvmlClockType_t;

typedef enum nvmlMemoryErrorType_enum {
  NVML_MEMORY_ERROR_TYPE_CORRECTED = 0,
  NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1
} nvmlMemoryErrorType_t;

typedef enum nvmlEccCounterType_enum {
  NVML_VOLATILE_ECC = 0,
  NVML_AGGREGATE_ECC = 1
} nvmlEccCounterType_t;

typedef enum nvmlPageRetirementCause_enum {
  NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS = 0,
  NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR = 1
} nvmlPageRetirementCause_t;

typedef enum nvmlNvLinkErrorCounter_enum {
  NVML_NVLINK_ERROR_DL_REPLAY = 0,
  NVML_NVLINK_ERROR_DL_RECOVERY = 1,
  NVML_NVLINK_ERROR_DL_CRC_FLIT = 2,
  NVML_NVLINK_ERROR_DL_CRC_DATA = 3,
  NVML_NVLINK_ERROR_DL_ECC_DATA = 4
} nvmlNvLinkErrorCounter_t;

// Performance states P0..P15; NVML_PSTATE_UNKNOWN means "not known" and is
// never exported.
typedef enum nvmlPStates_enum {
  NVML_PSTATE_0 = 0,
  NVML_PSTATE_15 = 15,
  NVML_PSTATE_UNKNOWN = 32
} nvmlPstates_t;

typedef enum nvmlValueType_enum {
  NVML_VALUE_TYPE_DOUBLE = 0,
  NVML_VALUE_TYPE_UNSIGNED_INT = 1,
  NVML_VALUE_TYPE_UNSIGNED_LONG = 2,
  NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3,
  NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4,
  NVML_VALUE_TYPE_SIGNED_INT = 5,
  NVML_VALUE_TYPE_UNSIGNED_SHORT = 6
} nvmlValueType_t;

typedef union nvmlValue_st {
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
  unsigned short usVal;
} nvmlValue_t;

typedef struct nvmlFieldValue_st {
  unsigned int fieldId;
  unsigned int scopeId;  // e.g. the NVLink index for per-link fields
  long long timestamp;   // microseconds since 1970
  long long latencyUsec;
  nvmlValueType_t valueType;
  nvmlReturn_t nvmlReturn;  // per-field result: NOT_SUPPORTED etc.
  nvmlValue_t value;
} nvmlFieldValue_t;

#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE 32
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
#define NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE 80
#define NVML_NVLINK_MAX_LINKS 18

typedef struct nvmlPciInfo_st {
  char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;

typedef struct nvmlUtilization_st {
  unsigned int gpu;     // percent
  unsigned int memory;  // percent
} nvmlUtilization_t;

typedef struct nvmlMemory_st {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_t;

// Versioned structs carry sizeof | (version << 24) in their first member.
#define NVML_STRUCT_VERSION(data, ver) \
  (unsigned int)(sizeof(nvml##data##_v##ver##_t) | ((ver) << 24U))

typedef struct nvmlMemory_v2_st {
  unsigned int version;
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_v2_t;
#define nvmlMemory_v2 NVML_STRUCT_VERSION(Memory, 2)

typedef struct nvmlTemperature_v1_st {
  unsigned int version;
  nvmlTemperatureSensors_t sensorType;
  int temperature;
} nvmlTemperature_v1_t;
typedef nvmlTemperature_v1_t nvmlTemperature_t;
#define nvmlTemperature_v1 NVML_STRUCT_VERSION(Temperature, 1)

// The die's thermal margin ("T.Limit"): degrees below the driver's T.Limit
// reference point (the maximum operating temperature where
// NVML_FI_DEV_TEMPERATURE_GPU_MAX_TLIMIT is 0), negative past it.
typedef struct nvmlMarginTemperature_v1_st {
  unsigned int version;
  int marginTemperature;
} nvmlMarginTemperature_v1_t;
typedef nvmlMarginTemperature_v1_t nvmlMarginTemperature_t;
#define nvmlMarginTemperature_v1 NVML_STRUCT_VERSION(MarginTemperature, 1)

typedef struct nvmlEventData_st {
  nvmlDevice_t device;
  unsigned long long eventType;
  unsigned long long eventData;  // the XID for nvmlEventTypeXidCriticalError
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
} nvmlEventData_t;

#define NVML_DEVICE_MIG_ENABLE 1

// A process with a context on a GPU (nvmlDevice{Compute,Graphics}RunningProcesses).
// usedGpuMemory is NVML_VALUE_NOT_AVAILABLE (all bits set) when the driver
// cannot tell (e.g. under WDDM, or without the privileges to see it);
// gpuInstanceId / computeInstanceId are 0xFFFFFFFF outside MIG mode.
//
// The layouts by version of the entry point:
// - the unversioned (v1) call fills nvmlProcessInfo_v1_t;
// - _v2 fills nvmlProcessInfo_v2_t;
// - _v3 fills nvmlProcessInfo_t, which current headers define as the v2
//   layout. The headers of drivers 525..530 (CUDA 12.0/12.1) briefly appended
//   usedGpuCcProtectedMemory to nvmlProcessInfo_t, and those drivers' _v3
//   writes that longer layout (nvmlProcessInfoCc_t here); see
//   NvmlLibrary::process_info_v3_size() for how the two are told apart.
typedef struct nvmlProcessInfo_v1_st {
  unsigned int pid;
  unsigned long long usedGpuMemory;  // bytes
} nvmlProcessInfo_v1_t;

typedef struct nvmlProcessInfo_v2_st {
  unsigned int pid;
  unsigned long long usedGpuMemory;  // bytes
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
} nvmlProcessInfo_v2_t;
typedef nvmlProcessInfo_v2_t nvmlProcessInfo_t;

// nvmlProcessInfo_t as the 525..530 drivers' _v3 entry points write it.
typedef struct nvmlProcessInfoCc_st {
  unsigned int pid;
  unsigned long long usedGpuMemory;  // bytes
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
  unsigned long long usedGpuCcProtectedMemory;  // confidential-computing memory, bytes
} nvmlProcessInfoCc_t;

#define NVML_VALUE_NOT_AVAILABLE_ULL 0xFFFFFFFFFFFFFFFFULL

#define nvmlEventTypeXidCriticalError 0x0000000000000008LL

// Clock event reasons (formerly "throttle reasons"), a bit mask.
#define nvmlClocksEventReasonGpuIdle 0x0000000000000001ULL
#define nvmlClocksEventReasonApplicationsClocksSetting 0x0000000000000002ULL
#define nvmlClocksEventReasonSwPowerCap 0x0000000000000004ULL
#define nvmlClocksThrottleReasonHwSlowdown 0x0000000000000008ULL
#define nvmlClocksEventReasonSyncBoost 0x0000000000000010ULL
#define nvmlClocksEventReasonSwThermalSlowdown 0x0000000000000020ULL
#define nvmlClocksThrottleReasonHwThermalSlowdown 0x0000000000000040ULL
#define nvmlClocksThrottleReasonHwPowerBrakeSlowdown 0x0000000000000080ULL
#define nvmlClocksEventReasonDisplayClockSetting 0x0000000000000100ULL

// Field identifiers for nvmlDeviceGetFieldValues (values from nvml.h).
#define NVML_FI_DEV_PERF_POLICY_POWER 74
#define NVML_FI_DEV_PERF_POLICY_THERMAL 75
#define NVML_FI_DEV_PERF_POLICY_SYNC_BOOST 76
#define NVML_FI_DEV_PERF_POLICY_BOARD_LIMIT 77
#define NVML_FI_DEV_PERF_POLICY_LOW_UTILIZATION 78
#define NVML_FI_DEV_PERF_POLICY_RELIABILITY 79
#define NVML_FI_DEV_MEMORY_TEMP 82
#define NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION 83
#define NVML_FI_DEV_NVLINK_LINK_COUNT 91
#define NVML_FI_DEV_PCIE_REPLAY_COUNTER 94
#define NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX 138  // KiB, scopeId = link
#define NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX 139  // KiB, scopeId = link
#define NVML_FI_DEV_REMAPPED_COR 142
#define NVML_FI_DEV_REMAPPED_UNC 143
#define NVML_FI_DEV_REMAPPED_PENDING 144
#define NVML_FI_DEV_REMAPPED_FAILURE 145
#define NVML_FI_DEV_POWER_INSTANT 186  // milliwatts
// T.Limit temperature limits (Ada and newer; signed int): each limit as a
// signed offset from the T.Limit reference point that the margin
// (nvmlDeviceGetMarginTemperature) is measured against, negative = hotter.
// Hopper reports e.g. GPU_MAX 0, SLOWDOWN -2, SHUTDOWN -5 (or -8), MEM_MAX 0 (the
// memory's offset is from its own reference, for which NVML has no margin).
// absolute limit = current temperature + margin - offset.
#define NVML_FI_DEV_TEMPERATURE_SHUTDOWN_TLIMIT 193
#define NVML_FI_DEV_TEMPERATURE_SLOWDOWN_TLIMIT 194
#define NVML_FI_DEV_TEMPERATURE_MEM_MAX_TLIMIT 195
#define NVML_FI_DEV_TEMPERATURE_GPU_MAX_TLIMIT 196
#define NVML_FI_DEV_PCIE_COUNT_TX_BYTES 197
#define NVML_FI_DEV_PCIE_COUNT_RX_BYTES 198
// The recovery action the driver recommends (unsigned int,
// nvmlDeviceGpuRecoveryAction_t).
#define NVML_FI_DEV_GET_GPU_RECOVERY_ACTION 230
// Cumulative time (nanoseconds) the clocks were held back, per cause.
#define NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP NVML_FI_DEV_PERF_POLICY_POWER
#define NVML_FI_DEV_CLOCKS_EVENT_REASON_SYNC_BOOST NVML_FI_DEV_PERF_POLICY_SYNC_BOOST
#define NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN 251
#define NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN 252
#define NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN 253

// ---------------------------------------------------------------------------
// Entry points. Each NVML_FUNCTION(name, signature) line below is expanded
// twice: into a function-pointer member of NvmlLibrary (nvml_library.h) and,
// in the fake NVML, into an exported definition. Order does not matter.
// ---------------------------------------------------------------------------
#define GPUMON_NVML_FUNCTIONS(X)                                                                  \
  X(nvmlInit_v2, nvmlReturn_t, (void))                                                            \
  X(nvmlShutdown, nvmlReturn_t, (void))                                                           \
  X(nvmlErrorString, const char*, (nvmlReturn_t result))                                          \
  X(nvmlSystemGetDriverVersion, nvmlReturn_t, (char* version, unsigned int length))               \
  X(nvmlSystemGetNVMLVersion, nvmlReturn_t, (char* version, unsigned int length))                 \
  X(nvmlSystemGetCudaDriverVersion_v2, nvmlReturn_t, (int* cudaDriverVersion))                    \
  X(nvmlDeviceGetCount_v2, nvmlReturn_t, (unsigned int* deviceCount))                             \
  X(nvmlDeviceGetHandleByIndex_v2, nvmlReturn_t, (unsigned int index, nvmlDevice_t* device))      \
  X(nvmlDeviceGetHandleByUUID, nvmlReturn_t, (const char* uuid, nvmlDevice_t* device))            \
  X(nvmlDeviceGetName, nvmlReturn_t, (nvmlDevice_t device, char* name, unsigned int length))      \
  X(nvmlDeviceGetUUID, nvmlReturn_t, (nvmlDevice_t device, char* uuid, unsigned int length))      \
  X(nvmlDeviceGetPciInfo_v3, nvmlReturn_t, (nvmlDevice_t device, nvmlPciInfo_t * pci))            \
  X(nvmlDeviceGetVbiosVersion, nvmlReturn_t,                                                      \
    (nvmlDevice_t device, char* version, unsigned int length))                                    \
  X(nvmlDeviceGetTemperatureV, nvmlReturn_t,                                                      \
    (nvmlDevice_t device, nvmlTemperature_t * temperature))                                       \
  X(nvmlDeviceGetTemperature, nvmlReturn_t,                                                       \
    (nvmlDevice_t device, nvmlTemperatureSensors_t sensorType, unsigned int* temp))               \
  X(nvmlDeviceGetTemperatureThreshold, nvmlReturn_t,                                              \
    (nvmlDevice_t device, nvmlTemperatureThresholds_t thresholdType, unsigned int* temp))         \
  X(nvmlDeviceGetMarginTemperature, nvmlReturn_t,                                                 \
    (nvmlDevice_t device, nvmlMarginTemperature_t * marginTempInfo))                              \
  X(nvmlDeviceGetPowerUsage, nvmlReturn_t, (nvmlDevice_t device, unsigned int* power))            \
  X(nvmlDeviceGetPowerManagementLimit, nvmlReturn_t, (nvmlDevice_t device, unsigned int* limit))  \
  X(nvmlDeviceGetEnforcedPowerLimit, nvmlReturn_t, (nvmlDevice_t device, unsigned int* limit))    \
  X(nvmlDeviceGetTotalEnergyConsumption, nvmlReturn_t,                                            \
    (nvmlDevice_t device, unsigned long long* energy))                                            \
  X(nvmlDeviceGetUtilizationRates, nvmlReturn_t,                                                  \
    (nvmlDevice_t device, nvmlUtilization_t * utilization))                                       \
  X(nvmlDeviceGetEncoderUtilization, nvmlReturn_t,                                                \
    (nvmlDevice_t device, unsigned int* utilization, unsigned int* samplingPeriodUs))             \
  X(nvmlDeviceGetDecoderUtilization, nvmlReturn_t,                                                \
    (nvmlDevice_t device, unsigned int* utilization, unsigned int* samplingPeriodUs))             \
  X(nvmlDeviceGetClockInfo, nvmlReturn_t,                                                         \
    (nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock))                             \
  X(nvmlDeviceGetMaxClockInfo, nvmlReturn_t,                                                      \
    (nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock))                             \
  X(nvmlDeviceGetCurrentClocksEventReasons, nvmlReturn_t,                                         \
    (nvmlDevice_t device, unsigned long long* clocksEventReasons))                                \
  X(nvmlDeviceGetSupportedClocksEventReasons, nvmlReturn_t,                                       \
    (nvmlDevice_t device, unsigned long long* supportedClocksEventReasons))                       \
  X(nvmlDeviceGetMemoryInfo_v2, nvmlReturn_t, (nvmlDevice_t device, nvmlMemory_v2_t * memory))    \
  X(nvmlDeviceGetMemoryInfo, nvmlReturn_t, (nvmlDevice_t device, nvmlMemory_t * memory))          \
  X(nvmlDeviceGetTotalEccErrors, nvmlReturn_t,                                                    \
    (nvmlDevice_t device, nvmlMemoryErrorType_t errorType, nvmlEccCounterType_t counterType,      \
     unsigned long long* eccCounts))                                                              \
  X(nvmlDeviceGetRetiredPages, nvmlReturn_t,                                                      \
    (nvmlDevice_t device, nvmlPageRetirementCause_t cause, unsigned int* pageCount,               \
     unsigned long long* addresses))                                                              \
  X(nvmlDeviceGetRetiredPagesPendingStatus, nvmlReturn_t,                                         \
    (nvmlDevice_t device, nvmlEnableState_t * isPending))                                         \
  X(nvmlDeviceGetRemappedRows, nvmlReturn_t,                                                      \
    (nvmlDevice_t device, unsigned int* corrRows, unsigned int* uncRows, unsigned int* isPending, \
     unsigned int* failureOccurred))                                                              \
  X(nvmlDeviceGetPcieReplayCounter, nvmlReturn_t, (nvmlDevice_t device, unsigned int* value))     \
  X(nvmlDeviceGetCurrPcieLinkGeneration, nvmlReturn_t,                                            \
    (nvmlDevice_t device, unsigned int* currLinkGen))                                             \
  X(nvmlDeviceGetCurrPcieLinkWidth, nvmlReturn_t,                                                 \
    (nvmlDevice_t device, unsigned int* currLinkWidth))                                           \
  X(nvmlDeviceGetMaxPcieLinkGeneration, nvmlReturn_t,                                             \
    (nvmlDevice_t device, unsigned int* maxLinkGen))                                              \
  X(nvmlDeviceGetMaxPcieLinkWidth, nvmlReturn_t,                                                  \
    (nvmlDevice_t device, unsigned int* maxLinkWidth))                                            \
  X(nvmlDeviceGetFieldValues, nvmlReturn_t,                                                       \
    (nvmlDevice_t device, int valuesCount, nvmlFieldValue_t* values))                             \
  X(nvmlDeviceGetNvLinkState, nvmlReturn_t,                                                       \
    (nvmlDevice_t device, unsigned int link, nvmlEnableState_t* isActive))                        \
  X(nvmlDeviceGetNvLinkErrorCounter, nvmlReturn_t,                                                \
    (nvmlDevice_t device, unsigned int link, nvmlNvLinkErrorCounter_t counter,                    \
     unsigned long long* counterValue))                                                           \
  X(nvmlDeviceGetNumFans, nvmlReturn_t, (nvmlDevice_t device, unsigned int* numFans))             \
  X(nvmlDeviceGetFanSpeed_v2, nvmlReturn_t,                                                       \
    (nvmlDevice_t device, unsigned int fan, unsigned int* speed))                                 \
  X(nvmlDeviceGetPerformanceState, nvmlReturn_t, (nvmlDevice_t device, nvmlPstates_t * pState))   \
  X(nvmlEventSetCreate, nvmlReturn_t, (nvmlEventSet_t * set))                                     \
  X(nvmlDeviceGetSupportedEventTypes, nvmlReturn_t,                                               \
    (nvmlDevice_t device, unsigned long long* eventTypes))                                        \
  X(nvmlDeviceRegisterEvents, nvmlReturn_t,                                                       \
    (nvmlDevice_t device, unsigned long long eventTypes, nvmlEventSet_t set))                     \
  X(nvmlEventSetWait_v2, nvmlReturn_t,                                                            \
    (nvmlEventSet_t set, nvmlEventData_t * data, unsigned int timeoutms))                         \
  X(nvmlEventSetFree, nvmlReturn_t, (nvmlEventSet_t set))                                         \
  X(nvmlDeviceGetMigMode, nvmlReturn_t,                                                           \
    (nvmlDevice_t device, unsigned int* currentMode, unsigned int* pendingMode))                  \
  X(nvmlDeviceGetMaxMigDeviceCount, nvmlReturn_t, (nvmlDevice_t device, unsigned int* count))     \
  X(nvmlDeviceGetMigDeviceHandleByIndex, nvmlReturn_t,                                            \
    (nvmlDevice_t device, unsigned int index, nvmlDevice_t* migDevice))                           \
  X(nvmlDeviceGetGpuInstanceId, nvmlReturn_t, (nvmlDevice_t device, unsigned int* id))            \
  X(nvmlDeviceGetComputeInstanceId, nvmlReturn_t, (nvmlDevice_t device, unsigned int* id))        \
  X(nvmlDeviceGetComputeRunningProcesses_v3, nvmlReturn_t,                                        \
    (nvmlDevice_t device, unsigned int* infoCount, nvmlProcessInfo_t* infos))                     \
  X(nvmlDeviceGetComputeRunningProcesses_v2, nvmlReturn_t,                                        \
    (nvmlDevice_t device, unsigned int* infoCount, nvmlProcessInfo_v2_t* infos))                  \
  X(nvmlDeviceGetComputeRunningProcesses, nvmlReturn_t,                                           \
    (nvmlDevice_t device, unsigned int* infoCount, nvmlProcessInfo_v1_t* infos))                  \
  X(nvmlDeviceGetGraphicsRunningProcesses_v3, nvmlReturn_t,                                       \
    (nvmlDevice_t device, unsigned int* infoCount, nvmlProcessInfo_t* infos))                     \
  X(nvmlDeviceGetGraphicsRunningProcesses_v2, nvmlReturn_t,                                       \
    (nvmlDevice_t device, unsigned int* infoCount, nvmlProcessInfo_v2_t* infos))                  \
  X(nvmlDeviceGetGraphicsRunningProcesses, nvmlReturn_t,                                          \
    (nvmlDevice_t device, unsigned int* infoCount, nvmlProcessInfo_v1_t* infos))

// Exported only by the simulator's fake NVML (never by NVIDIA's library):
// its presence marks every value read through the library as simulated.
#define GPUMON_SIMULATED_NVML_MARKER "gpumonSimulatedNvml"

}  // extern "C"
