// Repair: makes a damaged WAL readable again by keeping everything before
// the damage. The caller has already reported the corruption; this only
// cuts.
//
// Contract: truncates segment `c.segment` of `dir` at `c.offset` (removing
// the file when nothing but its header would remain) and deletes every
// later segment, then syncs the files and the directory. Afterwards a
// WalReader replays exactly the records it had yielded before reaching the
// corruption, with no error. Safe to repeat.
#pragma once

#include <string>

#include "common/status.h"
#include "tsdb/wal/corruption.h"

namespace gpumon::tsdb::wal {

Status Repair(const std::string& dir, const Corruption& c);

}  // namespace gpumon::tsdb::wal
