#include "tsdb/wal/repair.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tsdb/wal/segment.h"

namespace gpumon::tsdb::wal {
namespace {

Status Errno(const std::string& what, const std::string& path) {
  return Status::Error("wal repair: " + what + " " + path + ": " + std::strerror(errno));
}

Status TruncateFile(const std::string& path, uint64_t size) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return Errno("cannot open", path);
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0 || ::fsync(fd) != 0) {
    Status s = Errno("cannot truncate", path);
    ::close(fd);
    return s;
  }
  ::close(fd);
  return Status::Ok();
}

}  // namespace

Status Repair(const std::string& dir, const Corruption& c) {
  if (c.segment < 0) return Status::Error("wal repair: corruption names no segment");
  Result<std::vector<SegmentFile>> segments = ListSegments(dir);
  if (!segments.ok()) return segments.status();
  // Delete from the newest down, so a crash midway still leaves a prefix.
  for (auto it = segments->rbegin(); it != segments->rend(); ++it) {
    if (it->index < c.segment) break;
    if (it->index == c.segment && c.offset > kSegmentHeaderSize) {
      if (Status s = TruncateFile(it->path, c.offset); !s.ok()) return s;
    } else if (::unlink(it->path.c_str()) != 0 && errno != ENOENT) {
      return Errno("cannot delete", it->path);
    }
  }
  return SyncDir(dir);
}

}  // namespace gpumon::tsdb::wal
