// Bulk import of OpenMetrics text (what `promtool tsdb create-blocks-from
// openmetrics` reads: every sample carries a timestamp in seconds) into
// persistent TSDB blocks, bypassing the head and the WAL.
//
// Contract:
// - Takes the data directory's lock (<dir>/lock, flock as DB::Open does), so
//   it refuses a directory in use by a running DB; creates the directory.
// - Samples of one series must come in strictly increasing time order;
//   series may be grouped (promtool's input) or interleaved. An out-of-order
//   or duplicate timestamp, a sample without a timestamp and any parse error
//   fail the import with a message naming the input line. Values (stale NaN,
//   other NaN payloads, -0.0) are stored bit-exactly. Series are labelled
//   with __name__ = the sample name (counters keep "_total") plus the
//   sample's labels. An empty input imports nothing.
// - Chunks never cross an aligned block_range_ms window (the head's block
//   size), and one block is written per aligned max_block_range_ms range
//   holding data, covering the windows with data in it: exactly what
//   compacting per-window blocks would give (chunks copied as they are), so
//   the directory looks like one a DB compacted, without writing everything
//   twice. Blocks already in the directory are left alone.
// - On failure, blocks already written are removed; the directory is left as
//   it was (apart from the lock file).
// - Memory: the compressed chunks of the whole input plus one open chunk
//   (up to samples_per_chunk samples) per series.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace gpumon::cli {

struct ImportOptions {
  int64_t block_range_ms = 2 * 3600 * 1000;
  // Imported blocks are written once and never appended to, so they use the
  // compactor's longer chunks: 480 samples (2 h at 15 s) compress to about
  // 0.64 bytes per sample on GPU data against 0.76 for 120 (chunks.md).
  int samples_per_chunk = 480;
  // Size of the blocks written, a multiple of block_range_ms; the DB's
  // largest compaction range for its default retention (planner.h). Not
  // above block_range_ms: one block per window.
  int64_t max_block_range_ms = 18 * 3600 * 1000;
  // Called now and then while parsing: bytes parsed so far, total bytes,
  // samples so far.
  std::function<void(uint64_t, uint64_t, uint64_t)> progress;
};

struct ImportStats {
  uint64_t series = 0;
  uint64_t samples = 0;
  uint64_t blocks = 0;
  uint64_t bytes = 0;  // of those blocks on disk
  double seconds = 0;
  std::vector<std::string> block_dirs;
};

// Imports `input` (OpenMetrics text) into data_dir.
Result<ImportStats> ImportOpenMetrics(std::string_view input, const std::string& data_dir,
                                      const ImportOptions& options = {});

// Same for a file, mapped into memory rather than read.
Result<ImportStats> ImportOpenMetricsFile(const std::string& path, const std::string& data_dir,
                                          const ImportOptions& options = {});

}  // namespace gpumon::cli
