// WAL segment files: naming, listing and the fixed segment header.
//
// Contract:
// - A WAL directory holds segment files named by their index as eight
//   decimal digits (00000000, 00000001, ...). Indices increase by one; a
//   gap means a segment was lost. Other entries (checkpoint.*, *.tmp) are
//   not segments and ListSegments ignores them.
// - Every segment starts with an 8-byte header: the magic "GWAL", a format
//   version byte, three zero bytes. Frames follow (see frame.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace gpumon::tsdb::wal {

inline constexpr size_t kSegmentHeaderSize = 8;
inline constexpr uint8_t kSegmentMagic[4] = {'G', 'W', 'A', 'L'};
inline constexpr uint8_t kSegmentVersion = 1;
inline constexpr int kMaxSegmentIndex = 99999999;

struct SegmentFile {
  int index = 0;
  std::string path;
  uint64_t size = 0;
};

std::string SegmentName(int index);
// The index a file name stands for, or nullopt when it is not a segment name.
std::optional<int> ParseSegmentName(std::string_view name);
std::string SegmentPath(const std::string& dir, int index);

// Segments in `dir` in ascending index order (an error if `dir` cannot be
// read; an empty list if it does not exist).
Result<std::vector<SegmentFile>> ListSegments(const std::string& dir);

// The 8 header bytes every segment starts with.
void WriteSegmentHeader(uint8_t out[kSegmentHeaderSize]);

// Makes a directory's entries (created, renamed, deleted files) durable.
Status SyncDir(const std::string& dir);

}  // namespace gpumon::tsdb::wal
