#include "ingest/push_store.h"

#include <algorithm>
#include <set>
#include <utility>

#include "common/names.h"

namespace gpumon::ingest {
namespace {

using exposition::MetricFamily;
using exposition::MetricType;
using exposition::Sample;

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.substr(0, prefix.size()) == prefix;
}

constexpr std::string_view kPushTime = "push_time_seconds";
constexpr std::string_view kPushFailureTime = "push_failure_time_seconds";
constexpr std::string_view kJobGpuInfo = "gpumon_job_gpu_info";

double UnixSeconds(PushStore::Clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

std::string TypeName(MetricType t) {
  return t == MetricType::kUnknown ? "untyped" : exposition::MetricTypeName(t);
}

std::string SeriesText(std::string_view name, const std::vector<Label>& labels) {
  std::string s(name);
  s += '{';
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i) s += ',';
    s += labels[i].name + "=\"" + labels[i].value + "\"";
  }
  s += '}';
  return s;
}

}  // namespace

std::string PushFamilyName(std::string_view name, MetricType type) {
  auto strip = [&](std::initializer_list<std::string_view> suffixes) {
    for (auto suffix : suffixes) {
      if (EndsWith(name, suffix) && name.size() > suffix.size()) {
        return std::string(name.substr(0, name.size() - suffix.size()));
      }
    }
    return std::string(name);
  };
  switch (type) {
    case MetricType::kHistogram:
      return strip({"_bucket", "_sum", "_count", "_created"});
    case MetricType::kGaugeHistogram:
      return strip({"_bucket", "_gsum", "_gcount", "_created"});
    case MetricType::kSummary:
      return strip({"_sum", "_count", "_created"});
    case MetricType::kCounter:
      // OpenMetrics' "x_created" belongs to the counter named by "x_total".
      if (EndsWith(name, "_created") && name.size() > 8) {
        return std::string(name.substr(0, name.size() - 8)) + "_total";
      }
      return std::string(name);
    default:
      return std::string(name);
  }
}

PushStore::PushStore(PushLimits limits) : limits_(limits) {}

void PushStore::ReserveNamePrefixes(std::vector<std::string> reserved,
                                    std::vector<std::string> allowed) {
  std::lock_guard lock(mu_);
  reserved_prefixes_ = std::move(reserved);
  allowed_prefixes_ = std::move(allowed);
}

void PushStore::CountRejected() {
  std::lock_guard lock(mu_);
  ++counters_.pushes_rejected;
  ++generation_;
}

Status PushStore::Push(const Labels& grouping, std::vector<MetricFamily> families, PushMode mode,
                       JobPlacement placement, Clock::time_point now) {
  // Everything that does not depend on the stored state is checked and
  // normalized outside the lock.
  auto reject = [&](Status s) {
    std::lock_guard lock(mu_);
    ++counters_.pushes_rejected;
    ++generation_;
    if (auto it = groups_.find(grouping); it != groups_.end()) it->second.last_failure = now;
    return s;
  };
  if (grouping.Get("job").empty()) {
    return reject(Status::Error("the grouping labels need a non-empty job"));
  }
  std::vector<std::string> reserved, allowed;
  {
    std::lock_guard lock(mu_);
    reserved = reserved_prefixes_;
    allowed = allowed_prefixes_;
  }
  std::map<std::string, StoredFamily> pushed;
  std::map<std::string, std::string> pushed_samples;  // sample name -> family
  size_t pushed_series = 0;
  for (auto& mf : families) {
    if (mf.samples.empty()) continue;
    if (!IsValidMetricName(mf.name)) {
      return reject(Status::Error("invalid metric name \"" + mf.name + "\""));
    }
    const std::string family_name = PushFamilyName(mf.name, mf.type);
    if (mf.name == kPushTime || mf.name == kPushFailureTime || mf.name == kJobGpuInfo ||
        family_name == kJobGpuInfo) {
      return reject(Status::Error("metric " + mf.name +
                                  " is reserved: the agent adds it to every pushed group"));
    }
    for (const auto& prefix : reserved) {
      if (!StartsWith(mf.name, prefix)) continue;
      bool exempt = std::any_of(allowed.begin(), allowed.end(),
                                [&](const std::string& a) { return StartsWith(mf.name, a); });
      if (!exempt) {
        return reject(Status::Error("metric " + mf.name + " collides with the agent's own metrics" +
                                    " (names starting with \"" + prefix + "\" are reserved)"));
      }
    }
    if (auto [it, inserted] = pushed_samples.emplace(mf.name, family_name);
        !inserted && it->second != family_name) {
      return reject(Status::Error("sample name " + mf.name + " is in two families: " + it->second +
                                  " and " + family_name));
    }
    StoredFamily& sf = pushed[family_name];
    if (sf.components.empty()) {
      sf.name = family_name;
      sf.type = mf.type;
      sf.help = mf.help;
      sf.unit = mf.unit;
    } else if (sf.type != mf.type) {
      return reject(Status::Error("metric family " + family_name + " is pushed with types " +
                                  TypeName(sf.type) + " and " + TypeName(mf.type)));
    }
    MetricFamily* component = nullptr;
    for (auto& c : sf.components) {
      if (c.name == mf.name) component = &c;
    }
    if (!component) {
      sf.components.push_back(MetricFamily{mf.name, mf.type, {}, {}, {}});
      component = &sf.components.back();
    }
    std::set<std::vector<Label>> seen;
    for (auto& c : component->samples) {
      auto sorted = c.labels;
      std::sort(sorted.begin(), sorted.end());
      seen.insert(std::move(sorted));
    }
    for (auto& sample : mf.samples) {
      sample.timestamp_ms.reset();
      std::vector<Label> kept;
      kept.reserve(sample.labels.size());
      for (auto& l : sample.labels) {
        if (!IsValidLabelName(l.name)) {
          return reject(Status::Error("sample " + SeriesText(mf.name, sample.labels) +
                                      ": invalid label name \"" + l.name + "\""));
        }
        if (grouping.Has(l.name)) {
          if (grouping.Get(l.name) != l.value) {
            return reject(Status::Error("sample " + SeriesText(mf.name, sample.labels) +
                                        ": label " + l.name + "=\"" + l.value +
                                        "\" conflicts with the grouping label " + l.name + "=\"" +
                                        std::string(grouping.Get(l.name)) + "\" of the push path"));
          }
          continue;  // equal to the grouping label: redundant
        }
        kept.push_back(l);
      }
      if (kept.size() + grouping.size() > limits_.max_labels_per_series) {
        return reject(
            Status::Error("sample " + SeriesText(mf.name, kept) + " has " +
                          std::to_string(kept.size() + grouping.size()) +
                          " labels with the grouping labels, more than max_labels_per_series " +
                          std::to_string(limits_.max_labels_per_series)));
      }
      auto sorted = kept;
      std::sort(sorted.begin(), sorted.end());
      if (!seen.insert(std::move(sorted)).second) {
        return reject(
            Status::Error("sample " + SeriesText(mf.name, kept) + " is pushed more than once"));
      }
      sample.labels = std::move(kept);
      component->samples.push_back(std::move(sample));
      ++sf.series;
      ++pushed_series;
    }
  }

  std::lock_guard lock(mu_);
  auto fail = [&](Status s, Group* group) {
    ++counters_.pushes_rejected;
    ++generation_;
    if (group) group->last_failure = now;
    return s;
  };
  auto it = groups_.find(grouping);
  Group* existing = it == groups_.end() ? nullptr : &it->second;
  if (!existing && groups_.size() >= limits_.max_groups) {
    return fail(Status::Error("the agent holds " + std::to_string(groups_.size()) +
                              " pushed groups, the most max_groups allows; " + grouping.ToString() +
                              " is not added"),
                nullptr);
  }
  if (Status s = Validate(grouping, pushed, mode, existing); !s.ok()) return fail(s, existing);
  size_t group_series = pushed_series;
  if (existing && mode == PushMode::kMerge) {
    group_series += existing->series;
    for (const auto& [name, f] : existing->families) {
      if (pushed.count(name)) group_series -= f.series;
    }
  }
  if (group_series > limits_.max_series_per_group) {
    return fail(
        Status::Error("group " + grouping.ToString() + " would hold " +
                      std::to_string(group_series) + " series, more than max_series_per_group " +
                      std::to_string(limits_.max_series_per_group)),
        existing);
  }
  size_t total = series_ - (existing ? existing->series : 0) + group_series;
  if (total > limits_.max_series_total) {
    return fail(Status::Error("the agent would hold " + std::to_string(total) +
                              " pushed series, more than max_series " +
                              std::to_string(limits_.max_series_total) + "; push to " +
                              grouping.ToString() + " rejected"),
                existing);
  }

  if (!existing) {
    existing = &groups_[grouping];
    existing->grouping = grouping;
  }
  if (mode == PushMode::kReplace) {
    for (const auto& [name, f] : existing->families) RemoveRefs(f);
    existing->families.clear();
  }
  for (auto& [name, f] : pushed) {
    auto old = existing->families.find(name);
    if (old != existing->families.end()) {
      RemoveRefs(old->second);
      existing->families.erase(old);
    }
    AddRefs(f);
    existing->families.emplace(name, std::move(f));
  }
  series_ = total;
  existing->series = group_series;
  existing->placement = std::move(placement);
  existing->last_push = now;
  ++counters_.pushes_accepted;
  ++generation_;
  return Status::Ok();
}

Status PushStore::Validate(const Labels& grouping,
                           const std::map<std::string, StoredFamily>& pushed, PushMode mode,
                           const Group* existing) const {
  // Whether this group's stored family `name` is still there after the push.
  auto removed_by_push = [&](const std::string& name) {
    return existing && existing->families.count(name) &&
           (mode == PushMode::kReplace || pushed.count(name));
  };
  auto kept_in_group = [&](const std::string& name) {
    return existing && existing->families.count(name) && !removed_by_push(name);
  };
  for (const auto& [name, f] : pushed) {
    if (auto r = family_refs_.find(name); r != family_refs_.end() && r->second.type != f.type) {
      size_t others = r->second.groups - (existing && existing->families.count(name) ? 1 : 0);
      if (others > 0) {
        return Status::Error("metric family " + name + " is pushed as " + TypeName(f.type) +
                             " to " + grouping.ToString() + " but is a " +
                             TypeName(r->second.type) + " in " + std::to_string(others) +
                             " other pushed group(s)");
      }
    }
    for (const auto& c : f.components) {
      auto r = sample_refs_.find(c.name);
      if (r == sample_refs_.end() || r->second.family == name) continue;
      size_t mine = removed_by_push(r->second.family) ? 1 : 0;
      if (r->second.groups - mine > 0 || kept_in_group(r->second.family)) {
        return Status::Error("sample name " + c.name + " of metric family " + name + " (" +
                             TypeName(f.type) + ") is already the " + TypeName(r->second.type) +
                             " metric family " + r->second.family + " in a pushed group");
      }
    }
  }
  return Status::Ok();
}

void PushStore::AddRefs(const StoredFamily& f) {
  auto& fr = family_refs_[f.name];
  fr.type = f.type;
  fr.family = f.name;
  ++fr.groups;
  for (const auto& c : f.components) {
    auto& sr = sample_refs_[c.name];
    sr.type = f.type;
    sr.family = f.name;
    ++sr.groups;
  }
}

void PushStore::RemoveRefs(const StoredFamily& f) {
  if (auto it = family_refs_.find(f.name); it != family_refs_.end() && --it->second.groups == 0) {
    family_refs_.erase(it);
  }
  for (const auto& c : f.components) {
    if (auto it = sample_refs_.find(c.name); it != sample_refs_.end() && --it->second.groups == 0) {
      sample_refs_.erase(it);
    }
  }
}

void PushStore::RemoveGroupLocked(std::map<Labels, Group>::iterator it) {
  for (const auto& [name, f] : it->second.families) RemoveRefs(f);
  series_ -= it->second.series;
  groups_.erase(it);
  ++generation_;
}

bool PushStore::Delete(const Labels& grouping) {
  std::lock_guard lock(mu_);
  auto it = groups_.find(grouping);
  if (it == groups_.end()) return false;
  RemoveGroupLocked(it);
  return true;
}

size_t PushStore::ExpireStale(Clock::time_point now) {
  if (limits_.expiry.count() == 0) return 0;
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (auto it = groups_.begin(); it != groups_.end();) {
    auto next = std::next(it);
    if (now - it->second.last_push > limits_.expiry) {
      RemoveGroupLocked(it);
      ++n;
    }
    it = next;
  }
  counters_.groups_expired += n;
  return n;
}

std::vector<PushStore::StoredFamily> PushStore::Merged(const GpuLabelNames& gpu) const {
  std::map<std::string, StoredFamily> merged;
  StoredFamily push_time{std::string(kPushTime),
                         MetricType::kGauge,
                         "Last Unix time a push to this group succeeded.",
                         "",
                         {},
                         0};
  StoredFamily push_failure{std::string(kPushFailureTime),
                            MetricType::kGauge,
                            "Last Unix time a push to this group failed (0: never).",
                            "",
                            {},
                            0};
  StoredFamily gpu_info{std::string(kJobGpuInfo),
                        MetricType::kGauge,
                        "The GPUs the process pushing this group runs on (value 1).",
                        "",
                        {},
                        0};
  push_time.components.push_back(MetricFamily{push_time.name, MetricType::kGauge, {}, {}, {}});
  push_failure.components.push_back(
      MetricFamily{push_failure.name, MetricType::kGauge, {}, {}, {}});
  gpu_info.components.push_back(MetricFamily{gpu_info.name, MetricType::kGauge, {}, {}, {}});

  std::lock_guard lock(mu_);
  for (const auto& [key, g] : groups_) {
    std::vector<Label> extra = g.grouping.items();
    const bool one_gpu = g.placement.gpus.size() == 1;
    std::vector<Label> gpu_labels;
    if (one_gpu) {
      gpu_labels = {{gpu.hostname_label, gpu.hostname},
                    {gpu.gpu_label, std::to_string(g.placement.gpus[0].index)},
                    {gpu.uuid_label, g.placement.gpus[0].uuid}};
      std::erase_if(gpu_labels, [](const Label& l) { return l.value.empty(); });
    }
    for (const auto& [name, f] : g.families) {
      StoredFamily& m = merged[name];
      if (m.components.empty()) {
        m.name = name;
        m.type = f.type;
        m.unit = f.unit;
      }
      if (m.help.empty()) m.help = f.help;
      // Components stay per group, so a group's samples of a histogram are
      // contiguous in the output.
      for (const auto& c : f.components) {
        m.components.push_back(MetricFamily{c.name, c.type, {}, {}, {}});
        MetricFamily* out = &m.components.back();
        for (const auto& s : c.samples) {
          Sample copy;
          copy.value = s.value;
          copy.labels.reserve(s.labels.size() + extra.size() + gpu_labels.size());
          copy.labels = s.labels;
          copy.labels.insert(copy.labels.end(), extra.begin(), extra.end());
          for (const auto& l : gpu_labels) {
            bool has = std::any_of(s.labels.begin(), s.labels.end(),
                                   [&](const Label& x) { return x.name == l.name; });
            if (!has && !g.grouping.Has(l.name)) copy.labels.push_back(l);
          }
          std::sort(copy.labels.begin(), copy.labels.end(),
                    [](const Label& a, const Label& b) { return a.name < b.name; });
          out->samples.push_back(std::move(copy));
          ++m.series;
        }
      }
    }
    push_time.components[0].samples.push_back(Sample{extra, UnixSeconds(g.last_push), {}});
    push_failure.components[0].samples.push_back(
        Sample{extra, g.last_failure ? UnixSeconds(*g.last_failure) : 0.0, {}});
    for (const auto& ref : g.placement.gpus) {
      std::vector<Label> labels = extra;
      for (Label l : std::vector<Label>{{gpu.hostname_label, gpu.hostname},
                                        {gpu.gpu_label, std::to_string(ref.index)},
                                        {gpu.uuid_label, ref.uuid}}) {
        if (!l.value.empty() && !g.grouping.Has(l.name)) labels.push_back(std::move(l));
      }
      std::sort(labels.begin(), labels.end(),
                [](const Label& a, const Label& b) { return a.name < b.name; });
      gpu_info.components[0].samples.push_back(Sample{std::move(labels), 1.0, {}});
    }
  }
  if (!groups_.empty()) {
    merged.emplace(push_time.name, std::move(push_time));
    merged.emplace(push_failure.name, std::move(push_failure));
  }
  if (!gpu_info.components[0].samples.empty()) merged.emplace(gpu_info.name, std::move(gpu_info));
  std::vector<StoredFamily> out;
  out.reserve(merged.size());
  for (auto& [name, f] : merged) out.push_back(std::move(f));
  return out;
}

void PushStore::AppendFamilies(const GpuLabelNames& gpu_labels,
                               std::vector<MetricFamily>* out) const {
  for (auto& f : Merged(gpu_labels)) {
    // One family per sample name: the groups' components merge.
    const size_t first = out->size();
    for (auto& c : f.components) {
      MetricFamily* into = nullptr;
      for (size_t i = first; i < out->size(); ++i) {
        if ((*out)[i].name == c.name) into = &(*out)[i];
      }
      if (!into) {
        out->push_back(MetricFamily{c.name, f.type, f.help, f.unit, {}});
        into = &out->back();
      }
      for (auto& sample : c.samples) into->samples.push_back(std::move(sample));
    }
  }
}

void PushStore::AppendText(const GpuLabelNames& gpu_labels, exposition::Format format,
                           std::string* out) const {
  AppendStoredFamiliesText(Merged(gpu_labels), format, out);
}

uint64_t PushStore::generation() const {
  std::lock_guard lock(mu_);
  return generation_;
}

PushStoreStats PushStore::stats() const {
  std::lock_guard lock(mu_);
  PushStoreStats s = counters_;
  s.groups = groups_.size();
  s.series = series_;
  return s;
}

}  // namespace gpumon::ingest
