// MergeQuerier: one Querier over several (persistent blocks and the head),
// as the DB presents them.
//
// Contract: Select returns each distinct label set once, in label order;
// when several sources hold the same series its samples are merged by time,
// and a timestamp present in more than one source yields one sample (the
// one from the latest source in the list, which the DB orders oldest block
// first, head last). Label names and values are the sorted union.
#pragma once

#include <memory>
#include <vector>

#include "tsdb/storage.h"

namespace gpumon::tsdb::db {

class MergeQuerier : public Querier {
 public:
  explicit MergeQuerier(std::vector<std::unique_ptr<Querier>> queriers)
      : queriers_(std::move(queriers)) {}

  std::unique_ptr<SeriesSet> Select(std::span<const Matcher> matchers,
                                    const SelectHints& hints = {}) const override;
  Result<std::vector<std::string>> LabelNames(std::span<const Matcher> matchers) const override;
  Result<std::vector<std::string>> LabelValues(const std::string& name,
                                               std::span<const Matcher> matchers) const override;

 private:
  std::vector<std::unique_ptr<Querier>> queriers_;
};

// Merges iterators of one series from several sources (see MergeQuerier).
std::unique_ptr<SeriesIterator> MergeIterators(std::vector<std::unique_ptr<SeriesIterator>> its);

}  // namespace gpumon::tsdb::db
