// IndexReader: reads a block's index file (docs/formats/index.md) from
// memory, normally an mmap of the file, without copying it.
//
// Contract:
// - Open validates the header, the table of contents and the structure of
//   every table (bounds, ordering, cross references), and with
//   verify_checksums the CRC-32 of every section except the series section,
//   whose entries carry their own CRC checked when each is read. After a
//   successful Open no method reads out of bounds, whatever the bytes; damage
//   found later (a series entry, a postings list) is an error naming the file,
//   the section and the file offset. Verify() checks everything eagerly.
// - Series ids are 0..num_series()-1 in ascending label order; postings are
//   sorted ids. Symbol references order like the strings they name.
// - The bytes must outlive the reader. Methods are const and thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/labels.h"
#include "common/status.h"
#include "tsdb/index/chunk_meta.h"
#include "tsdb/index/format.h"
#include "tsdb/index/index_writer.h"
#include "tsdb/index/postings.h"
#include "tsdb/index/postings_for_matchers.h"

namespace gpumon::tsdb::index {

class IndexReader : public LabelIndexView {
 public:
  struct Options {
    bool verify_checksums = true;
  };
  struct SeriesRefs {
    std::vector<LabelRef> labels;
    std::vector<ChunkMeta> chunks;
  };
  // One row of the postings table: the list of series with name=value.
  struct PostingsEntry {
    uint32_t name = 0;
    uint32_t value = 0;
    uint64_t first = 0;  // position of the first id in the postings section
    uint32_t count = 0;
  };
  // One row of the label index: the postings table rows of one label name.
  struct NameEntry {
    uint32_t name = 0;
    uint32_t first = 0;
    uint32_t count = 0;
  };

  // `name` (normally the file path) prefixes every error message.
  static Result<IndexReader> Open(std::span<const uint8_t> data, std::string name, Options options);
  static Result<IndexReader> Open(std::span<const uint8_t> data, std::string name) {
    return Open(data, std::move(name), Options{});
  }

  const std::string& name() const { return name_; }
  uint64_t size_bytes() const { return data_.size(); }
  uint64_t num_series() const { return num_series_; }
  uint32_t num_symbols() const { return num_symbols_; }
  // ref < num_symbols().
  std::string_view Symbol(uint32_t ref) const;
  std::optional<uint32_t> FindSymbol(std::string_view s) const;

  Status ReadSeries(uint64_t id, SeriesRefs* out) const;
  Status ReadSeries(uint64_t id, Labels* labels, std::vector<ChunkMeta>* chunks) const;
  Labels ToLabels(std::span<const LabelRef> refs) const;

  uint32_t num_label_names() const { return num_names_; }
  NameEntry LabelNameAt(uint32_t i) const;  // i < num_label_names()
  std::optional<NameEntry> FindLabelName(std::string_view name) const;
  uint32_t num_postings_entries() const { return num_entries_; }
  PostingsEntry PostingsEntryAt(uint32_t i) const;  // i < num_postings_entries()
  std::optional<PostingsEntry> FindPostings(std::string_view name, std::string_view value) const;

  // Sorted, unique; views into the index bytes.
  std::vector<std::string_view> LabelNames() const;
  std::vector<std::string_view> LabelValues(std::string_view name) const;

  Status ReadPostings(const PostingsEntry& e, Postings* out) const;  // replaces *out
  Status AddPostings(const PostingsEntry& e, DenseUnion* out) const;

  // LabelIndexView, so PostingsForMatchers runs on a block.
  Result<Postings> AllPostings() const override;
  Result<Postings> PostingsFor(std::string_view name, std::string_view value) const override;
  Result<Postings> PostingsForValues(
      std::string_view name, const std::function<bool(std::string_view)>& accept) const override;

  // Every checksum and every series entry and postings list.
  Status Verify() const;

 private:
  struct Part {
    std::span<const uint8_t> payload;
    uint64_t offset = 0;  // file offset of the payload
  };

  Status Corrupt(Section s, uint64_t file_offset, const std::string& what) const;
  Status ValidateSymbols();
  Status ValidateSeriesOffsets();
  Status ValidateTables();
  template <typename F>
  Status ForEachId(const PostingsEntry& e, F&& f) const;

  std::span<const uint8_t> data_;
  std::string name_;
  Options options_;
  Part parts_[kNumSections];
  uint32_t num_symbols_ = 0;
  const uint8_t* symbol_offsets_ = nullptr;
  const uint8_t* symbol_data_ = nullptr;
  uint64_t num_series_ = 0;
  const uint8_t* series_offsets_ = nullptr;
  uint32_t num_entries_ = 0;
  const uint8_t* entries_ = nullptr;
  uint32_t num_names_ = 0;
  const uint8_t* names_ = nullptr;
};

}  // namespace gpumon::tsdb::index
