#include "tsdb/index/index_writer.h"

#include <limits>

#include "tsdb/index/crc.h"

namespace gpumon::tsdb::index {

Result<std::unique_ptr<IndexWriter>> IndexWriter::Create(const std::string& path) {
  auto f = FileWriter::Create(path);
  if (!f.ok()) return f.status();
  auto w = std::unique_ptr<IndexWriter>(new IndexWriter(std::move(f).value()));
  uint8_t header[kIndexHeaderSize] = {
      kIndexMagic[0], kIndexMagic[1], kIndexMagic[2], kIndexMagic[3], kIndexVersion, 0, 0, 0};
  Status s = w->file_->Write(header);
  if (!s.ok()) return s;
  return w;
}

Status IndexWriter::Fail(const std::string& message) {
  if (failed_.ok()) failed_ = Status::Error("index " + file_->path() + ": " + message);
  return failed_;
}

Status IndexWriter::WriteSection(Section s, std::span<const uint8_t> payload) {
  toc_[s] = {file_->position(), payload.size()};
  uint8_t crc[4];
  StoreU32(crc, Crc32c(payload));
  Status st = file_->Write(payload);
  if (st.ok()) st = file_->Write(crc);
  return st.ok() ? st : Fail(st.message());
}

Status IndexWriter::BeginStreamedSection(Section s) {
  streamed_start_ = file_->position();
  streamed_crc_ = 0;
  toc_[s].offset = streamed_start_;
  return Status::Ok();
}

Status IndexWriter::AppendStreamed(std::span<const uint8_t> data) {
  streamed_crc_ = Crc32c(data, streamed_crc_);
  Status st = file_->Write(data);
  return st.ok() ? st : Fail(st.message());
}

Status IndexWriter::EndStreamedSection(Section s) {
  toc_[s].length = file_->position() - streamed_start_;
  uint8_t crc[4];
  StoreU32(crc, streamed_crc_);
  Status st = file_->Write(crc);
  return st.ok() ? st : Fail(st.message());
}

Status IndexWriter::AddSymbols(std::span<const std::string_view> symbols) {
  if (!failed_.ok()) return failed_;
  if (stage_ != Stage::kSymbols) return Fail("symbols added twice or after series");
  if (symbols.size() >= std::numeric_limits<uint32_t>::max()) return Fail("too many symbols");
  uint64_t total = 0;
  for (size_t i = 0; i < symbols.size(); ++i) {
    if (i > 0 && !(symbols[i - 1] < symbols[i])) {
      return Fail("symbols not sorted and unique at \"" + std::string(symbols[i]) + "\"");
    }
    total += symbols[i].size();
  }
  if (total > std::numeric_limits<uint32_t>::max()) return Fail("symbol table over 4 GiB");
  buf_.Reset();
  buf_.PutU32(static_cast<uint32_t>(symbols.size()));
  uint32_t off = 0;
  buf_.PutU32(0);
  for (std::string_view s : symbols) {
    off += static_cast<uint32_t>(s.size());
    buf_.PutU32(off);
  }
  for (std::string_view s : symbols) buf_.PutString(s);
  num_symbols_ = static_cast<uint32_t>(symbols.size());
  Status st = WriteSection(kSymbols, buf_.bytes());
  if (!st.ok()) return st;
  stage_ = Stage::kSeries;
  return BeginStreamedSection(kSeries);
}

Status IndexWriter::AddSeries(std::span<const LabelRef> labels, std::span<const ChunkMeta> chunks) {
  if (!failed_.ok()) return failed_;
  if (stage_ != Stage::kSeries) return Fail("series added before symbols or after postings");
  if (series_offsets_.size() >= std::numeric_limits<uint32_t>::max()) {
    return Fail("too many series");
  }
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i].first >= num_symbols_ || labels[i].second >= num_symbols_) {
      return Fail("series " + std::to_string(series_offsets_.size()) + ": unknown symbol");
    }
    if (i > 0 && labels[i - 1].first >= labels[i].first) {
      return Fail("series " + std::to_string(series_offsets_.size()) +
                  ": label names not sorted and unique");
    }
  }
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (chunks[i].mint > chunks[i].maxt || (i > 0 && chunks[i].mint <= chunks[i - 1].maxt)) {
      return Fail("series " + std::to_string(series_offsets_.size()) +
                  ": chunks out of order or overlapping");
    }
  }
  Encbuf& e = buf_;
  e.Reset();
  e.PutUvarint(labels.size());
  for (const auto& [n, v] : labels) {
    e.PutUvarint(n);
    e.PutUvarint(v);
  }
  e.PutUvarint(chunks.size());
  for (size_t i = 0; i < chunks.size(); ++i) {
    const ChunkMeta& c = chunks[i];
    if (i == 0) {
      e.PutVarint(c.mint);
      e.PutUvarint(static_cast<uint64_t>(c.maxt) - static_cast<uint64_t>(c.mint));
      e.PutUvarint(c.ref);
    } else {
      const ChunkMeta& p = chunks[i - 1];
      e.PutUvarint(static_cast<uint64_t>(c.mint) - static_cast<uint64_t>(p.maxt));
      e.PutUvarint(static_cast<uint64_t>(c.maxt) - static_cast<uint64_t>(c.mint));
      e.PutVarint(static_cast<int64_t>(c.ref - p.ref));
    }
  }
  Encbuf len;
  len.PutUvarint(e.size());
  uint8_t crc[4];
  StoreU32(crc, Crc32c(e.bytes()));
  series_offsets_.push_back(file_->position() - streamed_start_);
  Status st = AppendStreamed(len.bytes());
  if (st.ok()) st = AppendStreamed(e.bytes());
  if (st.ok()) st = AppendStreamed(crc);
  return st;
}

Status IndexWriter::EndSeries() {
  Status st = EndStreamedSection(kSeries);
  if (!st.ok()) return st;
  buf_.Reset();
  buf_.PutU32(static_cast<uint32_t>(series_offsets_.size()));
  for (uint64_t off : series_offsets_) buf_.PutU64(off);
  st = WriteSection(kSeriesOffsets, buf_.bytes());
  if (!st.ok()) return st;
  stage_ = Stage::kPostings;
  return BeginStreamedSection(kPostings);
}

Status IndexWriter::AddPostings(uint32_t name_ref, uint32_t value_ref,
                                std::span<const uint32_t> ids) {
  if (!failed_.ok()) return failed_;
  if (stage_ == Stage::kSymbols) return Fail("postings added before symbols");
  if (stage_ == Stage::kSeries) {
    Status st = EndSeries();
    if (!st.ok()) return st;
  }
  if (stage_ != Stage::kPostings) return Fail("postings added after Finish");
  if (name_ref >= num_symbols_ || value_ref >= num_symbols_) {
    return Fail("postings for an unknown symbol");
  }
  if (!table_.empty() && (table_.back().name > name_ref ||
                          (table_.back().name == name_ref && table_.back().value >= value_ref))) {
    return Fail("postings not in ascending label order");
  }
  if (ids.size() >= std::numeric_limits<uint32_t>::max()) return Fail("postings list too long");
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] >= series_offsets_.size() || (i > 0 && ids[i - 1] >= ids[i])) {
      return Fail("postings list not ascending or naming an unknown series");
    }
  }
  table_.push_back({name_ref, value_ref, postings_elements_, static_cast<uint32_t>(ids.size())});
  postings_elements_ += ids.size();
  buf_.Reset();
  for (uint32_t id : ids) buf_.PutU32(id);
  return AppendStreamed(buf_.bytes());
}

Status IndexWriter::EndPostings() {
  Status st = EndStreamedSection(kPostings);
  if (!st.ok()) return st;
  buf_.Reset();
  buf_.PutU32(static_cast<uint32_t>(table_.size()));
  for (const TableEntry& t : table_) {
    buf_.PutU32(t.name);
    buf_.PutU32(t.value);
    buf_.PutU64(t.first);
    buf_.PutU32(t.count);
  }
  st = WriteSection(kPostingsTable, buf_.bytes());
  if (!st.ok()) return st;
  // One label index entry per distinct name: its run of table entries.
  buf_.Reset();
  uint32_t names = 0;
  buf_.PutU32(0);  // patched below
  for (size_t i = 0; i < table_.size();) {
    size_t j = i;
    while (j < table_.size() && table_[j].name == table_[i].name) ++j;
    buf_.PutU32(table_[i].name);
    buf_.PutU32(static_cast<uint32_t>(i));
    buf_.PutU32(static_cast<uint32_t>(j - i));
    ++names;
    i = j;
  }
  StoreU32(buf_.bytes().data(), names);
  return WriteSection(kLabelIndex, buf_.bytes());
}

Status IndexWriter::Finish() {
  if (!failed_.ok()) return failed_;
  if (stage_ == Stage::kDone) return Fail("finished twice");
  if (stage_ == Stage::kSymbols) {
    Status st = AddSymbols({});
    if (!st.ok()) return st;
  }
  if (stage_ == Stage::kSeries) {
    Status st = EndSeries();
    if (!st.ok()) return st;
  }
  Status st = EndPostings();
  if (!st.ok()) return st;
  buf_.Reset();
  for (const Extent& x : toc_) {
    buf_.PutU64(x.offset);
    buf_.PutU64(x.length);
  }
  buf_.PutU32(Crc32c(buf_.bytes()));
  st = file_->Write(buf_.bytes());
  if (st.ok()) st = file_->Close();
  if (!st.ok()) return Fail(st.message());
  stage_ = Stage::kDone;
  return Status::Ok();
}

}  // namespace gpumon::tsdb::index
