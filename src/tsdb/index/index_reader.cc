#include "tsdb/index/index_reader.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "tsdb/index/crc.h"
#include "tsdb/index/encoding.h"

namespace gpumon::tsdb::index {
namespace {

std::string Offset(uint64_t off) { return "offset " + std::to_string(off); }

}  // namespace

Status IndexReader::Corrupt(Section s, uint64_t file_offset, const std::string& what) const {
  return Status::Error("index " + name_ + ": corrupt " + kSectionNames[s] + " section at " +
                       Offset(file_offset) + ": " + what);
}

Result<IndexReader> IndexReader::Open(std::span<const uint8_t> data, std::string name,
                                      Options options) {
  IndexReader r;
  r.data_ = data;
  r.name_ = std::move(name);
  r.options_ = options;
  const std::string prefix = "index " + r.name_ + ": ";
  if (data.size() < kIndexHeaderSize + kTocSize) {
    return Status::Error(prefix + "file too small (" + std::to_string(data.size()) + " bytes)");
  }
  if (std::memcmp(data.data(), kIndexMagic, 4) != 0) {
    return Status::Error(prefix + "bad magic at offset 0, not an index file");
  }
  if (data[4] != kIndexVersion) {
    return Status::Error(prefix + "unsupported version " + std::to_string(data[4]) +
                         " at offset 4");
  }
  if (data[5] != 0 || data[6] != 0 || data[7] != 0) {
    return Status::Error(prefix + "non-zero header padding at offset 5");
  }
  const uint64_t toc_at = data.size() - kTocSize;
  const uint8_t* toc = data.data() + toc_at;
  if (LoadU32(toc + kTocSize - 4) != Crc32c({toc, kTocSize - 4})) {
    return Status::Error(prefix + "table of contents checksum mismatch at " + Offset(toc_at));
  }
  for (int s = 0; s < kNumSections; ++s) {
    uint64_t off = LoadU64(toc + 16 * s);
    uint64_t len = LoadU64(toc + 16 * s + 8);
    // payload and its 4-byte CRC must lie between the header and the TOC.
    if (off < kIndexHeaderSize || off > toc_at || len > toc_at - off || toc_at - off - len < 4) {
      return Status::Error(prefix + "table of contents at " + Offset(toc_at) + ": " +
                           kSectionNames[s] + " section out of bounds (offset " +
                           std::to_string(off) + ", length " + std::to_string(len) + ")");
    }
    r.parts_[s].payload = data.subspan(off, len);
    r.parts_[s].offset = off;
    if (options.verify_checksums && s != kSeries) {
      uint32_t want = LoadU32(data.data() + off + len);
      if (want != Crc32c(r.parts_[s].payload)) {
        return r.Corrupt(static_cast<Section>(s), off + len, "checksum mismatch");
      }
    }
  }
  Status st = r.ValidateSymbols();
  if (st.ok()) st = r.ValidateSeriesOffsets();
  if (st.ok()) st = r.ValidateTables();
  if (!st.ok()) return st;
  return r;
}

Status IndexReader::ValidateSymbols() {
  const Part& p = parts_[kSymbols];
  if (p.payload.size() < 8) return Corrupt(kSymbols, p.offset, "too short");
  uint64_t n = LoadU32(p.payload.data());
  if ((p.payload.size() - 8) / 4 < n) {
    return Corrupt(kSymbols, p.offset, "symbol count " + std::to_string(n) + " exceeds section");
  }
  num_symbols_ = static_cast<uint32_t>(n);
  symbol_offsets_ = p.payload.data() + 4;
  symbol_data_ = symbol_offsets_ + 4 * (n + 1);
  const uint64_t data_len = p.payload.size() - 4 * (n + 2);
  if (LoadU32(symbol_offsets_) != 0) return Corrupt(kSymbols, p.offset + 4, "first offset not 0");
  if (LoadU32(symbol_offsets_ + 4 * n) != data_len) {
    return Corrupt(kSymbols, p.offset + 4 + 4 * n, "string area length mismatch");
  }
  uint32_t prev = 0;
  for (uint64_t i = 1; i <= n; ++i) {
    uint32_t off = LoadU32(symbol_offsets_ + 4 * i);
    if (off < prev || off > data_len) {
      return Corrupt(kSymbols, p.offset + 4 + 4 * i, "symbol offsets not ascending");
    }
    prev = off;
  }
  // Sortedness makes reference order equal string order, which lookups use.
  for (uint32_t i = 1; i < num_symbols_; ++i) {
    if (!(Symbol(i - 1) < Symbol(i))) {
      return Corrupt(kSymbols, p.offset + 4 + 4 * i, "symbols not sorted and unique");
    }
  }
  return Status::Ok();
}

std::string_view IndexReader::Symbol(uint32_t ref) const {
  uint32_t b = LoadU32(symbol_offsets_ + 4 * static_cast<uint64_t>(ref));
  uint32_t e = LoadU32(symbol_offsets_ + 4 * static_cast<uint64_t>(ref) + 4);
  return {reinterpret_cast<const char*>(symbol_data_) + b, e - b};
}

std::optional<uint32_t> IndexReader::FindSymbol(std::string_view s) const {
  uint32_t lo = 0, hi = num_symbols_;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (Symbol(mid) < s) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo < num_symbols_ && Symbol(lo) == s) return lo;
  return std::nullopt;
}

Status IndexReader::ValidateSeriesOffsets() {
  const Part& p = parts_[kSeriesOffsets];
  if (p.payload.size() < 4) return Corrupt(kSeriesOffsets, p.offset, "too short");
  uint64_t n = LoadU32(p.payload.data());
  if (p.payload.size() != 4 + 8 * n) {
    return Corrupt(kSeriesOffsets, p.offset,
                   "series count " + std::to_string(n) + " does not match section length");
  }
  num_series_ = n;
  series_offsets_ = p.payload.data() + 4;
  const uint64_t series_len = parts_[kSeries].payload.size();
  uint64_t prev = 0;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t off = LoadU64(series_offsets_ + 8 * i);
    if (off >= series_len || (i > 0 && off <= prev)) {
      return Corrupt(kSeriesOffsets, p.offset + 4 + 8 * i,
                     "series offset " + std::to_string(off) + " out of order or out of bounds");
    }
    prev = off;
  }
  return Status::Ok();
}

Status IndexReader::ValidateTables() {
  const Part& pp = parts_[kPostings];
  if (pp.payload.size() % 4 != 0) {
    return Corrupt(kPostings, pp.offset, "length not a multiple of 4");
  }
  const uint64_t elements = pp.payload.size() / 4;

  const Part& pt = parts_[kPostingsTable];
  if (pt.payload.size() < 4) return Corrupt(kPostingsTable, pt.offset, "too short");
  uint64_t ne = LoadU32(pt.payload.data());
  if (pt.payload.size() != 4 + kPostingsEntrySize * ne) {
    return Corrupt(kPostingsTable, pt.offset, "entry count does not match section length");
  }
  num_entries_ = static_cast<uint32_t>(ne);
  entries_ = pt.payload.data() + 4;
  for (uint32_t i = 0; i < num_entries_; ++i) {
    PostingsEntry e = PostingsEntryAt(i);
    const uint64_t at = pt.offset + 4 + kPostingsEntrySize * static_cast<uint64_t>(i);
    if (e.name >= num_symbols_ || e.value >= num_symbols_) {
      return Corrupt(kPostingsTable, at, "unknown symbol");
    }
    if (e.first > elements || e.count > elements - e.first) {
      return Corrupt(kPostingsTable, at, "postings list out of bounds");
    }
    if (i > 0) {
      PostingsEntry prev = PostingsEntryAt(i - 1);
      if (prev.name > e.name || (prev.name == e.name && prev.value >= e.value)) {
        return Corrupt(kPostingsTable, at, "entries not sorted and unique");
      }
    }
  }

  const Part& pl = parts_[kLabelIndex];
  if (pl.payload.size() < 4) return Corrupt(kLabelIndex, pl.offset, "too short");
  uint64_t nn = LoadU32(pl.payload.data());
  if (pl.payload.size() != 4 + kLabelIndexEntrySize * nn) {
    return Corrupt(kLabelIndex, pl.offset, "name count does not match section length");
  }
  num_names_ = static_cast<uint32_t>(nn);
  names_ = pl.payload.data() + 4;
  // The names must partition the postings table into runs of equal names.
  uint64_t next = 0;
  for (uint32_t i = 0; i < num_names_; ++i) {
    NameEntry n = LabelNameAt(i);
    const uint64_t at = pl.offset + 4 + kLabelIndexEntrySize * static_cast<uint64_t>(i);
    if (n.first != next || n.count == 0 || n.count > num_entries_ - n.first) {
      return Corrupt(kLabelIndex, at, "entry range does not follow the previous one");
    }
    for (uint32_t k = n.first; k < n.first + n.count; ++k) {
      if (PostingsEntryAt(k).name != n.name) {
        return Corrupt(kLabelIndex, at, "entry range covers another label name");
      }
    }
    if (n.first + n.count < num_entries_ && PostingsEntryAt(n.first + n.count).name == n.name) {
      return Corrupt(kLabelIndex, at, "entry range stops inside its label name");
    }
    next = n.first + n.count;
  }
  if (next != num_entries_) {
    return Corrupt(kLabelIndex, pl.offset, "names do not cover the postings table");
  }
  return Status::Ok();
}

IndexReader::PostingsEntry IndexReader::PostingsEntryAt(uint32_t i) const {
  const uint8_t* p = entries_ + kPostingsEntrySize * static_cast<uint64_t>(i);
  return {LoadU32(p), LoadU32(p + 4), LoadU64(p + 8), LoadU32(p + 16)};
}

IndexReader::NameEntry IndexReader::LabelNameAt(uint32_t i) const {
  const uint8_t* p = names_ + kLabelIndexEntrySize * static_cast<uint64_t>(i);
  return {LoadU32(p), LoadU32(p + 4), LoadU32(p + 8)};
}

std::optional<IndexReader::NameEntry> IndexReader::FindLabelName(std::string_view name) const {
  auto ref = FindSymbol(name);
  if (!ref) return std::nullopt;
  uint32_t lo = 0, hi = num_names_;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (LabelNameAt(mid).name < *ref) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo < num_names_ && LabelNameAt(lo).name == *ref) return LabelNameAt(lo);
  return std::nullopt;
}

std::optional<IndexReader::PostingsEntry> IndexReader::FindPostings(std::string_view name,
                                                                    std::string_view value) const {
  auto n = FindLabelName(name);
  if (!n) return std::nullopt;
  uint32_t lo = n->first, hi = n->first + n->count;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (Symbol(PostingsEntryAt(mid).value) < value) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo < n->first + n->count) {
    PostingsEntry e = PostingsEntryAt(lo);
    if (Symbol(e.value) == value) return e;
  }
  return std::nullopt;
}

std::vector<std::string_view> IndexReader::LabelNames() const {
  std::vector<std::string_view> out;
  out.reserve(num_names_);
  for (uint32_t i = 0; i < num_names_; ++i) out.push_back(Symbol(LabelNameAt(i).name));
  return out;
}

std::vector<std::string_view> IndexReader::LabelValues(std::string_view name) const {
  std::vector<std::string_view> out;
  auto n = FindLabelName(name);
  if (!n) return out;
  out.reserve(n->count);
  for (uint32_t k = n->first; k < n->first + n->count; ++k) {
    out.push_back(Symbol(PostingsEntryAt(k).value));
  }
  return out;
}

template <typename F>
Status IndexReader::ForEachId(const PostingsEntry& e, F&& f) const {
  const uint8_t* p = parts_[kPostings].payload.data() + 4 * e.first;
  uint32_t prev = 0;
  for (uint32_t i = 0; i < e.count; ++i) {
    uint32_t id = LoadU32(p + 4 * static_cast<uint64_t>(i));
    if (id >= num_series_ || (i > 0 && id <= prev)) {
      return Corrupt(kPostings, parts_[kPostings].offset + 4 * (e.first + i),
                     "series id " + std::to_string(id) + " out of order or unknown");
    }
    prev = id;
    f(id);
  }
  return Status::Ok();
}

Status IndexReader::ReadPostings(const PostingsEntry& e, Postings* out) const {
  out->clear();
  out->reserve(e.count);
  return ForEachId(e, [out](uint32_t id) { out->push_back(id); });
}

Status IndexReader::AddPostings(const PostingsEntry& e, DenseUnion* out) const {
  return ForEachId(e, [out](uint32_t id) { out->Add(id); });
}

Result<Postings> IndexReader::AllPostings() const {
  Postings all(num_series_);
  for (uint64_t i = 0; i < num_series_; ++i) all[i] = i;
  return all;
}

Result<Postings> IndexReader::PostingsFor(std::string_view name, std::string_view value) const {
  Postings out;
  auto e = FindPostings(name, value);
  if (!e) return out;
  Status st = ReadPostings(*e, &out);
  if (!st.ok()) return st;
  return out;
}

Result<Postings> IndexReader::PostingsForValues(
    std::string_view name, const std::function<bool(std::string_view)>& accept) const {
  Postings out;
  auto n = FindLabelName(name);
  if (!n) return out;
  std::vector<PostingsEntry> hits;
  uint64_t total = 0;
  for (uint32_t k = n->first; k < n->first + n->count; ++k) {
    PostingsEntry e = PostingsEntryAt(k);
    if (accept(Symbol(e.value))) {
      hits.push_back(e);
      total += e.count;
    }
  }
  if (hits.empty()) return out;
  if (hits.size() == 1) {
    Status st = ReadPostings(hits[0], &out);
    if (!st.ok()) return st;
    return out;
  }
  // Many lists over dense ids: a bitmap beats sorting once the lists are not
  // tiny relative to the block.
  if (total * 16 >= num_series_) {
    DenseUnion u(num_series_);
    for (const auto& e : hits) {
      Status st = AddPostings(e, &u);
      if (!st.ok()) return st;
    }
    return u.Take();
  }
  out.reserve(total);
  for (const auto& e : hits) {
    Status st = ForEachId(e, [&out](uint32_t id) { out.push_back(id); });
    if (!st.ok()) return st;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Status IndexReader::ReadSeries(uint64_t id, SeriesRefs* out) const {
  out->labels.clear();
  out->chunks.clear();
  if (id >= num_series_) {
    return Status::Error("index " + name_ + ": series " + std::to_string(id) + " out of range");
  }
  const Part& ps = parts_[kSeries];
  const uint64_t off = LoadU64(series_offsets_ + 8 * id);
  const uint64_t at = ps.offset + off;
  Decbuf d(ps.payload.subspan(off));
  uint64_t len = d.Uvarint();
  if (!d.ok() || len > d.remaining() || d.remaining() - len < 4) {
    return Corrupt(kSeries, at, "series " + std::to_string(id) + ": entry truncated");
  }
  std::span<const uint8_t> body = d.Bytes(len);
  uint32_t crc = d.U32();
  if (options_.verify_checksums && crc != Crc32c(body)) {
    return Corrupt(kSeries, at, "series " + std::to_string(id) + ": checksum mismatch");
  }
  Decbuf b(body);
  uint64_t nl = b.Uvarint();
  if (nl > b.remaining() / 2) {
    return Corrupt(kSeries, at, "series " + std::to_string(id) + ": bad label count");
  }
  out->labels.reserve(nl);
  for (uint64_t i = 0; i < nl; ++i) {
    uint64_t n = b.Uvarint();
    uint64_t v = b.Uvarint();
    if (!b.ok() || n >= num_symbols_ || v >= num_symbols_ ||
        (i > 0 && n <= out->labels.back().first)) {
      return Corrupt(kSeries, at, "series " + std::to_string(id) + ": bad label reference");
    }
    out->labels.emplace_back(static_cast<uint32_t>(n), static_cast<uint32_t>(v));
  }
  uint64_t nc = b.Uvarint();
  if (!b.ok() || nc > b.remaining() / 3) {
    return Corrupt(kSeries, at, "series " + std::to_string(id) + ": bad chunk count");
  }
  out->chunks.reserve(nc);
  for (uint64_t i = 0; i < nc; ++i) {
    ChunkMeta c;
    if (i == 0) {
      c.mint = b.Varint();
      uint64_t span = b.Uvarint();
      c.ref = b.Uvarint();
      // Modular arithmetic gives the exact room for any mint.
      const uint64_t room = static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) -
                            static_cast<uint64_t>(c.mint);
      if (span > room) {
        return Corrupt(kSeries, at, "series " + std::to_string(id) + ": chunk time overflow");
      }
      c.maxt = static_cast<int64_t>(static_cast<uint64_t>(c.mint) + span);
    } else {
      const ChunkMeta& p = out->chunks.back();
      uint64_t gap = b.Uvarint();
      uint64_t span = b.Uvarint();
      int64_t dref = b.Varint();
      // Both steps are positive and must not pass the largest timestamp.
      const uint64_t room = static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) -
                            static_cast<uint64_t>(p.maxt);
      if (gap == 0 || gap > room || span > room - gap) {
        return Corrupt(kSeries, at, "series " + std::to_string(id) + ": bad chunk time range");
      }
      c.mint = static_cast<int64_t>(static_cast<uint64_t>(p.maxt) + gap);
      c.maxt = static_cast<int64_t>(static_cast<uint64_t>(c.mint) + span);
      c.ref = p.ref + static_cast<uint64_t>(dref);
    }
    out->chunks.push_back(c);
  }
  if (!b.ok() || b.remaining() != 0) {
    return Corrupt(kSeries, at, "series " + std::to_string(id) + ": malformed entry");
  }
  return Status::Ok();
}

Labels IndexReader::ToLabels(std::span<const LabelRef> refs) const {
  std::vector<Label> items;
  items.reserve(refs.size());
  for (const auto& [n, v] : refs) items.push_back({std::string(Symbol(n)), std::string(Symbol(v))});
  return Labels::FromSorted(std::move(items));
}

Status IndexReader::ReadSeries(uint64_t id, Labels* labels, std::vector<ChunkMeta>* chunks) const {
  SeriesRefs refs;
  Status st = ReadSeries(id, &refs);
  if (!st.ok()) return st;
  *labels = ToLabels(refs.labels);
  *chunks = std::move(refs.chunks);
  return Status::Ok();
}

Status IndexReader::Verify() const {
  for (int s = 0; s < kNumSections; ++s) {
    const Part& p = parts_[s];
    uint32_t want = LoadU32(data_.data() + p.offset + p.payload.size());
    if (want != Crc32c(p.payload)) {
      return Corrupt(static_cast<Section>(s), p.offset + p.payload.size(), "checksum mismatch");
    }
  }
  SeriesRefs refs;
  for (uint64_t id = 0; id < num_series_; ++id) {
    Status st = ReadSeries(id, &refs);
    if (!st.ok()) return st;
  }
  Postings scratch;
  for (uint32_t i = 0; i < num_entries_; ++i) {
    Status st = ReadPostings(PostingsEntryAt(i), &scratch);
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

}  // namespace gpumon::tsdb::index
