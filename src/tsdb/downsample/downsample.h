// Downsampling: builds the 5-minute and 1-hour tiers that answer long-range
// queries (docs/formats/downsample.md). The query side (choosing a tier and
// reading one aggregate) is in select_aggregate.h, included here.
//
// Contract of Downsample:
// - Input: a raw block (resolution 0) or a downsampled block whose
//   resolution divides resolution_ms and is smaller (5m → 1h). Its
//   tombstones are applied; the input is not modified.
// - Output: a new block in data_dir with the input's time range, level and
//   sources, parents = the input, and downsample_resolution_ms =
//   resolution_ms. For every input series it holds the aggregate series
//   count, sum, min, max and counter, labelled with __aggr__ (see
//   window_aggregator.h for their exact meaning). From a downsampled input
//   each aggregate series is coarsened into the same aggregate; the result
//   equals downsampling the raw data directly (sums up to rounding).
// - Raw series that already carry an __aggr__ label, and downsampled series
//   without a known one, are skipped and counted (they cannot be
//   represented).
// - Memory is bounded by one series plus the block writer's per-series
//   index data: aggregates are spilled to temporary files (removed when done;
//   named *.tmp-for-creation so an interrupted run is cleaned up at start-up
//   by block::RemoveTemporaryBlockDirs) and merged back into label order.
// - Returns the output block's directory. The block is written even when
//   no series survive.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"
#include "tsdb/block/block.h"
#include "tsdb/block/chunk_segments.h"
#include "tsdb/downsample/aggregate.h"
#include "tsdb/downsample/select_aggregate.h"

namespace gpumon::tsdb::downsample {

struct DownsampleOptions {
  // Samples per output chunk (one chunk covers 10 h of 5-minute windows).
  int samples_per_chunk = 120;
  uint64_t segment_size = block::kDefaultSegmentSize;
};

struct DownsampleStats {
  uint64_t input_series = 0;
  uint64_t input_samples = 0;
  uint64_t output_series = 0;
  uint64_t output_samples = 0;
  uint64_t skipped_series = 0;
};

Result<std::string> Downsample(const std::string& data_dir, const block::Block& input,
                               int64_t resolution_ms, const DownsampleOptions& options = {},
                               DownsampleStats* stats = nullptr);

}  // namespace gpumon::tsdb::downsample
