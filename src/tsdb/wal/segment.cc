#include "tsdb/wal/segment.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace gpumon::tsdb::wal {

std::string SegmentName(int index) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08d", index);
  return buf;
}

std::optional<int> ParseSegmentName(std::string_view name) {
  if (name.size() != 8) return std::nullopt;
  int index = 0;
  for (char c : name) {
    if (c < '0' || c > '9') return std::nullopt;
    index = index * 10 + (c - '0');
  }
  return index;
}

std::string SegmentPath(const std::string& dir, int index) {
  return dir + "/" + SegmentName(index);
}

Result<std::vector<SegmentFile>> ListSegments(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<SegmentFile> out;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return out;
  fs::directory_iterator it(dir, ec);
  if (ec) return Status::Error("wal: cannot list " + dir + ": " + ec.message());
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    std::optional<int> index = ParseSegmentName(it->path().filename().string());
    if (!index) continue;
    std::error_code type_ec;
    if (!it->is_regular_file(type_ec)) continue;
    uint64_t size = it->file_size(type_ec);
    if (type_ec) return Status::Error("wal: cannot stat " + it->path().string());
    out.push_back(SegmentFile{*index, SegmentPath(dir, *index), size});
  }
  if (ec) return Status::Error("wal: cannot list " + dir + ": " + ec.message());
  std::sort(out.begin(), out.end(),
            [](const SegmentFile& a, const SegmentFile& b) { return a.index < b.index; });
  return out;
}

void WriteSegmentHeader(uint8_t out[kSegmentHeaderSize]) {
  std::memcpy(out, kSegmentMagic, 4);
  out[4] = kSegmentVersion;
  out[5] = out[6] = out[7] = 0;
}

Status SyncDir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return Status::Error("wal: cannot open directory " + dir + ": " + std::strerror(errno));
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) return Status::Error("wal: fsync of directory " + dir + ": " + std::strerror(err));
  return Status::Ok();
}

}  // namespace gpumon::tsdb::wal
