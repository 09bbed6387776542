#include "tsdb/index/file_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace gpumon::tsdb::index {
namespace {

constexpr size_t kBufferSize = 1 << 20;

Status SysError(const std::string& what, const std::string& path) {
  return Status::Error(what + " " + path + ": " + std::strerror(errno));
}

}  // namespace

Result<std::unique_ptr<FileWriter>> FileWriter::Create(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return SysError("create", path);
  auto w = std::unique_ptr<FileWriter>(new FileWriter(path, fd));
  w->buf_.reserve(kBufferSize);
  return w;
}

FileWriter::~FileWriter() {
  if (fd_ >= 0) ::close(fd_);
}

Status FileWriter::Write(std::span<const uint8_t> data) {
  if (fd_ < 0) return Status::Error("write " + path_ + ": file is closed");
  position_ += data.size();
  if (buf_.size() + data.size() <= kBufferSize) {
    buf_.insert(buf_.end(), data.begin(), data.end());
    return Status::Ok();
  }
  Status s = Flush();
  if (!s.ok()) return s;
  if (data.size() < kBufferSize) {
    buf_.insert(buf_.end(), data.begin(), data.end());
    return Status::Ok();
  }
  // Large writes bypass the buffer.
  return WriteAll(data.data(), data.size());
}

Status FileWriter::Flush() {
  Status s = WriteAll(buf_.data(), buf_.size());
  if (s.ok()) buf_.clear();
  return s;
}

Status FileWriter::WriteAll(const uint8_t* p, size_t left) {
  while (left > 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return SysError("write", path_);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status FileWriter::Close() {
  if (fd_ < 0) return Status::Ok();
  Status s = Flush();
  if (s.ok() && ::fsync(fd_) != 0) s = SysError("fsync", path_);
  if (::close(fd_) != 0 && s.ok()) s = SysError("close", path_);
  fd_ = -1;
  return s;
}

Status SyncDir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return SysError("open directory", dir);
  Status s;
  if (::fsync(fd) != 0) s = SysError("fsync directory", dir);
  ::close(fd);
  return s;
}

Status WriteFileAtomically(const std::string& path, std::span<const uint8_t> data) {
  const std::string tmp = path + ".tmp";
  auto w = FileWriter::Create(tmp);
  if (!w.ok()) return w.status();
  Status s = (*w)->Write(data);
  if (s.ok()) s = (*w)->Close();
  if (!s.ok()) {
    ::unlink(tmp.c_str());
    return s;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Status e = SysError("rename " + tmp + " to", path);
    ::unlink(tmp.c_str());
    return e;
  }
  size_t slash = path.find_last_of('/');
  return SyncDir(slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash)));
}

}  // namespace gpumon::tsdb::index
