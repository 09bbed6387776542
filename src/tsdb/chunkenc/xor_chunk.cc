#include "tsdb/chunkenc/xor_chunk.h"

#include <algorithm>
#include <bit>
#include <cstdlib>

#include "tsdb/chunkenc/bitstream.h"
#include "tsdb/chunkenc/chunk.h"
#include "tsdb/chunkenc/chunk_iterator.h"
#include "tsdb/chunkenc/varint.h"
#include "tsdb/chunkenc/xor_coder.h"

namespace gpumon::tsdb::chunkenc {

namespace {

// Coder state between samples: what XorAppender keeps in its members.
struct XorState {
  int64_t t = 0;
  int64_t delta = 0;
  uint64_t v = 0;
  XorWindow window;
};

// Codes sample `index` of a chunk; one template for writing and for
// counting, so that sizes computed ahead are exact.
template <typename Writer>
void PutSample(Writer& w, int index, int64_t t, uint64_t bits, XorState* s) {
  // Timestamp arithmetic is modulo 2^64, so any strictly increasing pair of
  // int64 times (even INT64_MIN then INT64_MAX) round-trips.
  if (index == 0) {
    PutBitsUvarint(w, ZigZag(t));
    w.WriteBits(bits, 64);
    s->v = bits;
  } else {
    const uint64_t delta = static_cast<uint64_t>(t) - static_cast<uint64_t>(s->t);
    if (index == 1) {
      PutBitsUvarint(w, delta);
    } else {
      PutDod(w, static_cast<int64_t>(delta - static_cast<uint64_t>(s->delta)));
    }
    s->delta = static_cast<int64_t>(delta);
    PutXorValue(w, bits, &s->v, &s->window);
  }
  s->t = t;
}

}  // namespace

namespace {

// Most bytes one Append can add: a 10-byte varint and 64 value bits for the
// first sample; later ones at most 68 + 77 bits, or a 10-byte varint and 77
// bits for the second.
constexpr size_t kMaxAppendBytes = 24;

// The largest capacity glibc's malloc returns for a request of `want` bytes
// (16-byte granules with an 8-byte header).
size_t AllocatorFit(size_t want) { return ((want + 8 + 15) & ~size_t{15}) - 8; }

}  // namespace

XorAppender::XorAppender() {
  bytes_.reserve(AllocatorFit(kXorHeaderBytes + kMaxAppendBytes));
  bytes_.assign({static_cast<uint8_t>(Encoding::kXor), 0, 0});
}

void XorAppender::Reserve() {
  const size_t size = bytes_.size();
  if (bytes_.capacity() - size >= kMaxAppendBytes) return;
  bytes_.reserve(AllocatorFit(size + std::max(kMaxAppendBytes, size / 4)));
}

void XorAppender::Append(int64_t t, double v) {
  if (full()) std::abort();  // a caller bug: the count field would overflow
  Reserve();
  BitWriter w(bytes_, bit_pos_);
  XorState s{t_, t_delta_, v_bits_, XorWindow{leading_, trailing_}};
  PutSample(w, num_samples_, t, std::bit_cast<uint64_t>(v), &s);
  t_ = s.t;
  t_delta_ = s.delta;
  v_bits_ = s.v;
  leading_ = s.window.leading;
  trailing_ = s.window.trailing;
  ++num_samples_;
  bytes_[1] = static_cast<uint8_t>(num_samples_ >> 8);
  bytes_[2] = static_cast<uint8_t>(num_samples_);
}

std::vector<uint8_t> EncodeXor(std::span<const Sample> samples) {
  XorAppender app;
  for (const Sample& s : samples) app.Append(s.t, s.v);
  auto bytes = app.bytes();
  return std::vector<uint8_t>(bytes.begin(), bytes.end());
}

size_t XorChunkSize(std::span<const Sample> samples) {
  BitCounter counter;
  XorState state;
  for (size_t i = 0; i < samples.size(); ++i) {
    PutSample(counter, static_cast<int>(i), samples[i].t, std::bit_cast<uint64_t>(samples[i].v),
              &state);
  }
  return kXorHeaderBytes + static_cast<size_t>((counter.bits + 7) / 8);
}

Result<int> XorSampleCount(std::span<const uint8_t> chunk) {
  if (chunk.size() < kXorHeaderBytes) return Status::Error("corrupt chunk: truncated header");
  return (chunk[1] << 8) | chunk[2];
}

namespace {

class XorIterator final : public ChunkIterator {
 public:
  explicit XorIterator(std::span<const uint8_t> chunk) {
    if (chunk.size() < kXorHeaderBytes) {
      Fail("truncated header");
      return;
    }
    n_ = (chunk[1] << 8) | chunk[2];
    reader_ = BitReader(chunk.data() + kXorHeaderBytes, chunk.data() + chunk.size());
  }

 protected:
  int Fill() override {
    int count = 0;
    while (count < kBlock && i_ < n_ && !failed()) {
      if (!DecodeOne()) break;
      ts_[count] = t_;
      vs_[count] = v_;
      ++count;
    }
    return count;
  }

 private:
  bool DecodeOne() {
    if (i_ == 0) {
      uint64_t zt;
      if (!GetBitsUvarint(reader_, &zt) || !reader_.ReadBits(64, &v_)) {
        return Fail("truncated first sample");
      }
      t_ = UnZigZag(zt);
    } else {
      uint64_t delta;
      if (i_ == 1) {
        if (!GetBitsUvarint(reader_, &delta)) return Fail("truncated timestamp delta");
      } else {
        int64_t dod;
        if (!GetDod(reader_, &dod)) return Fail("truncated timestamp");
        delta = delta_ + static_cast<uint64_t>(dod);
      }
      const int64_t t = static_cast<int64_t>(static_cast<uint64_t>(t_) + delta);
      if (t <= t_) return Fail("timestamps not increasing at sample " + std::to_string(i_));
      if (!GetXorValue(reader_, &v_, &window_)) {
        return Fail("bad value at sample " + std::to_string(i_));
      }
      t_ = t;
      delta_ = delta;
    }
    ++i_;
    return true;
  }

  BitReader reader_;
  int n_ = 0;
  int i_ = 0;
  int64_t t_ = 0;
  uint64_t delta_ = 0;
  uint64_t v_ = 0;
  XorWindow window_;
};

}  // namespace

std::unique_ptr<ChunkIterator> NewXorIterator(std::span<const uint8_t> chunk) {
  return std::make_unique<XorIterator>(chunk);
}

}  // namespace gpumon::tsdb::chunkenc
