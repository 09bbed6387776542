#include "cli/backtest_node.h"

#include <cmath>
#include <cstring>

#include "tsdb/sample.h"

namespace gpumon::cli {
namespace {

constexpr uint32_t kNever = UINT32_MAX;
constexpr uint32_t kUpValue = UINT32_MAX;  // PlanItem::src of the `up` sample

bool SameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

struct BacktestNode::Entry {
  std::string name;
  std::vector<exposition::Label> raw;
  Labels labels;
  uint64_t ref = 0;
  uint32_t last_step = kNever;
};

struct BacktestNode::ShapeItem {
  gpu::Metric metric;
  uint16_t device;
  int16_t mig;
  std::array<std::string, 4> labels;
};

struct BacktestNode::PlanItem {
  uint32_t entry;
  uint32_t src;  // index into values_, or kUpValue
  double scale;
};

BacktestNode::BacktestNode(std::unique_ptr<gpu::GpuCollector> collector,
                           BacktestNodeOptions options)
    : collector_(std::move(collector)), opts_(std::move(options)) {
  opts_.groups[static_cast<size_t>(gpu::Group::kHealth)] = true;
}

BacktestNode::~BacktestNode() = default;

void BacktestNode::Flatten(const gpu::Snapshot& snapshot) {
  values_.clear();
  for (const auto& g : snapshot.groups) {
    if (!g) continue;
    for (const auto& v : g->values) values_.push_back(&v);
  }
}

bool BacktestNode::SameShape() const {
  if (values_.size() != shape_.size()) return false;
  for (size_t i = 0; i < values_.size(); ++i) {
    const gpu::SeriesValue& v = *values_[i];
    const ShapeItem& s = shape_[i];
    if (v.metric != s.metric || v.device != s.device || v.mig != s.mig || v.labels != s.labels) {
      return false;
    }
  }
  return true;
}

void BacktestNode::Build(const gpu::Snapshot& snapshot,
                         std::vector<exposition::MetricFamily>* out) {
  scratch_.clear();
  gpu::BuildFamilies(*collector_, snapshot, opts_.scheme, &scratch_);
  out->clear();
  const std::string_view duration = gpu::Def(gpu::Metric::kAgentCollectionDuration).name;
  for (auto& f : scratch_) {
    if (f.name.starts_with("process_") || f.name == duration) continue;
    if (opts_.keep && !opts_.keep(f.name)) continue;
    out->push_back(std::move(f));
  }
  if (opts_.add_up) {
    exposition::MetricFamily up;
    up.name = "up";
    up.samples.push_back({{}, 1, std::nullopt});
    out->push_back(std::move(up));
  }
}

uint64_t BacktestNode::Step(int64_t t, uint32_t step, tsdb::head::HeadAppender* app) {
  for (int g = 0; g < gpu::kGroupCount; ++g) {
    if (opts_.groups[static_cast<size_t>(g)]) collector_->Collect(static_cast<gpu::Group>(g));
  }
  gpu::Snapshot snapshot = collector_->snapshot();
  if (!opts_.groups[static_cast<size_t>(gpu::Group::kAgent)]) {
    snapshot.groups[static_cast<size_t>(gpu::Group::kAgent)] = nullptr;
  }
  Flatten(snapshot);
  if (opts_.fast_path && SameShape()) {
    if (plan_ok_) {
      ++fast_steps_;
      return AppendPlanned(t, step, app);
    }
    std::vector<exposition::MetricFamily> families;
    Build(snapshot, &families);
    ++full_steps_;
    return AppendFamilies(families, t, step, app);
  }
  std::vector<exposition::MetricFamily> families;
  Build(snapshot, &families);
  ++full_steps_;
  const uint64_t rejected = AppendFamilies(families, t, step, app);
  if (opts_.fast_path) MakePlan(snapshot, families);
  return rejected;
}

uint32_t BacktestNode::Lookup(const std::string& name, const std::vector<exposition::Label>& raw) {
  key_ = name;
  for (const auto& l : raw) {
    key_ += '\0';
    key_ += l.name;
    key_ += '\0';
    key_ += l.value;
  }
  auto it = index_.find(key_);
  if (it != index_.end()) return it->second;
  std::vector<Label> ls;
  ls.reserve(raw.size() + 3);
  ls.push_back({std::string(kMetricName), name});
  for (const auto& l : raw) {
    if (l.name == "job" || l.name == "instance") {
      ls.push_back({"exported_" + l.name, l.value});
    } else {
      ls.push_back(l);
    }
  }
  ls.push_back({"job", opts_.job});
  ls.push_back({"instance", opts_.instance});
  Entry e;
  e.name = name;
  e.raw = raw;
  e.labels = Labels::FromUnsorted(std::move(ls));
  const auto idx = static_cast<uint32_t>(entries_.size());
  entries_.push_back(std::move(e));
  index_.emplace(key_, idx);
  return idx;
}

uint64_t BacktestNode::AppendFamilies(const std::vector<exposition::MetricFamily>& families,
                                      int64_t t, uint32_t step, tsdb::head::HeadAppender* app) {
  uint64_t rejected = 0;
  size_t pos = 0;
  current_.clear();
  for (const auto& f : families) {
    for (const auto& s : f.samples) {
      uint32_t idx = kNever;
      // Usually the same series as at this position last time: compare
      // instead of building the key.
      if (pos < previous_.size()) {
        const Entry& e = entries_[previous_[pos]];
        if (e.name == f.name && e.raw == s.labels) idx = previous_[pos];
      }
      ++pos;
      if (idx == kNever) idx = Lookup(f.name, s.labels);
      Entry& e = entries_[idx];
      if (e.last_step == step) continue;
      e.last_step = step;
      current_.push_back(idx);
      auto ref = app->Append(e.ref, e.labels, t, s.value);
      if (ref.ok()) {
        e.ref = *ref;
      } else {
        ++rejected;
      }
    }
  }
  for (uint32_t idx : previous_) {
    Entry& e = entries_[idx];
    if (e.last_step == step) continue;
    e.last_step = kNever;
    if (!app->Append(e.ref, e.labels, t, tsdb::StaleNaN()).ok()) ++rejected;
  }
  previous_.swap(current_);
  return rejected;
}

uint64_t BacktestNode::AppendPlanned(int64_t t, uint32_t step, tsdb::head::HeadAppender* app) {
  uint64_t rejected = 0;
  for (const PlanItem& p : plan_) {
    Entry& e = entries_[p.entry];
    e.last_step = step;
    const double v = p.src == kUpValue ? 1.0 : values_[p.src]->value * p.scale;
    auto ref = app->Append(e.ref, e.labels, t, v);
    if (ref.ok()) {
      e.ref = *ref;
    } else {
      ++rejected;
    }
  }
  return rejected;
}

// Builds the families of the current shape twice from synthetic values
// (all 1: the factor of each sample; value i + 2 for the i-th snapshot
// value: which value each sample comes from) and keeps the mapping only if
// it explains the families built from the real values exactly.
void BacktestNode::MakePlan(const gpu::Snapshot& snapshot,
                            const std::vector<exposition::MetricFamily>& built) {
  plan_ok_ = false;
  plan_.clear();
  shape_.clear();
  for (const gpu::SeriesValue* v : values_) {
    shape_.push_back({v->metric, v->device, v->mig, v->labels});
  }
  auto synthetic = [&](bool index_values) {
    gpu::Snapshot s = snapshot;
    uint32_t i = 0;
    for (auto& g : s.groups) {
      if (!g) continue;
      auto copy = std::make_shared<gpu::GroupResult>(*g);
      for (auto& v : copy->values) v.value = index_values ? static_cast<double>(i++) + 2 : 1.0;
      g = std::move(copy);
    }
    std::vector<exposition::MetricFamily> out;
    Build(s, &out);
    return out;
  };
  const std::vector<exposition::MetricFamily> ones = synthetic(false);
  const std::vector<exposition::MetricFamily> index = synthetic(true);
  if (ones.size() != built.size() || index.size() != built.size()) return;
  // The series appended at this step, in order, one per sample (a repeated
  // series within a step would break the one-to-one order: no plan then).
  size_t total = 0;
  for (const auto& f : built) total += f.samples.size();
  if (previous_.size() != total) return;
  size_t k = 0;
  for (size_t fi = 0; fi < built.size(); ++fi) {
    const auto& f = built[fi];
    if (ones[fi].name != f.name || index[fi].name != f.name ||
        ones[fi].samples.size() != f.samples.size() ||
        index[fi].samples.size() != f.samples.size()) {
      return;
    }
    for (size_t si = 0; si < f.samples.size(); ++si, ++k) {
      const auto& real = f.samples[si];
      const auto& one = ones[fi].samples[si];
      const auto& idx = index[fi].samples[si];
      if (one.labels != real.labels || idx.labels != real.labels) return;
      PlanItem p{previous_[k], kUpValue, 1.0};
      if (!(opts_.add_up && fi + 1 == built.size() && f.name == "up")) {
        const double scale = one.value;
        if (!(scale > 0) || !std::isfinite(scale)) return;
        const double pos = std::round(idx.value / scale) - 2;
        if (!(pos >= 0) || pos >= static_cast<double>(values_.size())) return;
        p.src = static_cast<uint32_t>(pos);
        p.scale = scale;
        if (!SameBits(idx.value, (pos + 2) * scale)) return;
        if (!SameBits(real.value, values_[p.src]->value * scale)) return;
      }
      plan_.push_back(p);
    }
  }
  plan_ok_ = true;
}

}  // namespace gpumon::cli
