// SeriesRefs: the series refs WriteStorage's appenders hand out. Callers
// that cache series (the scrape loop) stop passing labels once they hold a
// ref, but every queued sample needs its labels; so the wrapper gives out
// its own refs, each naming the labels and the inner storage's ref.
//
// Contract:
// - Resolve(ref, labels): with labels, returns the series' ref (the same
//   one for equal labels, new ones for new labels); with empty labels,
//   looks up a ref handed out earlier and fails (nullopt) when unknown.
// - Refs are never 0 and never reused.
// - Sweep() forgets series not resolved since the previous Sweep; a caller
//   then using a forgotten ref gets nullopt and passes labels again.
// - Thread-safe; the table is striped so concurrent scrapes rarely wait.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "common/labels.h"

namespace gpumon::remote {

class SeriesRefs {
 public:
  struct Series {
    uint64_t ref = 0;  // ours
    Labels labels;
    uint64_t inner_ref = 0;  // the wrapped storage's, 0 until known
  };

  std::optional<Series> Resolve(uint64_t ref, const Labels& labels);
  // Records the wrapped storage's ref for `ref`.
  void SetInner(uint64_t ref, uint64_t inner_ref);
  void Sweep();
  size_t size() const;

 private:
  static constexpr uint64_t kStripeBits = 6;
  static constexpr uint64_t kStripes = 1u << kStripeBits;
  struct Entry {
    Labels labels;
    uint64_t inner_ref = 0;
    uint64_t epoch = 0;  // last Resolve
  };
  struct Stripe {
    mutable std::mutex mu;
    std::unordered_map<uint64_t, Entry> by_ref;
    std::unordered_multimap<uint64_t, uint64_t> by_hash;  // labels hash -> ref
    uint64_t next = 1;
  };
  std::array<Stripe, kStripes> stripes_;
  std::atomic<uint64_t> epoch_{1};
};

}  // namespace gpumon::remote
