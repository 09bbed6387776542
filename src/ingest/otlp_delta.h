// OtlpDeltaAccumulator: turns OTLP DELTA-temporality sums and histograms into
// the cumulative series Prometheus expects, per push group.
//
// Contract:
// - State is kept per (group, family name, series labels): a running total
//   for sums, per-bucket counts plus count and sum for histograms. A
//   histogram delta whose bucket bounds differ from the stored ones starts
//   the series over from that delta (bounds changed: the old buckets no
//   longer add up).
// - Changes are made in a Txn and become visible only when the Txn commits
//   the group: a request whose push the store rejects leaves the totals as
//   they were, so a sender retrying it does not count it twice. A Txn takes
//   the accumulator's lock at its first use and holds it until it is
//   destroyed (requests that carry deltas are serialized); one Txn per
//   request, used from one thread.
// - Bounded: at most `max_series` series in all (a new series beyond it is
//   refused, the caller rejects its points); groups not committed for
//   `expiry` are dropped when a Txn first takes the lock (0: never), the
//   same expiry as the push store's groups.
// - Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "common/labels.h"

namespace gpumon::ingest {

struct OtlpDeltaLimits {
  size_t max_series = 100'000;
  std::chrono::seconds expiry{600};
};

class OtlpDeltaAccumulator {
 public:
  using Clock = std::chrono::steady_clock;

  struct Histogram {
    std::vector<double> bounds;     // explicit bounds, strictly increasing
    std::vector<uint64_t> buckets;  // per bucket (not cumulative); empty or bounds+1
    uint64_t count = 0;
    double sum = 0;
    bool has_sum = false;
  };
  struct Series {
    bool is_histogram = false;
    double value = 0;  // sums
    Histogram histogram;
  };
  using Family = std::map<Labels, Series>;

  class Txn {
   public:
    Txn(Txn&&) = default;
    ~Txn() = default;

    // Adds `delta` to the series' total. False (with *why) when the series
    // is new and the accumulator is full.
    bool AddSum(const Labels& group, const std::string& family, const Labels& series, double delta,
                std::string* why);
    // Adds a histogram delta (buckets empty or bounds.size()+1 long).
    bool AddHistogram(const Labels& group, const std::string& family, const Labels& series,
                      const Histogram& delta, std::string* why);
    // Forgets a series (a staleness marker was received for it).
    void Remove(const Labels& group, const std::string& family, const Labels& series);
    // The family as it stands in this Txn (null when it has no series).
    const Family* Find(const Labels& group, const std::string& family);
    // Makes the group's staged changes permanent.
    void Commit(const Labels& group);

   private:
    friend class OtlpDeltaAccumulator;
    struct Staged {
      std::map<std::string, Family> families;
      size_t committed_series = 0;  // the group's series when staged
    };
    Txn(OtlpDeltaAccumulator* acc, Clock::time_point now);
    Staged& Stage(const Labels& group);
    size_t SeriesOf(const Staged& s) const;

    OtlpDeltaAccumulator* acc_;
    Clock::time_point now_;
    std::unique_lock<std::mutex> lock_;
    std::map<Labels, Staged> staged_;
    size_t new_series_ = 0;  // staged series beyond the committed ones
  };

  explicit OtlpDeltaAccumulator(OtlpDeltaLimits limits = {}) : limits_(limits) {}

  Txn Begin(Clock::time_point now = Clock::now()) { return Txn(this, now); }

  size_t series() const;
  size_t groups() const;

 private:
  struct Group {
    std::map<std::string, Family> families;
    size_t series = 0;
    Clock::time_point last_commit;
  };
  void ExpireLocked(Clock::time_point now);

  OtlpDeltaLimits limits_;
  mutable std::mutex mu_;
  std::map<Labels, Group> groups_;
  size_t series_ = 0;
};

}  // namespace gpumon::ingest
