// Series: one in-memory series of the head (its label ids, its chunks and
// the state appenders validate against), laid out to stay small: a million
// active series must fit in well under 1 KiB each.
//
// Contract:
// - Label ids (name, value pairs from the head's SymbolTable, sorted by
//   name) live in the same allocation, right after the object; New/Free
//   manage it.
// - Sample data (open chunk, closed chunks, out-of-order samples) is
//   mutated only under the head's commit lock plus its exclusive apply
//   lock, and read under the shared apply lock. last_t/last_v are atomics
//   so appenders can pre-validate without locks; the commit re-validates.
// - The open chunk is an XOR appender; when it is cut (full, or the next
//   sample crosses a chunk-range boundary) its samples are re-encoded with
//   the smallest exact encoding and appended to the closed chunks, which
//   share one exact-size buffer (ClosedChunks). While the open chunk holds
//   samples, its last sample is last_t.
// - Closed chunk buffers that a concurrent reader may still use (replaced
//   by a cut, a truncation or a deletion) are handed to a garbage list
//   instead of being freed; the caller frees them with delete[] when no
//   snapshot can point into them.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "common/labels.h"
#include "tsdb/chunkenc/chunk.h"
#include "tsdb/head/closed_chunks.h"
#include "tsdb/sample.h"

namespace gpumon::tsdb::head {

class SymbolTable;

struct ChunkOptions {
  int samples_per_chunk = 120;
  int64_t chunk_range_ms = 2LL * 3600 * 1000;  // chunks never span a boundary
};

// A chunk as seen by readers: closed chunks point into head memory (kept
// alive by the reader's epoch), the open chunk points into a copy.
struct ChunkView {
  int64_t mint = 0;
  int64_t maxt = 0;
  std::span<const uint8_t> bytes;
};

class Series {
 public:
  static Series* New(uint64_t ref, uint64_t hash, std::span<const uint32_t> label_ids);
  // Frees the object and its chunk bytes (callers move chunks that readers
  // may still see to garbage first).
  static void Free(Series* s);

  uint64_t ref() const { return ref_; }
  uint64_t hash() const { return hash_; }
  int num_labels() const { return num_labels_; }
  std::span<const uint32_t> label_ids() const {
    return {reinterpret_cast<const uint32_t*>(this + 1), size_t{num_labels_} * 2};
  }
  Labels ToLabels(const SymbolTable& symbols) const;
  bool LabelsEqual(const Labels& labels, const SymbolTable& symbols) const;

  // --- appender bookkeeping ---
  // Last in-order sample committed; meaningful only once has_last is set
  // (a sample may legitimately sit at kMinTime with value bits 0, so the
  // initial values cannot double as "none").
  std::atomic<int64_t> last_t{kMinTime};
  std::atomic<uint64_t> last_v{0};
  // Appenders holding this series; a series with pending appenders is never
  // garbage-collected.
  std::atomic<uint32_t> pending{0};
  // Written to the WAL sink (guarded by the commit lock).
  bool logged = false;
  // Set (release, after last_t/last_v) by the first in-order append.
  std::atomic<bool> has_last{false};

  // --- data (see the contract above for locking) ---
  // A cut replaces the closed-chunk buffer; the old one goes to *garbage.
  void AppendInOrder(int64_t t, double v, const ChunkOptions& opts, std::vector<uint8_t*>* garbage);
  // Inserts an out-of-order sample (its timestamp must not be present).
  void InsertOoo(int64_t t, double v);
  // The stored value bits at exactly t, if any (decodes at most one chunk).
  std::optional<uint64_t> ValueBitsAt(int64_t t) const;

  bool Empty() const { return closed_.empty() && open_.num_samples() == 0 && !HasOoo(); }
  // Earliest/latest sample time (kMaxTime/kMinTime when empty).
  int64_t MinTime() const;
  int64_t MaxTime() const;
  uint64_t NumSamples() const;
  size_t NumChunks() const { return closed_.size() + (open_.num_samples() > 0 ? 1 : 0); }
  size_t NumOoo() const { return HasOoo() ? ooo_->size() : 0; }
  // Bytes owned by this series (object, labels, chunks, vectors).
  size_t MemoryBytes() const;

  // Drops chunks and OOO samples entirely before mint; freed chunk bytes go
  // to *garbage.
  void TruncateBefore(int64_t mint, std::vector<uint8_t*>* garbage);
  // Deletes samples in [mint, maxt]; rewritten chunk bytes go to *garbage.
  // Returns the number of samples deleted.
  uint64_t DeleteRange(int64_t mint, int64_t maxt, std::vector<uint8_t*>* garbage);

  // Views of chunks overlapping [mint, maxt]; the open chunk is copied into
  // *open_copy (which must not be resized while the views live).
  void Snapshot(int64_t mint, int64_t maxt, std::vector<ChunkView>* chunks,
                std::vector<uint8_t>* open_copy, std::vector<Sample>* ooo) const;
  bool HasOoo() const { return ooo_ != nullptr && !ooo_->empty(); }
  std::span<const Sample> ooo_samples() const {
    return ooo_ ? std::span<const Sample>(*ooo_) : std::span<const Sample>();
  }

  // Hints the cache to load the open chunk's tail, which the next in-order
  // append writes (at a million series it is rarely cached).
  void PrefetchOpenChunk() const {
    auto b = open_.bytes();
    if (!b.empty()) __builtin_prefetch(b.data() + b.size() - 1, 1);
  }

  // Re-encodes the open chunk as a closed chunk (no-op when empty).
  void CutOpenChunk(std::vector<uint8_t*>* garbage);

 private:
  Series(uint64_t ref, uint64_t hash, int num_labels)
      : num_labels_(static_cast<uint16_t>(num_labels)), ref_(ref), hash_(hash) {}
  ~Series();
  uint32_t* mutable_label_ids() { return reinterpret_cast<uint32_t*>(this + 1); }

  // Ordered so the object packs without padding (with the public members
  // above: 8 + 8 + 4 + 1 + 1 + 2, then 8-byte fields).
  const uint16_t num_labels_;
  const uint64_t ref_;
  const uint64_t hash_;
  int64_t open_mint_ = 0;
  chunkenc::XorAppender open_;
  ClosedChunks closed_;
  std::unique_ptr<std::vector<Sample>> ooo_;  // sorted; allocated on first use
};

// Decodes a chunk into *out (appending). Returns false on corrupt data.
bool DecodeChunk(std::span<const uint8_t> chunk, std::vector<Sample>* out);

}  // namespace gpumon::tsdb::head
