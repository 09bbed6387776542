#include "tsdb/head/closed_chunks.h"

#include <cstdlib>
#include <cstring>
#include <limits>

namespace gpumon::tsdb::head {

namespace {

uint8_t* PutEntry(uint8_t* p, const ClosedChunks::Entry& e) {
  const auto n = static_cast<uint16_t>(e.num_samples);
  const auto size = static_cast<uint32_t>(e.bytes.size());
  std::memcpy(p, &e.mint, 8);
  std::memcpy(p + 8, &e.maxt, 8);
  std::memcpy(p + 16, &n, 2);
  std::memcpy(p + 18, &size, 4);
  if (size > 0) std::memcpy(p + ClosedChunks::kHeaderBytes, e.bytes.data(), size);
  return p + ClosedChunks::kHeaderBytes + size;
}

}  // namespace

ClosedChunks::Entry ClosedChunks::Iterator::Get() const {
  Entry e;
  uint16_t n;
  uint32_t size;
  std::memcpy(&e.mint, p_, 8);
  std::memcpy(&e.maxt, p_ + 8, 8);
  std::memcpy(&n, p_ + 16, 2);
  std::memcpy(&size, p_ + 18, 4);
  e.num_samples = n;
  e.bytes = {p_ + kHeaderBytes, size};
  return e;
}

void ClosedChunks::Iterator::Advance() {
  uint32_t size;
  std::memcpy(&size, p_ + 18, 4);
  p_ += kHeaderBytes + size;
}

ClosedChunks::Entry ClosedChunks::back() const {
  Entry last;
  for (Iterator it = begin(); !it.Done(); it.Advance()) last = it.Get();
  return last;
}

uint8_t* ClosedChunks::Append(const Entry& e) {
  const size_t total = size_t{bytes_} + kHeaderBytes + e.bytes.size();
  // A head never holds anywhere near 4 GiB of chunks for one series; the
  // limit is a caller bug, like an overfull chunk.
  if (total > std::numeric_limits<uint32_t>::max()) std::abort();
  auto* data = new uint8_t[total];
  if (bytes_ > 0) std::memcpy(data, data_, bytes_);
  PutEntry(data + bytes_, e);
  uint8_t* old = data_;
  data_ = data;
  bytes_ = static_cast<uint32_t>(total);
  ++count_;
  return old;
}

uint8_t* ClosedChunks::Assign(std::span<const Entry> entries) {
  size_t total = 0;
  for (const Entry& e : entries) total += kHeaderBytes + e.bytes.size();
  if (total > std::numeric_limits<uint32_t>::max()) std::abort();
  uint8_t* data = nullptr;
  if (total > 0) {
    data = new uint8_t[total];
    uint8_t* p = data;
    for (const Entry& e : entries) p = PutEntry(p, e);
  }
  uint8_t* old = data_;
  data_ = data;
  bytes_ = static_cast<uint32_t>(total);
  count_ = static_cast<uint32_t>(entries.size());
  return old;
}

}  // namespace gpumon::tsdb::head
