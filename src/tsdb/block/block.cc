#include "tsdb/block/block.h"

#include <algorithm>
#include <filesystem>

#include "tsdb/block/block_querier.h"
#include "tsdb/block/block_writer.h"
#include "tsdb/block/chunk_series_iterator.h"
#include "tsdb/block/ulid.h"
#include "tsdb/chunkenc/chunk.h"
#include "tsdb/index/postings_for_matchers.h"

namespace gpumon::tsdb::block {

namespace fs = std::filesystem;

namespace {

uint64_t FileSize(const std::string& path) {
  std::error_code ec;
  auto n = fs::file_size(path, ec);
  return ec ? 0 : static_cast<uint64_t>(n);
}

bool ParseSegmentNumber(const std::string& name, uint32_t* out) {
  if (name.size() != 6) return false;
  uint32_t v = 0;
  for (char c : name) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint32_t>(c - '0');
  }
  *out = v;
  return v > 0;
}

void SortAndCut(std::vector<LabelCount>* v, size_t n) {
  auto by_count = [](const LabelCount& a, const LabelCount& b) {
    return a.count != b.count ? a.count > b.count : a.name < b.name;
  };
  if (v->size() > n) {
    std::partial_sort(v->begin(), v->begin() + static_cast<ptrdiff_t>(n), v->end(), by_count);
    v->resize(n);
  } else {
    std::sort(v->begin(), v->end(), by_count);
  }
}

}  // namespace

Result<std::shared_ptr<Block>> Block::Open(const std::string& dir, Options options) {
  auto b = std::shared_ptr<Block>(new Block());
  b->dir_ = dir;
  auto meta = ReadMeta(dir);
  if (!meta.ok()) return meta.status();
  b->meta_ = std::move(meta).value();

  const std::string index_path = dir + "/" + kIndexFileName;
  auto ixf = MmapFile::Open(index_path);
  if (!ixf.ok()) return ixf.status();
  b->index_file_ = std::move(ixf).value();
  auto ix = index::IndexReader::Open(b->index_file_.bytes(), index_path,
                                     {.verify_checksums = options.verify_checksums});
  if (!ix.ok()) return ix.status();
  b->index_ = std::move(ix).value();
  size_t cache_bytes = options.series_cache_bytes;
  if (cache_bytes == kAutoSeriesCache) {
    constexpr size_t kMiB = size_t{1} << 20;
    cache_bytes = std::clamp<size_t>(4 * b->index_file_.bytes().size(), 4 * kMiB, 32 * kMiB);
  }
  b->series_cache_ = std::make_unique<SeriesCache>(cache_bytes);

  const std::string chunks_dir = dir + "/" + kChunksDirName;
  std::vector<std::pair<uint32_t, std::string>> names;
  std::error_code ec;
  for (fs::directory_iterator it(chunks_dir, ec), end; !ec && it != end; it.increment(ec)) {
    uint32_t n = 0;
    if (it->is_regular_file() && ParseSegmentNumber(it->path().filename().string(), &n)) {
      names.emplace_back(n, it->path().string());
    }
  }
  if (ec) return Status::Error("list " + chunks_dir + ": " + ec.message());
  std::sort(names.begin(), names.end());
  std::vector<ChunkReader::Segment> segments;
  uint64_t size = b->index_file_.bytes().size() + FileSize(dir + "/" + kMetaFileName);
  for (const auto& [n, path] : names) {
    auto f = MmapFile::Open(path);
    if (!f.ok()) return f.status();
    segments.push_back({n, f->bytes(), path});
    size += f->bytes().size();
    b->segment_files_.push_back(std::move(f).value());
  }
  auto cr = ChunkReader::Open(std::move(segments), {.verify_checksums = options.verify_checksums});
  if (!cr.ok()) return cr.status();
  b->chunks_ = std::move(cr).value();
  b->static_size_ = size;

  auto tomb = ReadTombstones(dir);
  if (!tomb.ok()) return tomb.status();
  b->tombstones_ = std::make_shared<const Tombstones>(std::move(tomb).value());
  b->tombstones_size_ = FileSize(dir + "/" + kTombstonesFileName);
  return b;
}

uint64_t Block::SizeBytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_size_ + tombstones_size_;
}

std::shared_ptr<const Tombstones> Block::tombstones() const {
  std::lock_guard<std::mutex> lock(mu_);
  return tombstones_;
}

std::unique_ptr<Querier> Block::NewQuerier(int64_t mint, int64_t maxt) const {
  return NewBlockQuerier(shared_from_this(), tombstones(), mint, maxt);
}

Result<index::Postings> Block::Postings(std::span<const Matcher> matchers) const {
  return index::PostingsForMatchers(index_, matchers);
}

Result<std::vector<std::string>> Block::LabelNames(std::span<const Matcher> matchers) const {
  std::vector<std::string> out;
  if (matchers.empty()) {
    for (std::string_view n : index_.LabelNames()) out.emplace_back(n);
    return out;
  }
  auto ids = Postings(matchers);
  if (!ids.ok()) return ids.status();
  std::vector<bool> seen(index_.num_symbols());
  index::IndexReader::SeriesRefs refs;
  for (uint64_t id : *ids) {
    Status s = index_.ReadSeries(id, &refs);
    if (!s.ok()) return s;
    for (const auto& [n, v] : refs.labels) seen[n] = true;
  }
  for (uint32_t i = 0; i < seen.size(); ++i) {
    if (seen[i]) out.emplace_back(index_.Symbol(i));
  }
  return out;
}

Result<std::vector<std::string>> Block::LabelValues(const std::string& name,
                                                    std::span<const Matcher> matchers) const {
  std::vector<std::string> out;
  if (matchers.empty()) {
    for (std::string_view v : index_.LabelValues(name)) out.emplace_back(v);
    return out;
  }
  auto entry = index_.FindLabelName(name);
  if (!entry) return out;
  auto ids = Postings(matchers);
  if (!ids.ok()) return ids.status();
  if (ids->empty()) return out;
  uint64_t listed = 0;
  for (uint32_t k = entry->first; k < entry->first + entry->count; ++k) {
    listed += index_.PostingsEntryAt(k).count;
  }
  // Decoding the matched series is cheaper than reading every value's
  // postings when the matchers are selective.
  if (ids->size() * 8 < listed) {
    std::vector<uint32_t> values;
    index::IndexReader::SeriesRefs refs;
    for (uint64_t id : *ids) {
      Status s = index_.ReadSeries(id, &refs);
      if (!s.ok()) return s;
      for (const auto& [n, v] : refs.labels) {
        if (n == entry->name) values.push_back(v);
      }
    }
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    for (uint32_t v : values) out.emplace_back(index_.Symbol(v));
    return out;
  }
  index::Postings list;
  for (uint32_t k = entry->first; k < entry->first + entry->count; ++k) {
    const auto e = index_.PostingsEntryAt(k);
    Status s = index_.ReadPostings(e, &list);
    if (!s.ok()) return s;
    if (index::Intersects(list, *ids)) out.emplace_back(index_.Symbol(e.value));
  }
  return out;
}

IndexStats Block::Stats(size_t top_n) const {
  IndexStats st;
  st.num_series = index_.num_series();
  st.num_label_names = index_.num_label_names();
  st.num_label_pairs = index_.num_postings_entries();
  st.num_symbols = index_.num_symbols();
  std::vector<LabelCount> pairs;
  pairs.reserve(index_.num_postings_entries());
  for (uint32_t i = 0; i < index_.num_label_names(); ++i) {
    const auto n = index_.LabelNameAt(i);
    const std::string_view name = index_.Symbol(n.name);
    uint64_t bytes = 0;
    for (uint32_t k = n.first; k < n.first + n.count; ++k) {
      const auto e = index_.PostingsEntryAt(k);
      const std::string_view value = index_.Symbol(e.value);
      bytes += value.size();
      pairs.push_back({std::string(name) + "=" + std::string(value), e.count});
      if (name == kMetricName)
        st.series_count_by_metric_name.push_back({std::string(value), e.count});
    }
    st.label_value_count_by_label_name.push_back({std::string(name), n.count});
    st.memory_in_bytes_by_label_name.push_back({std::string(name), bytes});
  }
  SortAndCut(&pairs, top_n);
  st.series_count_by_label_value_pair = std::move(pairs);
  SortAndCut(&st.series_count_by_metric_name, top_n);
  SortAndCut(&st.label_value_count_by_label_name, top_n);
  SortAndCut(&st.memory_in_bytes_by_label_name, top_n);
  return st;
}

Status Block::Delete(std::span<const Matcher> matchers, int64_t mint, int64_t maxt) {
  if (mint > maxt) return Status::Error("delete: mint after maxt");
  std::lock_guard<std::mutex> serial(delete_mu_);
  auto ids = Postings(matchers);
  if (!ids.ok()) return ids.status();
  auto next = std::make_shared<Tombstones>(*tombstones());
  bool changed = false;
  index::IndexReader::SeriesRefs refs;
  for (uint64_t id : *ids) {
    Status s = index_.ReadSeries(id, &refs);
    if (!s.ok()) return s;
    if (refs.chunks.empty()) continue;
    bool overlaps = false;
    for (const auto& c : refs.chunks) overlaps |= (c.mint <= maxt && c.maxt >= mint);
    if (!overlaps) continue;
    next->Add(id,
              {std::max(mint, refs.chunks.front().mint), std::min(maxt, refs.chunks.back().maxt)});
    changed = true;
  }
  if (!changed) return Status::Ok();
  Status s = WriteTombstones(dir_, *next);
  if (!s.ok()) return s;
  std::lock_guard<std::mutex> lock(mu_);
  tombstones_ = std::move(next);
  tombstones_size_ = FileSize(dir_ + "/" + kTombstonesFileName);
  return Status::Ok();
}

std::unique_ptr<ChunkSeriesSet> Block::ChunkSelect(std::span<const Matcher> matchers, int64_t mint,
                                                   int64_t maxt) const {
  auto set = std::unique_ptr<ChunkSeriesSet>(new ChunkSeriesSet());
  set->block_ = shared_from_this();
  set->tombstones_ = tombstones();
  set->mint_ = mint;
  set->maxt_ = maxt;
  if (maxt < mint || maxt < meta_.min_time || mint >= meta_.max_time) return set;
  auto ids = Postings(matchers);
  if (!ids.ok()) {
    set->status_ = ids.status();
  } else {
    set->ids_ = std::move(ids).value();
  }
  return set;
}

bool ChunkSeriesSet::Next() {
  const index::IndexReader& ix = block_->index();
  index::IndexReader::SeriesRefs refs;
  while (status_.ok() && pos_ < ids_.size()) {
    const uint64_t id = ids_[pos_++];
    Status s = ix.ReadSeries(id, &refs);
    if (!s.ok()) {
      status_ = s;
      return false;
    }
    const Intervals* del = tombstones_->Get(id);
    chunks_.clear();
    metas_.clear();
    for (const index::ChunkMeta& c : refs.chunks) {
      if (c.maxt < mint_ || c.mint > maxt_) continue;
      if (del != nullptr && Covers(*del, c.mint, c.maxt)) continue;
      auto data = block_->chunk_reader().Chunk(c.ref);
      if (!data.ok()) {
        status_ = data.status();
        return false;
      }
      chunks_.push_back({c, *data});
      metas_.push_back(c);
    }
    if (chunks_.empty()) continue;
    deleted_ = del != nullptr ? *del : Intervals{};
    labels_ = ix.ToLabels(refs.labels);
    return true;
  }
  return false;
}

std::unique_ptr<SeriesIterator> ChunkSeriesSet::Iterator() const {
  return std::make_unique<ChunkSeriesIterator>(block_, &block_->chunk_reader(), metas_, deleted_,
                                               mint_, maxt_);
}

Status Block::Verify() const {
  Status s = index_.Verify();
  if (!s.ok()) return s;
  index::IndexReader::SeriesRefs refs;
  for (uint64_t id = 0; id < index_.num_series(); ++id) {
    s = index_.ReadSeries(id, &refs);
    if (!s.ok()) return s;
    for (const auto& c : refs.chunks) {
      auto data = chunks_.Chunk(c.ref);
      if (!data.ok()) return data.status();
      auto it = chunkenc::NewIterator(*data);
      while (it->Next()) {
      }
      if (!it->status().ok()) {
        return it->status().WithContext("chunk " + std::to_string(c.ref) + " of series " +
                                        std::to_string(id) + " in " + dir_);
      }
    }
  }
  return Status::Ok();
}

Result<std::vector<std::string>> ListBlockDirs(const std::string& data_dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(data_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it->is_directory() && IsUlid(name) && fs::exists(it->path() / kMetaFileName)) {
      out.push_back(it->path().string());
    }
  }
  if (ec) return Status::Error("list " + data_dir + ": " + ec.message());
  std::sort(out.begin(), out.end());
  return out;
}

Status RemoveTemporaryBlockDirs(const std::string& data_dir) {
  std::error_code ec;
  std::vector<fs::path> doomed;
  const std::string suffix = kTmpForCreationSuffix;
  for (fs::directory_iterator it(data_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      doomed.push_back(it->path());
    }
  }
  if (ec) return Status::Error("list " + data_dir + ": " + ec.message());
  for (const auto& p : doomed) {
    fs::remove_all(p, ec);
    if (ec) return Status::Error("remove " + p.string() + ": " + ec.message());
  }
  return Status::Ok();
}

}  // namespace gpumon::tsdb::block
