// A read-only memory map of a whole file, so segments can be decoded in
// place without copying records.
//
// Contract: the file must not shrink while mapped (the WAL directory has a
// single owner; readers run before the writer opens). An empty file maps to
// an empty span.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "common/status.h"

namespace gpumon::tsdb::wal {

class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  static Result<MappedFile> Open(const std::string& path);

  std::span<const uint8_t> bytes() const { return {data_, size_}; }

 private:
  void Reset();
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace gpumon::tsdb::wal
