// The correspondence between the native and the DCGM-compatible naming
// schemes, as a table for translating queries and rule files: derived from
// the metric catalog's DCGM aliases (names, the label values an alias stands
// for, scales) and from the label names family_builder uses in each scheme.
//
// Contract:
// - DcgmMappingTable() lists, in catalog order, every native metric that has
//   a DCGM equivalent, with one DcgmSeries per alias: the DCGM name, the
//   native extra labels (and their values) the alias stands for (its
//   DcgmAlias::match; the DCGM series lack those labels), and the scale
//   (DCGM value = native value × scale).
// - gpu_clock_event_reason_active has no alias of its own: each reason maps
//   to one bit of DCGM_FI_DEV_CLOCK_THROTTLE_REASONS (native value =
//   floor(mask / bit) % 2), with the bits of ClockEventReasons()
//   (clock_event_reasons.h).
// - Where a DCGM name serves both a whole-GPU and a MIG-instance metric
//   (framebuffer memory), each series carries a condition on the DCGM MIG
//   label (absent for the whole GPU, present for an instance).
// - `complete` is true when the DCGM series cover every series the
//   collector exports for the native metric (an alias without `match`, all
//   clock event reasons, all ECC type/scope pairs, both retirement causes,
//   both remapping types); false when only some label values have a DCGM
//   name (clock event time: sw_power_cap and sync_boost only; fan 0 only).
// - Metrics absent from the table (no alias: NVLink, XID counts, gpu_lost,
//   the agent's own metrics, ...) have no DCGM equivalent.
// - DcgmLabelNames() renames the GPU and MIG-instance labels (hostname ->
//   Hostname, uuid -> UUID, model -> modelName, gpu_instance_id -> GPU_I_ID,
//   mig_profile -> GPU_I_PROFILE); labels not listed keep their name
//   (DcgmLabelName). NativeOnlyLabels() are native labels the DCGM scheme
//   has no counterpart for (IsNativeOnlyLabel). family_builder names the
//   DCGM scheme's labels through these.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "gpu/catalog.h"
#include "gpu/clock_event_reasons.h"

namespace gpumon::gpu {

struct DcgmLabelCondition {
  std::string_view label;  // a DCGM label name
  bool present = false;    // true: the label must be set; false: it must be absent
};

struct DcgmSeries {
  std::string_view name;
  std::vector<std::pair<std::string_view, std::string_view>> fixed;  // native label, value
  double scale = 1;
  uint64_t bit = 0;  // non-zero: native value = floor(DCGM value / bit) % 2
  std::vector<DcgmLabelCondition> conditions;
};

struct DcgmMetricMapping {
  const MetricDef* def = nullptr;
  std::vector<DcgmSeries> series;
  bool complete = true;
};

const std::vector<DcgmMetricMapping>& DcgmMappingTable();
// nullptr when the native metric has no DCGM equivalent.
const DcgmMetricMapping* FindDcgmMapping(std::string_view native_name);

struct LabelNamePair {
  std::string_view native;
  std::string_view dcgm;
};
std::span<const LabelNamePair> DcgmLabelNames();
std::span<const std::string_view> NativeOnlyLabels();
// A native label's DCGM name: its DcgmLabelNames() entry, else the same name.
std::string_view DcgmLabelName(std::string_view native);
bool IsNativeOnlyLabel(std::string_view native);

}  // namespace gpumon::gpu
