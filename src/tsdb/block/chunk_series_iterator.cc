#include "tsdb/block/chunk_series_iterator.h"

#include <algorithm>

#include "tsdb/chunkenc/chunk.h"

namespace gpumon::tsdb::block {

ChunkSeriesIterator::ChunkSeriesIterator(std::shared_ptr<const void> keepalive,
                                         const ChunkReader* reader,
                                         std::span<const index::ChunkMeta> chunks,
                                         Intervals deleted, int64_t mint, int64_t maxt)
    : keepalive_(std::move(keepalive)),
      reader_(reader),
      deleted_(std::move(deleted)),
      mint_(mint),
      maxt_(maxt) {
  if (chunks.size() <= kInlineChunks) {
    std::copy(chunks.begin(), chunks.end(), inline_chunks_);
    chunks_ = {inline_chunks_, chunks.size()};
  } else {
    heap_chunks_.assign(chunks.begin(), chunks.end());
    chunks_ = heap_chunks_;
  }
}

bool ChunkSeriesIterator::OpenNextChunk() {
  while (next_chunk_ < chunks_.size()) {
    const index::ChunkMeta& c = chunks_[next_chunk_++];
    if (c.maxt < mint_ || (started_ && c.maxt <= at_.t)) continue;
    if (c.mint > maxt_) break;
    if (Covers(deleted_, c.mint, c.maxt)) continue;
    auto bytes = reader_->Chunk(c.ref);
    if (!bytes.ok()) {
      status_ = bytes.status();
      return false;
    }
    cur_ = chunkenc::NewChunkIterator(*bytes);
    cur_maxt_ = c.maxt;
    // Most chunks have nothing deleted in them: their samples up to the
    // range's end need only the ordering check, from the first one at or
    // after the range's start on (Check turns the fast path on there for a
    // chunk that starts before it, as the chunk an instant query reads
    // does).
    auto del = std::lower_bound(deleted_.begin(), deleted_.end(), c.mint,
                                [](const Interval& x, int64_t v) { return x.maxt < v; });
    cur_clean_ = del == deleted_.end() || del->mint > c.maxt;
    cur_plain_ = cur_clean_ && c.mint >= mint_;
    cur_hi_ = std::min(c.maxt, maxt_);
    return true;
  }
  return false;
}

bool ChunkSeriesIterator::Deleted(int64_t t) {
  // Samples come in increasing time, so the interval cursor only advances.
  while (del_pos_ < deleted_.size() && deleted_[del_pos_].maxt < t) ++del_pos_;
  return del_pos_ < deleted_.size() && deleted_[del_pos_].mint <= t;
}

ChunkSeriesIterator::Verdict ChunkSeriesIterator::Check(Sample s) {
  if (s.t < mint_ || (started_ && s.t <= at_.t) || Deleted(s.t)) return Verdict::kSkip;
  if (s.t > maxt_) {
    done_ = true;
    DropChunk();
    return Verdict::kStop;
  }
  at_ = s;
  started_ = true;
  // Later samples of this chunk are past this one, so inside the range's
  // start.
  cur_plain_ = cur_clean_;
  return Verdict::kAccept;
}

// Inlined into Next: the per-sample path of plain chunks.
[[gnu::always_inline]] inline ChunkSeriesIterator::Verdict ChunkSeriesIterator::Take(Sample s) {
  if (cur_plain_ && s.t <= cur_hi_ && (!started_ || s.t > at_.t)) {
    at_ = s;
    started_ = true;
    return Verdict::kAccept;
  }
  return Check(s);
}

bool ChunkSeriesIterator::FinishChunk() {
  if (!cur_->status().ok()) {
    status_ = cur_->status();
    done_ = true;
    DropChunk();
    return false;
  }
  DropChunk();
  return true;
}

bool ChunkSeriesIterator::Next() {
  // Common case: a chunk inside the range with nothing deleted in it; its
  // samples need only the ordering check (Take's inline path).
  if (cur_plain_ && cur_->Next()) {
    switch (Take(cur_->At())) {
      case Verdict::kAccept:
        return true;
      case Verdict::kStop:
        return false;
      case Verdict::kSkip:
        break;
    }
  }
  return NextSlow();
}

bool ChunkSeriesIterator::NextSlow() {
  if (done_) return false;
  while (true) {
    if (!cur_ && !OpenNextChunk()) {
      done_ = true;
      return false;
    }
    if (!cur_->Next()) {
      if (!FinishChunk()) return false;
      continue;
    }
    switch (Take(cur_->At())) {
      case Verdict::kAccept:
        return true;
      case Verdict::kStop:
        return false;
      case Verdict::kSkip:
        break;
    }
  }
}

bool ChunkSeriesIterator::Seek(int64_t t) {
  if (done_) return false;
  if (started_ && at_.t >= t) return true;
  // Whole chunks ending before t are skipped without decoding.
  if (cur_ && cur_maxt_ < t) DropChunk();
  while (!cur_ && next_chunk_ < chunks_.size() && chunks_[next_chunk_].maxt < t) ++next_chunk_;
  while (true) {
    if (!cur_ && !OpenNextChunk()) {
      done_ = true;
      return false;
    }
    // Inside the chunk the iterator's own Seek steps over decoded blocks
    // without a per-sample call. The chunk iterator never rests on a sample
    // this iterator rejected, and at_.t < t here, so this only moves
    // forward past samples that Next would also have passed.
    if (!cur_->Seek(t)) {
      if (!FinishChunk()) return false;
      continue;
    }
    switch (Check(cur_->At())) {
      case Verdict::kAccept:
        return true;
      case Verdict::kStop:
        return false;
      case Verdict::kSkip:
        break;
    }
    while (Next()) {
      if (at_.t >= t) return true;
    }
    return false;
  }
}

}  // namespace gpumon::tsdb::block
