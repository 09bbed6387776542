// Reading downsampled tiers: pick the tier for a query and read one
// aggregate of it as ordinary series.
//
// Contract:
// - ChooseResolution returns the coarsest resolution in `available` that is
//   at most step_ms, or 0 (raw data) when none is (e.g. a step below 5 m).
//   Non-positive entries of `available` are ignored.
// - SelectAggregate selects from a querier over downsampled blocks (one
//   tier) the series of one aggregate matching `matchers`, and returns them
//   with the __aggr__ label removed, in label order, each once, as the
//   Querier contract requires. What each aggregate holds is described in
//   window_aggregator.h and docs/formats/downsample.md; e.g. avg over a
//   range is sum/count of the sum and count aggregates over that range, and
//   rate()/increase() over the counter aggregate equal those over raw data
//   at window-aligned range boundaries.
// - NewAggregateQuerier wraps a tier's querier so that it looks like raw
//   data holding one aggregate: Select is SelectAggregate, and label names
//   and values are those of that aggregate's series, without __aggr__.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "tsdb/downsample/aggregate.h"
#include "tsdb/matcher.h"
#include "tsdb/storage.h"

namespace gpumon::tsdb::downsample {

int64_t ChooseResolution(int64_t step_ms, std::span<const int64_t> available);

std::unique_ptr<SeriesSet> SelectAggregate(const Querier& downsampled,
                                           std::span<const Matcher> matchers, Aggregate which,
                                           const SelectHints& hints = {});

std::unique_ptr<Querier> NewAggregateQuerier(std::unique_ptr<Querier> tier, Aggregate which);

}  // namespace gpumon::tsdb::downsample
