// BacktestNode: one simulated node of `gpumon rules backtest`: its collector,
// and the samples it appends to the TSDB head at each step, as an agent's
// /metrics scraped by a server would give them.
//
// Contract:
// - Step(t, step, app) collects every enabled metric group (the simulated
//   clock must already be at t), turns the snapshot into families with
//   gpu::BuildFamilies in the given name scheme, keeps the families `keep`
//   accepts (never the agent's process_* families or its collection
//   durations: they come from the real process and clock), adds `up` = 1
//   when asked, and appends every sample at t with the labels a scrape adds:
//   job and instance (exposed job/instance labels become exported_job /
//   exported_instance, as without honor_labels). A series repeated within
//   one step keeps its first value. Series appended at the previous step and
//   missing now get a staleness marker at t, as a scrape loop writes.
//   Returns the number of samples the head rejected.
// - Fast path, same result: when the snapshot has the same shape as at the
//   previous step (same metrics, devices, MIG instances and extra label
//   values, in the same order), the families are not rebuilt: each sample
//   takes its value from the snapshot value it was built from, times the
//   factor the builder applied. That mapping is derived by building the
//   families of the shape from synthetic values and is used only when it
//   reproduces, bit for bit, the families built from the real values at the
//   step the shape first appeared; otherwise (or with fast_path false)
//   every step is built in full.
// - One thread at a time; the collector's NVML library must stay loaded
//   while the node exists.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/labels.h"
#include "exposition/metric_family.h"
#include "gpu/collector.h"
#include "gpu/family_builder.h"
#include "tsdb/head/head_appender.h"

namespace gpumon::cli {

struct BacktestNodeOptions {
  std::string job;
  std::string instance;
  gpu::NameScheme scheme = gpu::NameScheme::kNative;
  // Which metric groups to collect (kHealth is always collected).
  std::array<bool, gpu::kGroupCount> groups{};
  // Which families to store (by sample name); empty: all.
  std::function<bool(const std::string&)> keep;
  bool add_up = false;
  // false: build every step in full (for checking the fast path).
  bool fast_path = true;
};

class BacktestNode {
 public:
  BacktestNode(std::unique_ptr<gpu::GpuCollector> collector, BacktestNodeOptions options);
  ~BacktestNode();
  BacktestNode(const BacktestNode&) = delete;
  BacktestNode& operator=(const BacktestNode&) = delete;

  uint64_t Step(int64_t t, uint32_t step, tsdb::head::HeadAppender* app);

  gpu::GpuCollector& collector() { return *collector_; }
  // Steps that took the fast path / were built in full.
  uint64_t fast_steps() const { return fast_steps_; }
  uint64_t full_steps() const { return full_steps_; }

 private:
  struct Entry;
  struct ShapeItem;
  struct PlanItem;

  // The snapshot's values in builder order, restricted to collected groups.
  void Flatten(const gpu::Snapshot& snapshot);
  bool SameShape() const;
  void Build(const gpu::Snapshot& snapshot, std::vector<exposition::MetricFamily>* out);
  uint64_t AppendFamilies(const std::vector<exposition::MetricFamily>& families, int64_t t,
                          uint32_t step, tsdb::head::HeadAppender* app);
  uint64_t AppendPlanned(int64_t t, uint32_t step, tsdb::head::HeadAppender* app);
  void MakePlan(const gpu::Snapshot& snapshot, const std::vector<exposition::MetricFamily>& built);
  uint32_t Lookup(const std::string& name, const std::vector<exposition::Label>& raw);

  std::unique_ptr<gpu::GpuCollector> collector_;
  BacktestNodeOptions opts_;

  std::vector<Entry> entries_;
  std::unordered_map<std::string, uint32_t> index_;
  std::vector<uint32_t> previous_;  // entries appended at the previous step, in order
  std::vector<uint32_t> current_;
  std::string key_;

  std::vector<const gpu::SeriesValue*> values_;  // this step's, flattened
  std::vector<ShapeItem> shape_;                 // of the values the plan was made for
  std::vector<PlanItem> plan_;
  bool plan_ok_ = false;
  std::vector<exposition::MetricFamily> scratch_;

  uint64_t fast_steps_ = 0;
  uint64_t full_steps_ = 0;
};

}  // namespace gpumon::cli
