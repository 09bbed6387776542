// ClosedChunks: the closed (immutable) chunks of one head series, kept in a
// single heap allocation of exactly the bytes they need.
//
// Why: at a million series with a full two-hour head, one allocation per
// chunk plus a vector of chunk records cost more in allocator headers,
// rounding and capacity slack than the compressed samples themselves.
//
// Contract:
// - Layout of the buffer: the chunks in time order, each an entry header
//   {mint int64, maxt int64, num_samples uint16, size uint32} (22 bytes,
//   native byte order, unaligned) followed by its `size` chunk bytes
//   (docs/tsdb-head.md). The buffer is exactly the sum of the entries.
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

  // Forward iteration over the entries.
  class Iterator {
   public:
    Iterator(const uint8_t* p, const uint8_t* end) : p_(p), end_(end) {}
    bool Done() const { return p_ == end_; }
    Entry Get() const;
    void Advance();

   private:
    const uint8_t* p_;
    const uint8_t* end_;
  };

  static constexpr size_t kHeaderBytes = 22;

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
