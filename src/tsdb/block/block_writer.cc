#include "tsdb/block/block_writer.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <numeric>

#include "tsdb/block/tombstones.h"
#include "tsdb/block/ulid.h"
#include "tsdb/chunkenc/chunk.h"
#include "tsdb/index/file_writer.h"
#include "tsdb/index/index_writer.h"

namespace gpumon::tsdb::block {

namespace fs = std::filesystem;

Result<std::unique_ptr<BlockWriter>> BlockWriter::Create(const std::string& data_dir,
                                                         BlockWriterOptions options) {
  if (options.min_time >= options.max_time) {
    return Status::Error("block writer: min_time " + std::to_string(options.min_time) +
                         " is not below max_time " + std::to_string(options.max_time));
  }
  auto w = std::unique_ptr<BlockWriter>(new BlockWriter());
  w->data_dir_ = data_dir;
  w->options_ = options;
  BlockMeta& m = w->meta_;
  m.id = options.id.empty() ? NewUlid() : options.id;
  m.min_time = options.min_time;
  m.max_time = options.max_time;
  m.compaction_level = options.compaction_level;
  m.sources = options.sources.empty() ? std::vector<std::string>{m.id} : options.sources;
  m.parents = options.parents;
  m.downsample_resolution_ms = options.downsample_resolution_ms;

  w->tmp_dir_ = data_dir + "/" + m.id + kTmpForCreationSuffix;
  std::error_code ec;
  if (fs::exists(data_dir + "/" + m.id, ec)) {
    return Status::Error("block writer: block " + data_dir + "/" + m.id + " already exists");
  }
  fs::remove_all(w->tmp_dir_, ec);
  fs::create_directories(w->tmp_dir_ + "/" + kChunksDirName, ec);
  if (ec) return Status::Error("create " + w->tmp_dir_ + ": " + ec.message());
  auto cw = ChunkWriter::Create(w->tmp_dir_ + "/" + kChunksDirName, options.segment_size);
  if (!cw.ok()) return cw.status();
  w->chunks_ = std::move(cw).value();
  return w;
}

BlockWriter::~BlockWriter() {
  if (!finished_ && !tmp_dir_.empty()) {
    chunks_.reset();
    std::error_code ec;
    fs::remove_all(tmp_dir_, ec);
  }
}

uint32_t BlockWriter::Intern(std::string_view s) {
  auto it = symbol_ids_.find(s);
  if (it != symbol_ids_.end()) return it->second;
  auto [ins, ok] = symbol_ids_.emplace(std::string(s), static_cast<uint32_t>(symbols_.size()));
  symbols_.push_back(&ins->first);
  return ins->second;
}

Status BlockWriter::AddSeries(const Labels& labels, std::span<const ChunkData> chunks) {
  if (finished_) return Status::Error("block writer: AddSeries after Finish");
  if (have_last_ && !(last_labels_ < labels)) {
    return Status::Error("block writer: series " + labels.ToString() + " out of order (not after " +
                         last_labels_.ToString() + ")");
  }
  if (chunks.empty()) return Status::Ok();
  for (size_t i = 0; i < chunks.size(); ++i) {
    const ChunkData& c = chunks[i];
    std::string where = "block writer: series " + labels.ToString() + " chunk " + std::to_string(i);
    if (c.bytes.empty()) return Status::Error(where + ": empty chunk");
    if (c.mint > c.maxt) return Status::Error(where + ": mint after maxt");
    if (i > 0 && c.mint <= chunks[i - 1].maxt) {
      return Status::Error(where + ": overlaps or precedes the previous chunk");
    }
    if (c.mint < meta_.min_time || c.maxt >= meta_.max_time) {
      return Status::Error(where + ": [" + std::to_string(c.mint) + ", " + std::to_string(c.maxt) +
                           "] outside the block range");
    }
  }
  uint64_t samples = 0;
  for (const ChunkData& c : chunks) {
    auto n = chunkenc::CountSamples(c.bytes);
    if (!n.ok()) {
      return n.status().WithContext("block writer: series " + labels.ToString());
    }
    samples += static_cast<uint64_t>(*n);
  }
  for (const ChunkData& c : chunks) {
    auto ref = chunks_->Write(c.bytes);
    if (!ref.ok()) return ref.status();
    series_chunks_.push_back({c.mint, c.maxt, *ref});
  }
  series_chunks_end_.push_back(series_chunks_.size());

  const uint32_t id = static_cast<uint32_t>(series_labels_end_.size());
  for (const Label& l : labels) {
    uint32_t n = Intern(l.name);
    uint32_t v = Intern(l.value);
    series_labels_.push_back(n);
    series_labels_.push_back(v);
    uint64_t key = static_cast<uint64_t>(n) << 32 | v;
    auto [it, inserted] = pair_ids_.emplace(key, static_cast<uint32_t>(pairs_.size()));
    if (inserted) {
      pairs_.push_back(key);
      postings_.emplace_back();
    }
    postings_[it->second].push_back(id);
  }
  series_labels_end_.push_back(series_labels_.size());
  meta_.stats.num_series++;
  meta_.stats.num_chunks += chunks.size();
  meta_.stats.num_samples += samples;
  last_labels_ = labels;
  have_last_ = true;
  return Status::Ok();
}

Status BlockWriter::WriteIndex(const std::string& path, uint64_t* size) {
  // Final symbol references follow string order.
  std::vector<uint32_t> order(symbols_.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [this](uint32_t a, uint32_t b) { return *symbols_[a] < *symbols_[b]; });
  std::vector<uint32_t> remap(symbols_.size());
  std::vector<std::string_view> sorted(symbols_.size());
  for (uint32_t i = 0; i < order.size(); ++i) {
    remap[order[i]] = i;
    sorted[i] = *symbols_[order[i]];
  }
  auto w = index::IndexWriter::Create(path);
  if (!w.ok()) return w.status();
  index::IndexWriter& iw = **w;
  Status s = iw.AddSymbols(sorted);
  if (!s.ok()) return s;
  std::vector<index::LabelRef> refs;
  uint64_t lb = 0, cb = 0;
  for (size_t i = 0; i < series_labels_end_.size(); ++i) {
    refs.clear();
    for (uint64_t k = lb; k < series_labels_end_[i]; k += 2) {
      refs.emplace_back(remap[series_labels_[k]], remap[series_labels_[k + 1]]);
    }
    lb = series_labels_end_[i];
    std::span<const index::ChunkMeta> metas(series_chunks_.data() + cb, series_chunks_end_[i] - cb);
    cb = series_chunks_end_[i];
    s = iw.AddSeries(refs, metas);
    if (!s.ok()) return s;
  }
  std::vector<std::pair<uint64_t, uint32_t>> keyed;  // (final key, pair index)
  keyed.reserve(pairs_.size());
  for (uint32_t i = 0; i < pairs_.size(); ++i) {
    uint64_t k =
        static_cast<uint64_t>(remap[pairs_[i] >> 32]) << 32 | remap[pairs_[i] & 0xFFFFFFFF];
    keyed.emplace_back(k, i);
  }
  std::sort(keyed.begin(), keyed.end());
  for (const auto& [k, i] : keyed) {
    s = iw.AddPostings(static_cast<uint32_t>(k >> 32), static_cast<uint32_t>(k), postings_[i]);
    if (!s.ok()) return s;
  }
  s = iw.Finish();
  if (!s.ok()) return s;
  *size = iw.size();
  return Status::Ok();
}

Result<std::string> BlockWriter::Finish() {
  if (finished_) return Status::Error("block writer: Finish called twice");
  Status s = chunks_->Close();
  if (!s.ok()) return s;
  uint64_t index_size = 0;
  s = WriteIndex(tmp_dir_ + "/" + kIndexFileName, &index_size);
  if (!s.ok()) return s;
  meta_.stats.num_bytes = index_size + chunks_->total_bytes();
  s = WriteTombstones(tmp_dir_, Tombstones{});
  if (s.ok()) s = WriteMeta(tmp_dir_, meta_);
  if (s.ok()) s = index::SyncDir(tmp_dir_);
  if (!s.ok()) return s;
  const std::string final_dir = data_dir_ + "/" + meta_.id;
  std::error_code ec;
  fs::rename(tmp_dir_, final_dir, ec);
  if (ec) return Status::Error("rename " + tmp_dir_ + " to " + final_dir + ": " + ec.message());
  finished_ = true;
  s = index::SyncDir(data_dir_);
  if (!s.ok()) return s;
  // Release the in-memory index data.
  symbol_ids_ = {};
  symbols_ = {};
  series_labels_ = {};
  series_chunks_ = {};
  pair_ids_ = {};
  postings_ = {};
  return final_dir;
}

}  // namespace gpumon::tsdb::block
