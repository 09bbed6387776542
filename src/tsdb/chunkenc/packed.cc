#include "tsdb/chunkenc/packed.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>

#include "tsdb/chunkenc/bitstream.h"
#include "tsdb/chunkenc/chunk.h"
#include "tsdb/chunkenc/chunk_iterator.h"
#include "tsdb/chunkenc/decimal.h"
#include "tsdb/chunkenc/int_stream.h"
#include "tsdb/chunkenc/varint.h"
#include "tsdb/chunkenc/xor_coder.h"

namespace gpumon::tsdb::chunkenc {

namespace {

// The layout byte after the sample count: value mode, whether decimal
// exceptions follow, and the decimal scale.
constexpr uint8_t kHasExceptions = 4;
uint8_t LayoutByte(int mode, bool exceptions, int scale) {
  return static_cast<uint8_t>(mode | (exceptions ? kHasExceptions : 0) | scale << 3);
}

uint64_t Bits(double v) { return std::bit_cast<uint64_t>(v); }

void PutFixed64(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

uint64_t GetFixed64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

// The XOR value column, written or (with a BitCounter) sized.
template <typename Writer>
void PutXorValues(std::span<const Sample> samples, Writer& w) {
  uint64_t prev = Bits(samples[0].v);
  w.WriteBits(prev, 64);
  XorWindow window;
  for (size_t i = 1; i < samples.size(); ++i) PutXorValue(w, Bits(samples[i].v), &prev, &window);
}

// Appends the decimal column at scale k and returns its layout byte.
// Values that m / 10^k cannot reproduce become exceptions; their slots
// repeat a neighbour's m so that they cost nothing in the integer stream.
uint8_t EncodeDecimalValues(std::span<const Sample> samples, int k, int min_order, int max_order,
                            int kind, std::vector<uint8_t>& out) {
  const int n = static_cast<int>(samples.size());
  std::vector<int64_t> m(static_cast<size_t>(n));
  std::vector<int> exceptions;
  for (int i = 0; i < n; ++i) {
    if (!DecimalAt(samples[i].v, k, &m[i])) exceptions.push_back(i);
  }
  if (!exceptions.empty()) {
    size_t e = 0;
    int first_real = -1;
    for (int i = 0; i < n; ++i) {
      if (e < exceptions.size() && exceptions[e] == i) {
        ++e;
        if (first_real >= 0) m[i] = m[i - 1];
      } else if (first_real < 0) {
        first_real = i;
        for (int j = 0; j < i; ++j) m[j] = m[i];  // leading exceptions
      }
    }
    if (first_real < 0) std::fill(m.begin(), m.end(), 0);
    PutUvarint(out, exceptions.size());
    int prev = -1;
    for (int i : exceptions) {
      PutUvarint(out, static_cast<uint64_t>(i - prev - 1));
      PutFixed64(out, Bits(samples[i].v));
      prev = i;
    }
  }
  EncodeIntStreamBest(m, min_order, max_order, out, kind);
  return LayoutByte(kValueDecimal, !exceptions.empty(), k);
}

struct Best {
  std::vector<uint8_t> bytes;
  uint8_t layout = 0;
  bool have = false;

  void Offer(std::vector<uint8_t>& candidate, uint8_t candidate_layout) {
    if (!have || candidate.size() < bytes.size()) {
      bytes.swap(candidate);
      layout = candidate_layout;
      have = true;
    }
    candidate.clear();
  }
};

}  // namespace

Result<std::vector<uint8_t>> EncodePacked(std::span<const Sample> samples,
                                          const PackedOptions& options) {
  const int n = static_cast<int>(samples.size());
  if (n < 1 || n > kMaxSamples) return Status::Error("packed chunk needs 1 to 65535 samples");
  std::vector<uint8_t> out;
  out.reserve(32 + samples.size());
  out.push_back(static_cast<uint8_t>(Encoding::kPacked));
  PutUvarint(out, static_cast<uint64_t>(n));
  const size_t layout_at = out.size();
  out.push_back(0);

  std::vector<int64_t> ts(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) ts[i] = samples[i].t;
  const int ts_min = options.ts_order >= 0 ? options.ts_order : 1;
  const int ts_max = options.ts_order >= 0 ? options.ts_order : kLinear;
  EncodeIntStreamBest(ts, ts_min, ts_max, out, options.ts_kind);

  Best best;
  std::vector<uint8_t> candidate;
  const uint64_t first = Bits(samples[0].v);
  const bool constant = std::all_of(samples.begin(), samples.end(),
                                    [&](const Sample& s) { return Bits(s.v) == first; });
  const int mode = options.value_mode;
  if (mode == kValueConst || (mode < 0 && constant)) {
    if (!constant) return Status::Error("values are not constant");
    PutFixed64(candidate, first);
    best.Offer(candidate, LayoutByte(kValueConst, false, 0));
  }
  const int min_order = options.value_order >= 0 ? options.value_order : 0;
  const int max_order = options.value_order >= 0 ? options.value_order : kMaxOrder;
  if (mode == kValueDecimal && options.scale >= 0) {
    const uint8_t layout = EncodeDecimalValues(samples, std::min(options.scale, kMaxScale),
                                               min_order, max_order, options.value_kind, candidate);
    best.Offer(candidate, layout);
  } else if (mode == kValueDecimal || mode < 0) {
    // Candidate scales: each value's smallest one. A scale leaves the values
    // that need a larger one (or none) as exceptions, 9+ bytes each, so
    // scales with many of them cannot win and are not tried.
    int counts[kMaxScale + 2] = {};
    for (const Sample& s : samples) ++counts[MinDecimalScale(s.v) + 1];
    int fitting = 0;
    for (int k = 0; k <= kMaxScale; ++k) {
      if (counts[k + 1] == 0) continue;
      fitting += counts[k + 1];
      if (mode < 0 && (n - fitting) * 4 > n) continue;
      const uint8_t layout =
          EncodeDecimalValues(samples, k, min_order, max_order, options.value_kind, candidate);
      best.Offer(candidate, layout);
    }
    if (mode == kValueDecimal && !best.have) {  // nothing decimal: all exceptions
      const uint8_t layout =
          EncodeDecimalValues(samples, 0, min_order, max_order, options.value_kind, candidate);
      best.Offer(candidate, layout);
    }
  }
  if (mode == kValueXor || mode < 0) {
    BitCounter counter;
    PutXorValues(samples, counter);
    if (!best.have || (counter.bits + 7) / 8 < best.bytes.size()) {
      uint8_t bit_pos = 0;
      BitWriter w(candidate, bit_pos);
      PutXorValues(samples, w);
      best.Offer(candidate, LayoutByte(kValueXor, false, 0));
    }
  }
  out[layout_at] = best.layout;
  out.insert(out.end(), best.bytes.begin(), best.bytes.end());
  return out;
}

namespace {

// A parsed kPacked header: where each column starts, validated so that the
// integer streams decode without further checks.
struct Parsed {
  int n = 0;
  int value_mode = 0;
  IntStreamReader ts;
  const uint8_t* values = nullptr;  // value column
  const uint8_t* end = nullptr;
  uint64_t const_bits = 0;
  int exceptions = 0;
  int scale = 0;
  const uint8_t* exception_data = nullptr;
  IntStreamReader ints;
};

Status Parse(std::span<const uint8_t> chunk, Parsed* out) {
  const uint8_t* p = chunk.data() + 1;
  const uint8_t* end = chunk.data() + chunk.size();
  out->end = end;
  uint64_t n;
  if (!GetUvarint(&p, end, &n)) return Status::Error("corrupt chunk: truncated header");
  if (n < 1 || n > kMaxSamples) return Status::Error("corrupt chunk: bad sample count");
  out->n = static_cast<int>(n);
  if (p == end) return Status::Error("corrupt chunk: truncated header");
  const uint8_t layout = *p++;
  out->value_mode = layout & 3;
  out->scale = layout >> 3;
  const bool has_exceptions = (layout & kHasExceptions) != 0;
  if (out->value_mode != kValueDecimal && (layout & ~3) != 0) {
    return Status::Error("corrupt chunk: bad layout byte");
  }
  if (!out->ts.Init(&p, end, out->n)) return Status::Error("corrupt chunk: bad timestamp column");
  out->values = p;
  switch (out->value_mode) {
    case kValueXor:
      return Status::Ok();
    case kValueConst:
      if (end - p != 8) return Status::Error("corrupt chunk: bad constant length");
      out->const_bits = GetFixed64(p);
      return Status::Ok();
    case kValueDecimal: {
      if (out->scale > kMaxScale) return Status::Error("corrupt chunk: bad decimal scale");
      uint64_t count = 0;
      if (has_exceptions && (!GetUvarint(&p, end, &count) || count == 0 || count > n)) {
        return Status::Error("corrupt chunk: bad exception count");
      }
      out->exceptions = static_cast<int>(count);
      out->exception_data = p;
      int64_t index = -1;
      for (uint64_t i = 0; i < count; ++i) {
        uint64_t gap;
        if (!GetUvarint(&p, end, &gap) || gap >= n || end - p < 8) {
          return Status::Error("corrupt chunk: bad exception");
        }
        index += static_cast<int64_t>(gap) + 1;
        if (index >= static_cast<int64_t>(n)) return Status::Error("corrupt chunk: bad exception");
        p += 8;
      }
      if (!out->ints.Init(&p, end, out->n)) return Status::Error("corrupt chunk: bad value column");
      if (p != end) return Status::Error("corrupt chunk: trailing bytes");
      return Status::Ok();
    }
    default:
      return Status::Error("corrupt chunk: unknown value mode");
  }
}

class PackedIterator final : public ChunkIterator {
 public:
  explicit PackedIterator(std::span<const uint8_t> chunk) {
    Status s = Parse(chunk, &c_);
    if (!s.ok()) {
      c_.n = 0;
      Fail(s.message().substr(std::string("corrupt chunk: ").size()));
      return;
    }
    if (c_.value_mode == kValueXor) reader_ = BitReader(c_.values, c_.end);
    exception_ptr_ = c_.exception_data;
    NextException();
    arithmetic_ = Arithmetic();
  }

 protected:
  int Fill() override {
    if (decoded_ >= c_.n || failed()) return 0;
    // SkipBefore may have decoded this block's timestamps already.
    const int take = pending_ > 0 ? pending_ : std::min(kBlock, c_.n - decoded_);
    if (pending_ == 0 && !ReadTimestamps(take)) return 0;
    pending_ = 0;
    switch (c_.value_mode) {
      case kValueConst:
        std::fill(vs_, vs_ + take, c_.const_bits);
        break;
      case kValueXor:
        for (int j = 0; j < take; ++j) {
          const bool ok = decoded_ + j == 0 ? reader_.ReadBits(64, &prev_bits_)
                                            : GetXorValue(reader_, &prev_bits_, &window_);
          if (!ok) {
            Fail("bad value at sample " + std::to_string(decoded_ + j));
            return 0;
          }
          vs_[j] = prev_bits_;
        }
        break;
      default: {
        int64_t m[kBlock];
        if (!c_.ints.Read(take, m)) {
          Fail("bad value column");
          return 0;
        }
        const double scale = Pow10(c_.scale);
        for (int j = 0; j < take; ++j) {
          vs_[j] = std::bit_cast<uint64_t>(static_cast<double>(m[j]) / scale);
        }
        while (next_exception_ < decoded_ + take) {
          vs_[next_exception_ - decoded_] = exception_bits_;
          NextException();
        }
      }
    }
    decoded_ += take;
    return take;
  }

  // Steps the value column over the samples before t. Regular timestamps
  // (first + i * step) give the index of the first sample at or after t
  // directly; otherwise timestamps are decoded block by block and the
  // first block reaching t is left pending for Fill.
  void SkipBefore(int64_t t) override {
    if (pending_ > 0 || failed()) return;
    if (arithmetic_) {
      const int skip = FirstAtOrAfter(t) - decoded_;
      if (skip <= 0) return;
      // The timestamp column is not read again (ReadTimestamps computes
      // regular times), so only the value column moves.
      if (!SkipValues(skip)) return;
      decoded_ += skip;
      last_t_ = static_cast<int64_t>(first_t_ + step_t_ * static_cast<uint64_t>(decoded_ - 1));
      return;
    }
    while (decoded_ < c_.n) {
      const int take = std::min(kBlock, c_.n - decoded_);
      if (!ReadTimestamps(take)) return;
      if (ts_[take - 1] >= t) {
        pending_ = take;
        return;
      }
      if (!SkipValues(take)) return;
      decoded_ += take;
    }
  }

 private:
  // Whether the timestamps are first + i * step with step > 0 and the last
  // one within int64: then they increase, so they need no decoding to be
  // checked or searched.
  bool Arithmetic() {
    if (!c_.ts.Arithmetic(&first_t_, &step_t_)) return false;
    if (c_.n == 1) return true;
    const int64_t step = static_cast<int64_t>(step_t_);
    int64_t span, last;
    return step > 0 && !__builtin_mul_overflow(step, int64_t{c_.n - 1}, &span) &&
           !__builtin_add_overflow(static_cast<int64_t>(first_t_), span, &last);
  }

  // The index of the first sample with time >= t (n when there is none);
  // only for arithmetic timestamps.
  int FirstAtOrAfter(int64_t t) const {
    const int64_t first = static_cast<int64_t>(first_t_);
    if (t <= first) return 0;
    if (c_.n == 1) return 1;
    const uint64_t offset = static_cast<uint64_t>(t) - first_t_;  // exact: t > first
    const uint64_t index = offset / step_t_ + (offset % step_t_ != 0 ? 1 : 0);
    return index >= static_cast<uint64_t>(c_.n) ? c_.n : static_cast<int>(index);
  }

  bool ReadTimestamps(int take) {
    if (arithmetic_) {  // checked to increase by Arithmetic()
      uint64_t t = first_t_ + step_t_ * static_cast<uint64_t>(decoded_);
      for (int j = 0; j < take; ++j, t += step_t_) ts_[j] = static_cast<int64_t>(t);
      last_t_ = ts_[take - 1];
      return true;
    }
    if (!c_.ts.Read(take, ts_)) return Fail("bad timestamp column");
    for (int j = 0; j < take; ++j) {
      if (ts_[j] <= last_t_ && decoded_ + j > 0) {
        return Fail("timestamps not increasing at sample " + std::to_string(decoded_ + j));
      }
      last_t_ = ts_[j];
    }
    return true;
  }

  // Advances the value column past `take` samples without producing them.
  bool SkipValues(int take) {
    switch (c_.value_mode) {
      case kValueConst:
        return true;
      case kValueXor:
        for (int j = 0; j < take; ++j) {
          const bool ok = decoded_ + j == 0 ? reader_.ReadBits(64, &prev_bits_)
                                            : GetXorValue(reader_, &prev_bits_, &window_);
          if (!ok) return Fail("bad value at sample " + std::to_string(decoded_ + j));
        }
        return true;
      default:
        if (!c_.ints.Skip(take)) return Fail("bad value column");
        while (next_exception_ < decoded_ + take) NextException();
        return true;
    }
  }

  // Moves to the next exception (validated by Parse), or past the end.
  void NextException() {
    if (exceptions_read_ >= c_.exceptions) {
      next_exception_ = kMaxSamples + 1;
      return;
    }
    uint64_t gap = 0;
    GetUvarint(&exception_ptr_, c_.end, &gap);
    next_exception_ += static_cast<int>(gap) + 1;
    exception_bits_ = GetFixed64(exception_ptr_);
    exception_ptr_ += 8;
    ++exceptions_read_;
  }

  // Ordered to pack (see IntStreamReader).
  Parsed c_;
  BitReader reader_;
  uint64_t prev_bits_ = 0;
  const uint8_t* exception_ptr_ = nullptr;
  uint64_t exception_bits_ = 0;
  uint64_t first_t_ = 0;
  uint64_t step_t_ = 0;
  int64_t last_t_ = 0;
  int exceptions_read_ = 0;
  int next_exception_ = -1;
  int decoded_ = 0;  // samples decoded so far
  int pending_ = 0;  // timestamps of the next block already in ts_
  XorWindow window_;
  bool arithmetic_ = false;
};

}  // namespace

std::unique_ptr<ChunkIterator> NewPackedIterator(std::span<const uint8_t> chunk) {
  return std::make_unique<PackedIterator>(chunk);
}

Result<int> PackedSampleCount(std::span<const uint8_t> chunk) {
  const uint8_t* p = chunk.data() + 1;
  uint64_t n;
  if (!GetUvarint(&p, chunk.data() + chunk.size(), &n)) {
    return Status::Error("corrupt chunk: truncated header");
  }
  if (n < 1 || n > kMaxSamples) return Status::Error("corrupt chunk: bad sample count");
  return static_cast<int>(n);
}

Result<PackedLayout> DescribePacked(std::span<const uint8_t> chunk) {
  if (chunk.empty() || chunk[0] != static_cast<uint8_t>(Encoding::kPacked)) {
    return Status::Error("not a packed chunk");
  }
  Parsed c;
  Status s = Parse(chunk, &c);
  if (!s.ok()) return s;
  PackedLayout layout;
  layout.samples = c.n;
  layout.ts_order = c.ts.order();
  layout.ts_kind = static_cast<int>(c.ts.kind());
  layout.value_mode = c.value_mode;
  if (c.value_mode == kValueDecimal) {
    layout.value_order = c.ints.order();
    layout.value_kind = static_cast<int>(c.ints.kind());
    layout.scale = c.scale;
    layout.exceptions = c.exceptions;
  }
  return layout;
}

}  // namespace gpumon::tsdb::chunkenc
