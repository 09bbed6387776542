#include "tsdb/head/closed_chunks.h"

#include <cstdlib>
#include <cstring>
#include <limits>

#include "tsdb/chunkenc/varint.h"

namespace gpumon::tsdb::head {

namespace {

using chunkenc::UvarintSize;
using chunkenc::ZigZag;

// Differences as unsigned arithmetic: head times are far from the int64
// limits, but wrap-around keeps extreme (test) values exact too.
uint64_t Diff(int64_t a, int64_t b) { return static_cast<uint64_t>(a) - static_cast<uint64_t>(b); }

uint8_t* PutUvarint(uint8_t* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<uint8_t>(v) | 0x80;
    v >>= 7;
  }
  *p++ = static_cast<uint8_t>(v);
  return p;
}

// Reads a varint the buffer's own writer produced (never corrupt).
uint64_t GetUvarint(const uint8_t** p) {
  uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    const uint8_t b = *(*p)++;
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (b < 0x80) return v;
  }
}

uint8_t* PutEntry(uint8_t* p, const ClosedChunks::Entry& e, int64_t prev_maxt) {
  p = PutUvarint(p, ZigZag(static_cast<int64_t>(Diff(e.mint, prev_maxt))));
  p = PutUvarint(p, Diff(e.maxt, e.mint));
  p = PutUvarint(p, e.num_samples);
  p = PutUvarint(p, e.bytes.size());
  if (!e.bytes.empty()) std::memcpy(p, e.bytes.data(), e.bytes.size());
  return p + e.bytes.size();
}

}  // namespace

size_t ClosedChunks::HeaderBytes(const Entry& e, int64_t prev_maxt) {
  return static_cast<size_t>(UvarintSize(ZigZag(static_cast<int64_t>(Diff(e.mint, prev_maxt)))) +
                             UvarintSize(Diff(e.maxt, e.mint)) + UvarintSize(e.num_samples) +
                             UvarintSize(e.bytes.size()));
}

void ClosedChunks::Iterator::Advance() {
  if (next_ == end_) {
    done_ = true;
    return;
  }
  const int64_t prev_maxt = cur_.maxt;  // 0 before the first entry
  const uint8_t* p = next_;
  cur_.mint = static_cast<int64_t>(static_cast<uint64_t>(prev_maxt) +
                                   static_cast<uint64_t>(chunkenc::UnZigZag(GetUvarint(&p))));
  cur_.maxt = static_cast<int64_t>(static_cast<uint64_t>(cur_.mint) + GetUvarint(&p));
  cur_.num_samples = static_cast<uint32_t>(GetUvarint(&p));
  const size_t size = GetUvarint(&p);
  cur_.bytes = {p, size};
  next_ = p + size;
}

ClosedChunks::Entry ClosedChunks::back() const {
  Entry last;
  for (Iterator it = begin(); !it.Done(); it.Advance()) last = it.Get();
  return last;
}

uint8_t* ClosedChunks::Append(const Entry& e) {
  const int64_t prev_maxt = empty() ? 0 : back().maxt;
  const size_t total = size_t{bytes_} + HeaderBytes(e, prev_maxt) + e.bytes.size();
  // A head never holds anywhere near 4 GiB of chunks for one series; the
  // limit is a caller bug, like an overfull chunk.
  if (total > std::numeric_limits<uint32_t>::max()) std::abort();
  auto* data = new uint8_t[total];
  if (bytes_ > 0) std::memcpy(data, data_, bytes_);
  PutEntry(data + bytes_, e, prev_maxt);
  uint8_t* old = data_;
  data_ = data;
  bytes_ = static_cast<uint32_t>(total);
  ++count_;
  return old;
}

uint8_t* ClosedChunks::Assign(std::span<const Entry> entries) {
  size_t total = 0;
  int64_t prev_maxt = 0;
  for (const Entry& e : entries) {
    total += HeaderBytes(e, prev_maxt) + e.bytes.size();
    prev_maxt = e.maxt;
  }
  if (total > std::numeric_limits<uint32_t>::max()) std::abort();
  uint8_t* data = nullptr;
  if (total > 0) {
    data = new uint8_t[total];
    uint8_t* p = data;
    prev_maxt = 0;
    for (const Entry& e : entries) {
      p = PutEntry(p, e, prev_maxt);
      prev_maxt = e.maxt;
    }
  }
  uint8_t* old = data_;
  data_ = data;
  bytes_ = static_cast<uint32_t>(total);
  count_ = static_cast<uint32_t>(entries.size());
  return old;
}

}  // namespace gpumon::tsdb::head
