// ClosedChunks: the closed (immutable) chunks of one head series, kept in a
// single heap allocation of exactly the bytes they need.
//
// Why: at a million series with a full two-hour head, one allocation per
// chunk plus a vector of chunk records cost more in allocator headers,
// rounding and capacity slack than the compressed samples themselves.
//
// Contract:
// - Layout of the buffer: the chunks in time order, each an entry header of
//   four varints {mint - previous entry's maxt (zigzag; 0 before the first
//   entry), maxt - mint, num_samples, size} (8-12 bytes for a head chunk,
//   at most kMaxHeaderBytes) followed by its `size` chunk bytes
//   (docs/tsdb-head.md). The buffer is exactly the sum of the entries.
// - Entries need mint <= maxt, and mint > the previous entry's maxt.
// - Mutations never write to bytes a reader may hold: they build a new
//   buffer and return the old one, which the caller must free with
//   delete[] once no snapshot can still point into it (the head's epochs).
//   Spans from Entry stay valid until then.
// - Not synchronized: the head serializes mutations against snapshots.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace gpumon::tsdb::head {

class ClosedChunks {
 public:
  struct Entry {
    int64_t mint = 0;
    int64_t maxt = 0;
    uint32_t num_samples = 0;
    std::span<const uint8_t> bytes;
  };

  // Forward iteration over the entries (headers are delta-coded, so only
  // forward).
  class Iterator {
   public:
    Iterator(const uint8_t* p, const uint8_t* end) : next_(p), end_(end) { Advance(); }
    bool Done() const { return done_; }
    const Entry& Get() const { return cur_; }
    void Advance();

   private:
    const uint8_t* next_;
    const uint8_t* end_;
    Entry cur_;
    bool done_ = false;
  };

  static constexpr size_t kMaxHeaderBytes = 10 + 10 + 5 + 5;
  // Header bytes of entry e after an entry ending at prev_maxt (0 for the
  // first entry).
  static size_t HeaderBytes(const Entry& e, int64_t prev_maxt);

  ClosedChunks() = default;
  ~ClosedChunks() { delete[] data_; }
  ClosedChunks(const ClosedChunks&) = delete;
  ClosedChunks& operator=(const ClosedChunks&) = delete;

  bool empty() const { return count_ == 0; }
  size_t size() const { return count_; }
  Iterator begin() const { return Iterator(data_, data_ + bytes_); }
  Entry front() const { return begin().Get(); }
  Entry back() const;
  // Bytes of the buffer (headers and chunks).
  size_t buffer_bytes() const { return bytes_; }

  // Adds a chunk after every held one (mint > back().maxt). Returns the
  // replaced buffer (nullptr when there was none).
  [[nodiscard]] uint8_t* Append(const Entry& e);
  // Replaces the whole list by `entries` (in time order; their bytes may
  // point into the current buffer). Returns the replaced buffer.
  [[nodiscard]] uint8_t* Assign(std::span<const Entry> entries);

 private:
  uint8_t* data_ = nullptr;
  uint32_t bytes_ = 0;
  uint32_t count_ = 0;
};

}  // namespace gpumon::tsdb::head
