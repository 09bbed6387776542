// High-availability deduplication of series scraped by replicas of one
// Prometheus pair, with Thanos's semantics (--query.replica-label).
//
// Contract:
// - NewDedupQuerier wraps a Querier. Select drops the replica labels from
//   every series; series whose remaining labels are equal are merged into
//   one, and the set stays in ascending label order, each series once.
//   Matchers still see the replica labels (they apply to the stored data).
// - Samples of a merged series come from one replica at a time (Thanos's
//   "penalty" algorithm): at each step the replica with the earliest next
//   sample wins; every other replica is then sought past the chosen time
//   plus a penalty of twice the last observed sample interval (5 s before
//   one is known), so the output stays on the current replica and switches
//   only when it has a gap of more than about two scrape intervals. Ties go
//   to the replica whose original labels sort first.
// - LabelNames omits the replica labels; LabelValues of a replica label is
//   empty.
// - No replica labels: the inner querier is returned unchanged.
// - Select reads the labels of all matching series up front (the merge
//   needs them sorted without the replica labels); samples stay lazy. As
//   for any Querier, the querier must outlive the sets it returns.
// - Counter-reset adjustment across replicas (Thanos's isCounter mode) is
//   not done: the querier does not know which function reads the data.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tsdb/storage.h"

namespace gpumon::tsdb::dedup {

std::unique_ptr<Querier> NewDedupQuerier(std::unique_ptr<Querier> inner,
                                         std::vector<std::string> replica_labels);

// Merges the iterators of one series' replicas with the penalty algorithm
// (above); replicas earlier in the list win ties.
std::unique_ptr<SeriesIterator> NewPenaltyIterator(
    std::vector<std::unique_ptr<SeriesIterator>> replicas);

}  // namespace gpumon::tsdb::dedup
