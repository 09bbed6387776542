// PushStore: the metric groups jobs push to the agent (Pushgateway text
// pushes and OTLP exports), held in memory and re-exposed on the agent's
// /metrics beside the GPU series.
//
// Contract:
// - A group is identified by its grouping labels (always including a
//   non-empty `job`); Pushgateway's semantics apply: Replace (HTTP PUT)
//   replaces the whole group; Merge (HTTP POST) replaces only the families
//   the push names and keeps the group's other families; Delete removes the
//   group. OTLP exports use Merge on the group of their resource.
// - A push is validated as a whole before anything is applied: a rejected
//   push (limits, a sample label that conflicts with a grouping label, a
//   family of inconsistent type) leaves the store exactly as it was and
//   returns an error naming the family, line or label that broke it.
// - Limits (PushLimits) bound series per group, series in the store, labels
//   per series, groups; the body size is bounded by the receivers.
// - Groups expire `expiry` after their last push (never when expiry is 0),
//   in ExpireStale(), which the agent calls periodically; a finished job's
//   series leave the agent's /metrics.
// - Each group gets Pushgateway's `push_time_seconds` (Unix time of its last
//   successful push) with the grouping labels.
// - Placement: the GPUs the pushing process runs on (JobGpuResolver), stored
//   with the group at push time; when it names exactly one GPU every sample
//   of the group gains the GPU series' `hostname`, `gpu` and uuid labels
//   (names per the agent's NameScheme) unless the sample already has them,
//   and `gpumon_job_gpu_info` (value 1) lists each (group, GPU) pair.
// - Thread-safe: receivers push from handler threads while /metrics renders.
//   generation() changes whenever the rendered output would.
//
// Details of this implementation:
// - Families are keyed by their metric family name: the components of a
//   histogram, summary or gauge histogram ("x_bucket", "x_sum", "x_count",
//   "x_created", quantile samples "x", "x_gsum", "x_gcount"), which arrive as
//   one MetricFamily per sample name (exposition::ParseToFamilies' shape),
//   form one family "x"; every other family is its own name. Merge replaces
//   whole families by that name.
// - Consistency (as Pushgateway checks it): a family name has one type
//   across all groups, and no sample name belongs to two different families
//   (a gauge "x_sum" next to a histogram "x"); a push breaking either, also
//   within itself, is rejected. So are pushed names the store itself
//   produces (push_time_seconds, push_failure_time_seconds,
//   gpumon_job_gpu_info) and names under a reserved prefix
//   (ReserveNamePrefixes: the agent reserves its GPU and self-metric
//   names).
// - A sample label that has the name of a grouping label is accepted when
//   the values are equal (and dropped as redundant), rejected otherwise.
//   Sample timestamps are not stored (receivers reject them).
// - A series is one sample line; max_labels_per_series counts the sample's
//   labels plus the grouping labels.
// - push_failure_time_seconds: Unix time of the last rejected push to an
//   existing group (0 when none), Pushgateway-style.
// - Exposition: AppendText() writes every family once, merged across groups,
//   sorted by family name, each sample with its labels, the grouping labels
//   and placement labels, sorted by name. AppendFamilies() gives the same
//   samples as one MetricFamily per sample name (for tools and tests).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/labels.h"
#include "common/status.h"
#include "exposition/format.h"
#include "exposition/metric_family.h"
#include "ingest/job_gpus.h"

namespace gpumon::ingest {

struct PushLimits {
  size_t max_series_per_group = 10'000;
  size_t max_series_total = 200'000;
  size_t max_labels_per_series = 64;
  size_t max_groups = 10'000;
  // 0: groups never expire.
  std::chrono::seconds expiry{600};
};

enum class PushMode { kReplace, kMerge };

struct PushStoreStats {
  size_t groups = 0;
  size_t series = 0;
  uint64_t pushes_accepted = 0;
  uint64_t pushes_rejected = 0;
  uint64_t groups_expired = 0;
};

class PushStore {
 public:
  using Clock = std::chrono::system_clock;

  explicit PushStore(PushLimits limits = {});

  // Families' samples carry only their own labels; grouping labels are
  // added on exposition. `placement` comes from the resolver (may be empty).
  Status Push(const Labels& grouping, std::vector<exposition::MetricFamily> families, PushMode mode,
              JobPlacement placement, Clock::time_point now = Clock::now());
  // False when there was no such group.
  bool Delete(const Labels& grouping);
  // Removes groups whose last push is older than the expiry; returns how many.
  size_t ExpireStale(Clock::time_point now = Clock::now());

  // Appends every group's families (samples with grouping and placement
  // labels), push_time_seconds and gpumon_job_gpu_info, merged by family
  // name across groups, to `out`. `gpu_labels` names the GPU labels.
  void AppendFamilies(const GpuLabelNames& gpu_labels,
                      std::vector<exposition::MetricFamily>* out) const;

  // Renders what AppendFamilies gives, in `format`, one HELP/TYPE header
  // per family (no OpenMetrics "# EOF": the caller finishes the text).
  void AppendText(const GpuLabelNames& gpu_labels, exposition::Format format,
                  std::string* out) const;

  // Counts a push rejected before it reached the store (bad path or body),
  // so pushes_rejected covers every receiver error.
  void CountRejected();

  // Pushed family names starting with one of `reserved` (and none of
  // `allowed`) are rejected. Call before serving.
  void ReserveNamePrefixes(std::vector<std::string> reserved, std::vector<std::string> allowed);

  uint64_t generation() const;
  PushStoreStats stats() const;
  const PushLimits& limits() const { return limits_; }

  // A family as stored: its components (one per sample name, in order of
  // first appearance), each sample carrying only its own labels.
  struct StoredFamily {
    std::string name;  // family name (histogram "x" for "x_bucket", ...)
    exposition::MetricType type = exposition::MetricType::kUnknown;
    std::string help;
    std::string unit;
    std::vector<exposition::MetricFamily> components;
    size_t series = 0;
  };

 private:
  struct Group {
    Labels grouping;
    std::map<std::string, StoredFamily> families;  // by family name
    JobPlacement placement;
    Clock::time_point last_push;
    std::optional<Clock::time_point> last_failure;
    size_t series = 0;
  };
  // How many groups hold a family name / sample name, to check consistency
  // across groups without scanning them.
  struct NameRef {
    exposition::MetricType type = exposition::MetricType::kUnknown;
    std::string family;  // for sample names: the family they belong to
    size_t groups = 0;
  };

  Status Validate(const Labels& grouping, const std::map<std::string, StoredFamily>& pushed,
                  PushMode mode, const Group* existing) const;
  void AddRefs(const StoredFamily& family);
  void RemoveRefs(const StoredFamily& family);
  void RemoveGroupLocked(std::map<Labels, Group>::iterator it);
  // Every family merged across groups, samples with all their labels,
  // sorted by family name (what AppendFamilies and AppendText render).
  std::vector<StoredFamily> Merged(const GpuLabelNames& gpu_labels) const;

  PushLimits limits_;
  std::vector<std::string> reserved_prefixes_;
  std::vector<std::string> allowed_prefixes_;
  mutable std::mutex mu_;
  std::map<Labels, Group> groups_;
  std::map<std::string, NameRef> family_refs_;
  std::map<std::string, NameRef> sample_refs_;
  size_t series_ = 0;
  uint64_t generation_ = 0;
  PushStoreStats counters_;
};

// The family name a component family belongs to (see above): "x" for a
// histogram's "x_bucket", the name itself for a gauge.
std::string PushFamilyName(std::string_view sample_name, exposition::MetricType type);

// The store's self-metrics, for the agent's /metrics: gpumon_push_groups,
// gpumon_push_series (gauges), gpumon_pushes_total{result="accepted"|
// "rejected"} and gpumon_push_groups_expired_total (counters).
void AppendPushStoreMetrics(const PushStoreStats& stats,
                            std::vector<exposition::MetricFamily>* out);

// Writes stored families in text 0.0.4 or OpenMetrics: one HELP/TYPE (and
// OpenMetrics UNIT) header per family, then every component's samples.
void AppendStoredFamiliesText(const std::vector<PushStore::StoredFamily>& families,
                              exposition::Format format, std::string* out);

}  // namespace gpumon::ingest
