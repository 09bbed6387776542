// The aggregates a downsampled block stores per raw series, and the label
// that tells them apart (docs/formats/downsample.md).
//
// Contract: a downsampled block holds, for every input series, up to five
// series with the input's labels plus __aggr__="<name>". Names sort as
// count < counter < max < min < sum, the enum's order. Standard resolutions
// are 5 minutes and 1 hour; any multiple of the input's resolution works.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "common/labels.h"

namespace gpumon::tsdb::downsample {

inline constexpr std::string_view kAggrLabel = "__aggr__";

inline constexpr int64_t kResolution5m = 5LL * 60 * 1000;
inline constexpr int64_t kResolution1h = 60LL * 60 * 1000;

enum class Aggregate : uint8_t {
  kCount = 0,    // non-stale samples in the window
  kCounter = 1,  // raw counter samples needed for exact increase() (see format doc)
  kMax = 2,
  kMin = 3,
  kSum = 4,
};
inline constexpr size_t kNumAggregates = 5;
inline constexpr std::array<Aggregate, kNumAggregates> kAllAggregates = {
    Aggregate::kCount, Aggregate::kCounter, Aggregate::kMax, Aggregate::kMin, Aggregate::kSum};

std::string_view AggregateName(Aggregate a);
std::optional<Aggregate> ParseAggregate(std::string_view name);

// `base` with __aggr__="<name of a>" added (base must not have __aggr__).
Labels WithAggregate(const Labels& base, Aggregate a);
// `labels` without __aggr__.
Labels WithoutAggregate(const Labels& labels);

}  // namespace gpumon::tsdb::downsample
