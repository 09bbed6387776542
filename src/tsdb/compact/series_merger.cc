#include "tsdb/compact/series_merger.h"

#include <algorithm>
#include <memory>

#include "tsdb/chunkenc/chunk.h"

namespace gpumon::tsdb::compact {
namespace {

bool Touches(const block::Intervals* deleted, int64_t mint, int64_t maxt) {
  if (deleted == nullptr || deleted->empty()) return false;
  auto it = std::lower_bound(deleted->begin(), deleted->end(), mint,
                             [](const block::Interval& iv, int64_t t) { return iv.maxt < t; });
  return it != deleted->end() && it->mint <= maxt;
}

// One part's chunks within a cluster, decoded one after the other.
struct Stream {
  const block::Intervals* deleted = nullptr;
  std::vector<const block::ChunkWithData*> chunks;
  size_t next = 0;
  std::unique_ptr<SeriesIterator> it;
  size_t del_pos = 0;
  bool has = false;
  bool started = false;
  Sample cur;

  bool Deleted(int64_t t) {
    if (deleted == nullptr) return false;
    while (del_pos < deleted->size() && (*deleted)[del_pos].maxt < t) ++del_pos;
    return del_pos < deleted->size() && (*deleted)[del_pos].mint <= t;
  }

  // Moves to the next live sample; has == false at the end.
  Status Advance(uint64_t* dropped) {
    has = false;
    while (true) {
      if (!it) {
        if (next == chunks.size()) return Status::Ok();
        it = chunkenc::NewIterator(chunks[next++]->data);
      }
      if (!it->Next()) {
        if (!it->status().ok()) {
          return it->status().WithContext("chunk " + std::to_string(chunks[next - 1]->meta.ref));
        }
        it.reset();
        continue;
      }
      const Sample s = it->At();
      // Time must keep increasing across the part's chunks; anything else
      // is damage the writer would reject, so it is left out.
      if (started && s.t <= cur.t) continue;
      if (Deleted(s.t)) {
        ++*dropped;
        continue;
      }
      cur = s;
      has = started = true;
      return Status::Ok();
    }
  }
};

}  // namespace

SeriesMerger::SeriesMerger(int samples_per_chunk)
    : samples_per_chunk_(
          static_cast<size_t>(std::clamp(samples_per_chunk, 1, chunkenc::kMaxSamples))) {}

Status SeriesMerger::Merge(std::span<const SeriesPart> parts, CompactStats* stats) {
  refs_.clear();
  out_.clear();
  out_owned_.clear();
  owned_.clear();
  for (uint32_t p = 0; p < parts.size(); ++p) {
    for (uint32_t c = 0; c < parts[p].chunks.size(); ++c) {
      const auto& m = parts[p].chunks[c].meta;
      refs_.push_back({m.mint, m.maxt, p, c});
    }
  }
  std::sort(refs_.begin(), refs_.end(), [](const Ref& a, const Ref& b) {
    if (a.mint != b.mint) return a.mint < b.mint;
    return a.part != b.part ? a.part < b.part : a.chunk < b.chunk;
  });
  for (size_t i = 0; i < refs_.size();) {
    int64_t end = refs_[i].maxt;
    size_t j = i + 1;
    for (; j < refs_.size() && refs_[j].mint <= end; ++j) end = std::max(end, refs_[j].maxt);
    const Ref& r = refs_[i];
    if (j == i + 1 && !Touches(parts[r.part].deleted, r.mint, r.maxt)) {
      out_.push_back({r.mint, r.maxt, parts[r.part].chunks[r.chunk].data});
      out_owned_.push_back(-1);
      if (stats != nullptr) stats->chunks_copied++;
    } else {
      Status s = MergeCluster(parts, std::span<const Ref>(refs_).subspan(i, j - i), stats);
      if (!s.ok()) return s;
    }
    i = j;
  }
  for (size_t k = 0; k < out_.size(); ++k) {
    if (out_owned_[k] >= 0) out_[k].bytes = owned_[static_cast<size_t>(out_owned_[k])];
  }
  return Status::Ok();
}

Status SeriesMerger::MergeCluster(std::span<const SeriesPart> parts, std::span<const Ref> cluster,
                                  CompactStats* stats) {
  CompactStats scratch;
  if (stats == nullptr) stats = &scratch;
  // One stream per part, in part order (the priority on equal timestamps).
  std::vector<Stream> streams;
  std::vector<uint32_t> part_of;
  for (const Ref& r : cluster) {
    auto at = std::find(part_of.begin(), part_of.end(), r.part);
    size_t k = static_cast<size_t>(at - part_of.begin());
    if (at == part_of.end()) {
      part_of.push_back(r.part);
      streams.emplace_back();
      streams.back().deleted = parts[r.part].deleted;
    }
    streams[k].chunks.push_back(&parts[r.part].chunks[r.chunk]);
    stats->chunks_reencoded++;
  }
  std::vector<size_t> order(streams.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return part_of[a] < part_of[b]; });
  {
    std::vector<Stream> sorted;
    sorted.reserve(streams.size());
    for (size_t k : order) sorted.push_back(std::move(streams[k]));
    streams = std::move(sorted);
  }
  // Chunks of one part are already in time order (refs are sorted by mint).
  for (Stream& s : streams) {
    Status st = s.Advance(&stats->samples_dropped);
    if (!st.ok()) return st;
  }
  buf_.clear();
  while (true) {
    Stream* best = nullptr;
    for (Stream& s : streams) {
      if (s.has && (best == nullptr || s.cur.t < best->cur.t)) best = &s;
    }
    if (best == nullptr) break;
    const Sample pick = best->cur;
    buf_.push_back(pick);
    if (buf_.size() == samples_per_chunk_) Flush(stats);
    for (Stream& s : streams) {
      if (s.has && s.cur.t == pick.t) {
        if (&s != best) stats->samples_dropped++;
        Status st = s.Advance(&stats->samples_dropped);
        if (!st.ok()) return st;
      }
    }
  }
  Flush(stats);
  return Status::Ok();
}

void SeriesMerger::Flush(CompactStats* stats) {
  if (buf_.empty()) return;
  owned_.push_back(chunkenc::EncodeBest(buf_));
  out_.push_back({buf_.front().t, buf_.back().t, {}});
  out_owned_.push_back(static_cast<int64_t>(owned_.size() - 1));
  stats->chunks_written++;
  stats->samples_merged += buf_.size();
  buf_.clear();
}

}  // namespace gpumon::tsdb::compact
