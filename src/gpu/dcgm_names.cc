#include "gpu/dcgm_names.h"

#include <string>

namespace gpumon::gpu {
namespace {

constexpr LabelNamePair kLabelNames[] = {
    {"uuid", "UUID"},
    {"model", "modelName"},
    {"hostname", "Hostname"},
    {"gpu_instance_id", "GPU_I_ID"},
    {"mig_profile", "GPU_I_PROFILE"},
};

constexpr std::string_view kNativeOnlyLabels[] = {"compute_instance_id", "mig_uuid"};

// Metrics whose aliases select by label value and together cover every
// label combination the collector exports.
constexpr Metric kFullyAliased[] = {Metric::kEccErrors, Metric::kRetiredPages,
                                    Metric::kRemappedRows};

// DcgmAlias::match split on commas, paired with the metric's labels.
std::vector<std::pair<std::string_view, std::string_view>> Fixed(const MetricDef& def,
                                                                 std::string_view match) {
  std::vector<std::pair<std::string_view, std::string_view>> out;
  if (match.empty()) return out;
  int i = 0;
  size_t start = 0;
  while (i < def.label_count()) {
    size_t comma = match.find(',', start);
    std::string_view value = match.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    out.push_back({def.labels[i], value});
    ++i;
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

std::vector<DcgmMetricMapping> Build() {
  std::vector<DcgmMetricMapping> table;
  const std::string_view mig_label = DcgmLabelName("gpu_instance_id");
  // A DCGM name shared by metrics of different scopes needs a MIG condition.
  auto shared = [](std::string_view name, Scope scope) {
    for (const auto& other : Catalog()) {
      if (other.scope == scope) continue;
      for (const auto& a : other.dcgm) {
        if (a.name == name) return true;
      }
    }
    return false;
  };
  for (const auto& def : Catalog()) {
    if (def.name.empty() || def.scope == Scope::kAgent) continue;
    DcgmMetricMapping m;
    m.def = &def;
    if (def.id == Metric::kClockEventActive) {
      std::string_view mask = Def(Metric::kClockEventReasonsMask).dcgm[0].name;
      for (const auto& r : ClockEventReasons()) {
        m.series.push_back({mask, {{def.labels[0], r.name}}, 1, r.bit, {}});
      }
      table.push_back(std::move(m));
      continue;
    }
    bool by_value = false;
    for (const auto& a : def.dcgm) {
      if (a.name.empty()) continue;
      DcgmSeries s{a.name, Fixed(def, a.match), a.scale, 0, {}};
      by_value = by_value || !a.match.empty();
      if (shared(a.name, def.scope)) {
        s.conditions.push_back({mig_label, def.scope == Scope::kMigInstance});
      }
      m.series.push_back(std::move(s));
    }
    if (m.series.empty()) continue;
    if (by_value) {
      m.complete = false;
      for (Metric id : kFullyAliased) m.complete = m.complete || id == def.id;
    }
    table.push_back(std::move(m));
  }
  return table;
}

}  // namespace

const std::vector<DcgmMetricMapping>& DcgmMappingTable() {
  static const std::vector<DcgmMetricMapping> table = Build();
  return table;
}

const DcgmMetricMapping* FindDcgmMapping(std::string_view native_name) {
  for (const auto& m : DcgmMappingTable()) {
    if (m.def->name == native_name) return &m;
  }
  return nullptr;
}

std::span<const LabelNamePair> DcgmLabelNames() { return kLabelNames; }
std::span<const std::string_view> NativeOnlyLabels() { return kNativeOnlyLabels; }

std::string_view DcgmLabelName(std::string_view native) {
  for (const auto& p : kLabelNames) {
    if (p.native == native) return p.dcgm;
  }
  return native;
}

bool IsNativeOnlyLabel(std::string_view native) {
  for (std::string_view only : kNativeOnlyLabels) {
    if (only == native) return true;
  }
  return false;
}

}  // namespace gpumon::gpu
