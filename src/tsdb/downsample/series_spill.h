// Series spill files: a temporary, sequential store of (labels, chunks)
// records. Downsampling a raw block yields five aggregate series per input
// series, but a block must be written in label order, where all series of
// one aggregate usually come before the next; the aggregates are therefore
// spilled to one file each and merged back in order, so memory stays
// bounded by one series.
//
// Contract: a SpillWriter appends records; after Close a SpillReader returns
// them in the same order, bit-exact. The files are private scratch data of
// one process (not a stable format); I/O errors and truncation are errors
// naming the file.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/labels.h"
#include "common/status.h"
#include "tsdb/block/block_writer.h"

namespace gpumon::tsdb::downsample {

class SpillWriter {
 public:
  static Result<std::unique_ptr<SpillWriter>> Create(const std::string& path);
  ~SpillWriter();
  SpillWriter(const SpillWriter&) = delete;
  SpillWriter& operator=(const SpillWriter&) = delete;

  Status Add(const Labels& labels, std::span<const block::ChunkData> chunks);
  Status Close();
  const std::string& path() const { return path_; }

 private:
  SpillWriter() = default;
  std::string path_;
  FILE* f_ = nullptr;
  std::vector<uint8_t> buf_;
};

class SpillReader {
 public:
  static Result<std::unique_ptr<SpillReader>> Open(const std::string& path);
  ~SpillReader();
  SpillReader(const SpillReader&) = delete;
  SpillReader& operator=(const SpillReader&) = delete;

  // False at the end or on error (see status()).
  bool Next();
  const Labels& labels() const { return labels_; }
  // Valid until the next call of Next.
  std::span<const block::ChunkData> chunks() const { return chunks_; }
  Status status() const { return status_; }

 private:
  SpillReader() = default;
  bool Fail(const std::string& why);

  std::string path_;
  FILE* f_ = nullptr;
  uint64_t offset_ = 0;
  std::vector<uint8_t> buf_;
  Labels labels_;
  std::vector<block::ChunkData> chunks_;
  Status status_;
};

}  // namespace gpumon::tsdb::downsample
