#include "gpu/family_builder.h"

#include <string>
#include <unordered_map>
#include <utility>

#include "gpu/dcgm_names.h"

namespace gpumon::gpu {
namespace {

using exposition::Label;
using exposition::MetricFamily;
using exposition::Sample;

// Adds a GPU or MIG-instance label, given by its native name, in the chosen
// scheme: the DCGM scheme renames it (dcgm_names.h) and drops the labels it
// has no counterpart for.
void AddLabel(Label native, bool dcgm, std::vector<Label>* out) {
  if (!dcgm) {
    out->push_back(std::move(native));
  } else if (!IsNativeOnlyLabel(native.name)) {
    out->push_back({std::string(DcgmLabelName(native.name)), std::move(native.value)});
  }
}

// Per-device label sets, computed once per render.
struct DeviceLabels {
  std::vector<Label> native;
  std::vector<Label> dcgm;
};

std::vector<DeviceLabels> MakeDeviceLabels(const GpuCollector& c) {
  std::vector<DeviceLabels> out;
  const auto& opt = c.options();
  for (const auto& d : c.devices()) {
    DeviceLabels l;
    std::string idx = std::to_string(d.index);
    std::string dev = "nvidia" + idx;
    l.native = {{"gpu", idx},    {"uuid", d.uuid},   {"pci_bus_id", d.pci_bus_id},
                {"device", dev}, {"model", d.model}, {"hostname", opt.hostname}};
    for (const Label& native : l.native) AddLabel(native, /*dcgm=*/true, &l.dcgm);
    l.dcgm.push_back({"DCGM_FI_DRIVER_VERSION", c.versions().driver});
    if (opt.simulated) {
      l.native.push_back({"simulated", "true"});
      l.dcgm.push_back({"simulated", "true"});
    }
    out.push_back(std::move(l));
  }
  return out;
}

// Whether a DCGM alias applies to a value, by its extra label values.
bool AliasMatches(const DcgmAlias& a, const MetricDef& def, const SeriesValue& v) {
  if (a.match.empty()) return true;
  std::string joined;
  for (int i = 0; i < def.label_count(); ++i) {
    if (i) joined += ',';
    joined += v.labels[i];
  }
  return joined == a.match;
}

class Builder {
 public:
  Builder(const GpuCollector& c, std::vector<MetricFamily>* out)
      : c_(c), labels_(MakeDeviceLabels(c)), out_(out) {}

  void Native(const MetricDef& def, const std::vector<const SeriesValue*>& values) {
    if (def.name.empty()) return;
    MetricFamily f{
        std::string(def.name), def.type, std::string(def.help), std::string(def.unit), {}};
    for (const SeriesValue* v : values) {
      Sample s;
      s.value = v->value;
      AddScopeLabels(def, *v, /*dcgm=*/false, &s.labels);
      for (int i = 0; i < def.label_count(); ++i) {
        s.labels.push_back({std::string(def.labels[i]), v->labels[i]});
      }
      f.samples.push_back(std::move(s));
    }
    Append(std::move(f));
  }

  void Dcgm(const MetricDef& def, const std::vector<const SeriesValue*>& values) {
    for (const auto& alias : def.dcgm) {
      if (alias.name.empty()) continue;
      MetricFamily f{std::string(alias.name), def.type, std::string(def.help), "", {}};
      for (const SeriesValue* v : values) {
        if (!AliasMatches(alias, def, *v)) continue;
        Sample s;
        s.value = v->value * alias.scale;
        AddScopeLabels(def, *v, /*dcgm=*/true, &s.labels);
        if (alias.match.empty()) {
          for (int i = 0; i < def.label_count(); ++i) {
            s.labels.push_back({std::string(def.labels[i]), v->labels[i]});
          }
        }
        f.samples.push_back(std::move(s));
      }
      Append(std::move(f));
    }
  }

 private:
  void AddScopeLabels(const MetricDef& def, const SeriesValue& v, bool dcgm,
                      std::vector<Label>* out) {
    if (def.scope == Scope::kAgent) {
      if (c_.options().simulated) out->push_back({"simulated", "true"});
      return;
    }
    const DeviceLabels& dl = labels_[v.device];
    *out = dcgm ? dl.dcgm : dl.native;
    if (def.scope == Scope::kMigInstance && v.mig >= 0) {
      const MigInstance& mi = c_.devices()[v.device].mig[v.mig];
      AddLabel({"gpu_instance_id", std::to_string(mi.gpu_instance_id)}, dcgm, out);
      AddLabel({"compute_instance_id", std::to_string(mi.compute_instance_id)}, dcgm, out);
      AddLabel({"mig_profile", mi.profile}, dcgm, out);
      AddLabel({"mig_uuid", mi.uuid}, dcgm, out);
    }
  }

  // Adds a family, merging into an earlier one of the same name.
  void Append(MetricFamily f) {
    if (f.samples.empty()) return;
    auto it = index_.find(f.name);
    if (it != index_.end()) {
      auto& existing = (*out_)[it->second].samples;
      for (auto& s : f.samples) existing.push_back(std::move(s));
      return;
    }
    index_.emplace(f.name, out_->size());
    out_->push_back(std::move(f));
  }

  const GpuCollector& c_;
  std::vector<DeviceLabels> labels_;
  std::vector<MetricFamily>* out_;
  std::unordered_map<std::string, size_t> index_;
};

}  // namespace

std::optional<NameScheme> NameSchemeFromString(std::string_view s) {
  if (s == "native") return NameScheme::kNative;
  if (s == "dcgm") return NameScheme::kDcgm;
  if (s == "both") return NameScheme::kBoth;
  return std::nullopt;
}

void BuildFamilies(const GpuCollector& collector, const Snapshot& snapshot, NameScheme scheme,
                   std::vector<MetricFamily>* out) {
  std::vector<std::vector<const SeriesValue*>> by_metric(kMetricCount);
  for (const auto& group : snapshot.groups) {
    if (!group) continue;
    for (const auto& v : group->values) by_metric[static_cast<size_t>(v.metric)].push_back(&v);
  }
  Builder b(collector, out);
  for (const auto& def : Catalog()) {
    const auto& values = by_metric[static_cast<size_t>(def.id)];
    if (values.empty()) continue;
    bool native = scheme != NameScheme::kDcgm || def.scope == Scope::kAgent;
    bool dcgm = scheme != NameScheme::kNative && def.scope != Scope::kAgent;
    if (native) b.Native(def, values);
    if (dcgm) b.Dcgm(def, values);
  }
}

}  // namespace gpumon::gpu
