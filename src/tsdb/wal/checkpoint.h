// Checkpoints: a compacted copy of the start of the WAL, so old segments
// can be deleted without losing the series the head still holds.
//
// A checkpoint is a directory <wal>/checkpoint.NNNNNNNN (NNNNNNNN: the last
// segment it covers), itself a WAL of segment files holding series,
// samples and tombstone records. Replay order after a restart:
//   1. the newest checkpoint (LastCheckpoint), read with WalReader;
//   2. the WAL segments after it: WalReader with first_segment = index + 1.
//
// Contract of Checkpoint():
// - Reads the newest existing checkpoint (if it covers segments before
//   `last`) and WAL segments [first, last], and writes a new checkpoint
//   covering `last` that keeps: series records of refs where keep(ref);
//   samples of kept refs with t >= mint; tombstones of kept refs with
//   maxt >= mint. Record order is preserved.
// - Atomic: written to checkpoint.NNNNNNNN.tmp, synced, then renamed. A
//   crash leaves either the old state or the complete new checkpoint.
// - `last` must be below the writer's current segment (which is still
//   being appended to). Corrupt input, or a record of unknown type, fails
//   the checkpoint and leaves the WAL as it was.
// - Deleting what the checkpoint replaces is the caller's next step:
//   WalWriter::TruncateBefore(last + 1), then DeleteCheckpoints(dir, last).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "common/status.h"

namespace gpumon::tsdb::wal {

struct CheckpointStats {
  uint64_t series_kept = 0, series_dropped = 0;
  uint64_t samples_kept = 0, samples_dropped = 0;
  uint64_t tombstones_kept = 0, tombstones_dropped = 0;
};

struct CheckpointRef {
  int index = -1;   // last segment covered
  std::string dir;  // the checkpoint directory
};

std::string CheckpointName(int index);  // "checkpoint.00000012"

Result<CheckpointStats> Checkpoint(const std::string& wal_dir, int first, int last,
                                   const std::function<bool(uint64_t ref)>& keep, int64_t mint);

// The newest complete checkpoint, or nullopt when there is none.
Result<std::optional<CheckpointRef>> LastCheckpoint(const std::string& wal_dir);

// Removes checkpoints older than `index` (and leftover temporary ones).
Status DeleteCheckpoints(const std::string& wal_dir, int index);

}  // namespace gpumon::tsdb::wal
