// IndexWriter: writes a block's index file (docs/formats/index.md) in one
// streaming pass: symbols, then series, then postings.
//
// Contract:
// - AddSymbols once, first: every string used as a label name or value,
//   sorted ascending, unique. A symbol's reference is its position, so
//   comparing references compares strings.
// - AddSeries in ascending label order; the i-th call defines series id i.
//   Labels are (name ref, value ref) pairs with strictly increasing names.
//   Chunks are in time order and do not overlap (mint > previous maxt).
// - AddPostings after all series, in ascending (name ref, value ref) order,
//   each list of series ids ascending and below the number of series.
// - Finish writes the tables and the table of contents, fsyncs and closes.
//   Calls out of order or with invalid input fail with a message; the file is
//   then unusable and the caller discards it.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "tsdb/index/chunk_meta.h"
#include "tsdb/index/encoding.h"
#include "tsdb/index/file_writer.h"
#include "tsdb/index/format.h"

namespace gpumon::tsdb::index {

using LabelRef = std::pair<uint32_t, uint32_t>;  // (name symbol, value symbol)

class IndexWriter {
 public:
  static Result<std::unique_ptr<IndexWriter>> Create(const std::string& path);

  Status AddSymbols(std::span<const std::string_view> symbols);
  Status AddSeries(std::span<const LabelRef> labels, std::span<const ChunkMeta> chunks);
  Status AddPostings(uint32_t name_ref, uint32_t value_ref, std::span<const uint32_t> ids);
  Status Finish();

  uint64_t num_series() const { return series_offsets_.size(); }
  // Size of the file once finished.
  uint64_t size() const { return file_->position(); }

 private:
  enum class Stage { kSymbols, kSeries, kPostings, kDone };
  struct Extent {
    uint64_t offset = 0;
    uint64_t length = 0;
  };
  struct TableEntry {
    uint32_t name;
    uint32_t value;
    uint64_t first;
    uint32_t count;
  };

  explicit IndexWriter(std::unique_ptr<FileWriter> file) : file_(std::move(file)) {}
  Status Fail(const std::string& message);
  Status WriteSection(Section s, std::span<const uint8_t> payload);
  Status BeginStreamedSection(Section s);
  Status AppendStreamed(std::span<const uint8_t> data);
  Status EndStreamedSection(Section s);
  Status EndSeries();
  Status EndPostings();

  std::unique_ptr<FileWriter> file_;
  Stage stage_ = Stage::kSymbols;
  Status failed_;
  uint32_t num_symbols_ = 0;
  Extent toc_[kNumSections];
  uint32_t streamed_crc_ = 0;
  uint64_t streamed_start_ = 0;
  std::vector<uint64_t> series_offsets_;
  std::vector<TableEntry> table_;
  uint64_t postings_elements_ = 0;
  Encbuf buf_;
};

}  // namespace gpumon::tsdb::index
