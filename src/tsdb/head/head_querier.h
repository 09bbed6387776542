// HeadQuerier: tsdb::Querier over the head (created by Head::Querier).
//
// Contract: as tsdb::Querier (storage.h). Select snapshots the matching
// series when called, under the head's shared apply lock, so it sees every
// commit entirely or not at all; closed chunks are referenced (kept alive by
// the head's epoch), the open chunk is copied, and decoding happens lazily
// in the iterators. Series without samples in [mint, maxt] are left out.
// LabelNames/LabelValues without matchers read the index (empty when the
// head's time range misses [mint, maxt]); with matchers they read the
// matching series that have samples in the range.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tsdb/storage.h"

namespace gpumon::tsdb::head {

class Head;

class HeadQuerier : public tsdb::Querier {
 public:
  HeadQuerier(const Head* head, int64_t mint, int64_t maxt)
      : head_(head), mint_(mint), maxt_(maxt) {}

  std::unique_ptr<SeriesSet> Select(std::span<const Matcher> matchers,
                                    const SelectHints& hints = {}) const override;
  Result<std::vector<std::string>> LabelNames(std::span<const Matcher> matchers) const override;
  Result<std::vector<std::string>> LabelValues(const std::string& name,
                                               std::span<const Matcher> matchers) const override;

 private:
  int64_t EffectiveMint() const;
  // Calls fn with the (name, value) symbol ids of every label of the series
  // that match all matchers and have samples in the querier's range.
  Status ForEachLabelPair(std::span<const Matcher> matchers,
                          const std::function<void(uint32_t name_id, uint32_t value_id)>& fn) const;
  bool HeadOverlaps() const;

  const Head* head_;
  int64_t mint_;
  int64_t maxt_;
};

}  // namespace gpumon::tsdb::head
