// MmapFile: a read-only, shared memory map of a whole file. Blocks are read
// through it so the page cache holds their data once, for all readers.
//
// Contract: an empty file maps to an empty span (no mapping). Errors name the
// path. Block files are immutable, so nothing truncates them while mapped;
// a file replaced by rename keeps its old mapping valid.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "common/status.h"

namespace gpumon::tsdb::block {

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

}  // namespace gpumon::tsdb::block
