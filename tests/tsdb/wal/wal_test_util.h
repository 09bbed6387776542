// Helpers for the WAL tests: a scratch directory, deterministic record
// contents that can be checked for integrity, and raw file edits.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace gpumon::tsdb::wal::testing {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "gpumon-wal-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Record `id`: its id in the first 8 bytes, then bytes derived from it, so a
// reader can tell a record is whole and which one it is. Lengths vary from
// 8 to 8 + max_extra bytes.
inline std::vector<uint8_t> MakeRecord(uint64_t id, size_t max_extra = 300) {
  uint64_t x = id * 0x9E3779B97F4A7C15ULL + 1;
  size_t extra = static_cast<size_t>(x % (max_extra + 1));
  std::vector<uint8_t> r(8 + extra);
  for (int i = 0; i < 8; ++i) r[i] = static_cast<uint8_t>(id >> (8 * i));
  for (size_t i = 0; i < extra; i += 8) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    for (size_t j = 0; j < 8 && i + j < extra; ++j)
      r[8 + i + j] = static_cast<uint8_t>(x >> (8 * j));
  }
  return r;
}

// The id of a record made by MakeRecord, or -1 if its bytes do not match.
inline int64_t CheckRecord(const std::vector<uint8_t>& r, size_t max_extra = 300) {
  if (r.size() < 8) return -1;
  uint64_t id = 0;
  for (int i = 0; i < 8; ++i) id |= static_cast<uint64_t>(r[i]) << (8 * i);
  return MakeRecord(id, max_extra) == r ? static_cast<int64_t>(id) : -1;
}

inline std::vector<uint8_t> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

inline void WriteFile(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

}  // namespace gpumon::tsdb::wal::testing
