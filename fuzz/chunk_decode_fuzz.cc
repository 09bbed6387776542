// Fuzz target for the chunk decoders (src/tsdb/chunkenc): any byte string
// given to NewIterator/CountSamples must decode or stop with an error —
// never crash, hang or read out of bounds — and what decodes must keep the
// iterator contract (strictly increasing times, as many samples as the
// header says) and survive re-encoding bit for bit. The same bytes, read
// as (time delta, value bits) records, also drive the encoders.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

#include "tsdb/chunkenc/chunk.h"
#include "tsdb/chunkenc/packed.h"

namespace {

using gpumon::tsdb::Sample;
namespace chunkenc = gpumon::tsdb::chunkenc;

bool Same(const Sample& a, const Sample& b) {
  return a.t == b.t && std::bit_cast<uint64_t>(a.v) == std::bit_cast<uint64_t>(b.v);
}

// Decodes a chunk, checking the contract; returns false on a decode error.
bool Decode(std::span<const uint8_t> chunk, std::vector<Sample>* out) {
  out->clear();
  auto it = chunkenc::NewIterator(chunk);
  while (it->Next()) {
    if (out->size() >= static_cast<size_t>(chunkenc::kMaxSamples)) std::abort();
    const Sample s = it->At();
    if (!out->empty() && s.t <= out->back().t) std::abort();  // times must increase
    out->push_back(s);
  }
  if (it->Next()) std::abort();  // exhausted stays exhausted
  if (!it->status().ok()) {
    if (it->status().message().empty()) std::abort();
    return false;
  }
  return true;
}

void ExpectRoundTrip(std::span<const uint8_t> chunk, const std::vector<Sample>& want) {
  std::vector<Sample> got;
  if (!Decode(chunk, &got) || got.size() != want.size()) std::abort();
  for (size_t i = 0; i < want.size(); ++i) {
    if (!Same(got[i], want[i])) std::abort();
  }
  auto count = chunkenc::CountSamples(chunk);
  if (!count.ok() || static_cast<size_t>(count.value()) != want.size()) std::abort();
}

void CheckEncoders(const std::vector<Sample>& samples, uint8_t selector) {
  if (samples.empty()) return;
  ExpectRoundTrip(chunkenc::EncodeXor(samples), samples);
  const auto best = chunkenc::EncodeBest(samples);
  ExpectRoundTrip(best, samples);
  if (best.size() > chunkenc::EncodeXor(samples).size()) std::abort();
  chunkenc::PackedOptions o;
  o.ts_order = selector % 5 - 1;
  o.ts_kind = (selector >> 2) % 3 - 1;
  o.value_mode = (selector >> 4) & 1 ? chunkenc::kValueDecimal : chunkenc::kValueXor;
  o.value_order = (selector >> 5) % 5 - 1;
  o.value_kind = (selector >> 6) % 3 - 1;
  o.scale = selector % 20 - 1;
  auto forced = chunkenc::EncodePacked(samples, o);
  if (!forced.ok()) std::abort();
  ExpectRoundTrip(forced.value(), samples);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> chunk(data, size);
  auto count = chunkenc::CountSamples(chunk);
  std::vector<Sample> samples;
  if (Decode(chunk, &samples)) {
    if (!count.ok() || static_cast<size_t>(count.value()) != samples.size()) std::abort();
    // Seek lands on each sample's own time.
    if (!samples.empty()) {
      auto it = chunkenc::NewIterator(chunk);
      const Sample& mid = samples[samples.size() / 2];
      if (!it->Seek(mid.t) || !Same(it->At(), mid)) std::abort();
    }
    CheckEncoders(samples, size > 0 ? data[size - 1] : 0);
  }

  // The bytes as 16-byte records: a time delta (kept positive and
  // overflow-free) and raw value bits.
  if (size >= 17) {
    std::vector<Sample> records;
    int64_t t = 0;
    std::memcpy(&t, data + 1, 8);
    t >>= 2;  // leaves room for the deltas below
    for (size_t at = 1; at + 16 <= size && records.size() < 2000; at += 16) {
      uint64_t delta, bits;
      std::memcpy(&delta, data + at, 8);
      std::memcpy(&bits, data + at + 8, 8);
      if (!records.empty()) t += 1 + static_cast<int64_t>(delta % (uint64_t{1} << (data[0] % 40)));
      records.push_back({t, std::bit_cast<double>(bits)});
    }
    CheckEncoders(records, data[0]);
  }
  return 0;
}
