// MmapFile: a read-only, shared memory map of a whole file. TSDB blocks and
// WAL segments are read through it, so the page cache holds their data once
// for all readers and records decode in place.
//
// Contract: an empty file maps to an empty span (no mapping). Errors name the
// path. The file must not shrink while mapped (block files are immutable;
// the WAL has a single owner, and readers run before the writer opens); a
// file replaced by rename keeps its old mapping valid.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "common/status.h"

namespace gpumon {

class MmapFile {
 public:
  MmapFile() = default;
  ~MmapFile();
  MmapFile(MmapFile&& other) noexcept;
  MmapFile& operator=(MmapFile&& other) noexcept;
  MmapFile(const MmapFile&) = delete;
  MmapFile& operator=(const MmapFile&) = delete;

  static Result<MmapFile> Open(const std::string& path);

  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  const std::string& path() const { return path_; }

 private:
  void Reset();
  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace gpumon
