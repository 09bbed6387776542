// Durable file writing for block files: a buffered append-only writer, and
// helpers that make a directory entry or a whole small file durable.
//
// Contract: errors name the path and the failing system call. Close() flushes,
// fsyncs and closes; a writer destroyed without Close() closes the file but
// promises nothing about its contents (callers discard such files).
// WriteFileAtomically leaves either the old or the new file at `path`, never
// a mix, even across a crash: it writes `path`.tmp, fsyncs it, renames it
// over `path` and fsyncs the directory.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"

namespace gpumon::tsdb::index {

class FileWriter {
 public:
  static Result<std::unique_ptr<FileWriter>> Create(const std::string& path);
  ~FileWriter();
  FileWriter(const FileWriter&) = delete;
  FileWriter& operator=(const FileWriter&) = delete;

  Status Write(std::span<const uint8_t> data);
  // Bytes written so far (buffered included): the offset of the next write.
  uint64_t position() const { return position_; }
  const std::string& path() const { return path_; }
  Status Close();

 private:
  FileWriter(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  Status Flush();
  // write(2) until every byte is written (retrying EINTR and short writes).
  Status WriteAll(const uint8_t* p, size_t left);

  std::string path_;
  int fd_ = -1;
  uint64_t position_ = 0;
  std::vector<uint8_t> buf_;
};

// fsyncs a directory so entries created or renamed in it survive a crash.
Status SyncDir(const std::string& dir);

Status WriteFileAtomically(const std::string& path, std::span<const uint8_t> data);

}  // namespace gpumon::tsdb::index
