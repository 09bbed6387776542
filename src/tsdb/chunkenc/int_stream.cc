#include "tsdb/chunkenc/int_stream.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <numeric>
#include <utility>

#include "tsdb/chunkenc/varint.h"

namespace gpumon::tsdb::chunkenc {

namespace {

constexpr int kSymbols = kHuffmanSymbols;

uint64_t Mask(int width) { return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1; }

// LSB-first bit packer appending whole bytes to a vector.
class Packer {
 public:
  explicit Packer(std::vector<uint8_t>& out) : out_(out) {}
  void Put(uint64_t v, int width) {
    while (width > 0) {
      const int take = width < 56 ? width : 56;  // keeps nbits_ + take < 64
      acc_ |= (v & Mask(take)) << nbits_;
      nbits_ += take;
      v >>= take;
      width -= take;
      while (nbits_ >= 8) {
        out_.push_back(static_cast<uint8_t>(acc_));
        acc_ >>= 8;
        nbits_ -= 8;
      }
    }
  }
  void Flush() {
    if (nbits_ > 0) out_.push_back(static_cast<uint8_t>(acc_));
    acc_ = 0;
    nbits_ = 0;
  }

 private:
  std::vector<uint8_t>& out_;
  uint64_t acc_ = 0;
  int nbits_ = 0;
};

uint64_t Load64(const uint8_t* p, const uint8_t* end) {
  uint64_t word = 0;
  if (end - p >= 8) {
    if constexpr (std::endian::native == std::endian::little) {
      std::memcpy(&word, p, 8);
      return word;
    }
    for (int i = 0; i < 8; ++i) word |= static_cast<uint64_t>(p[i]) << (8 * i);
    return word;
  }
  for (int i = 0; p + i < end; ++i) word |= static_cast<uint64_t>(p[i]) << (8 * i);
  return word;
}

// Values stored in the header before the residuals.
int Leading(int order) { return order == kLinear ? 1 : order; }

// The slope of the line through the first and the last value (modulo
// 2^64; truncated towards zero).
uint64_t LinearStep(std::span<const int64_t> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  if (n < 2) return 0;
  const int64_t span =
      static_cast<int64_t>(static_cast<uint64_t>(values[n - 1]) - static_cast<uint64_t>(values[0]));
  return static_cast<uint64_t>(span / (n - 1));
}

// Residuals of the given order, modulo 2^64.
std::vector<uint64_t> Residuals(std::span<const int64_t> values, int order) {
  const int n = static_cast<int>(values.size());
  auto u = [&](int i) { return static_cast<uint64_t>(values[i]); };
  std::vector<uint64_t> r(static_cast<size_t>(std::max(0, n - Leading(order))));
  const uint64_t step = order == kLinear ? LinearStep(values) : 0;
  for (int i = 0; i < static_cast<int>(r.size()); ++i) {
    const int j = i + Leading(order);
    switch (order) {
      case 0:
        r[i] = u(j);
        break;
      case 1:
        r[i] = u(j) - u(j - 1);
        break;
      case 2:
        r[i] = (u(j) - u(j - 1)) - (u(j - 1) - u(j - 2));
        break;
      default:
        r[i] = u(j) - u(0) - static_cast<uint64_t>(j) * step;
        break;
    }
  }
  return r;
}

// The common divisor of all pairwise differences of r as integers (0 when
// all are equal). Differences from the minimum are exact in uint64 even
// when the values span more than 2^63.
uint64_t DifferenceGcd(const std::vector<uint64_t>& r) {
  int64_t min = static_cast<int64_t>(r[0]);
  for (uint64_t x : r) min = std::min(min, static_cast<int64_t>(x));
  uint64_t g = 0;
  for (uint64_t x : r) {
    const uint64_t d = x - static_cast<uint64_t>(min);
    // Most differences are multiples of g already; testing that is far
    // cheaper than a gcd (a mask when g is a power of two).
    const bool divides = (g & (g - 1)) == 0 ? (d & (g - 1)) == 0 : d % g == 0;
    if (g != 0 && divides) continue;
    g = std::gcd(g, d);
    if (g == 1) break;
  }
  return g;
}

// Division by the common divisor, a shift when it is a power of two (KiB
// counters scaled to bytes, g = 1 for most series).
class Divider {
 public:
  explicit Divider(uint64_t g) : g_(g), shift_((g & (g - 1)) == 0 ? std::countr_zero(g) : -1) {}
  uint64_t operator()(uint64_t x) const { return shift_ >= 0 ? x >> shift_ : x / g_; }

 private:
  uint64_t g_;
  int shift_;
};

// Frame of reference: residual - min, divided by the common divisor g > 0.
struct ForPlan {
  std::vector<uint64_t> q;
  std::vector<uint8_t> widths;
  size_t size = 0;  // bytes after g
};

ForPlan PlanFor(const std::vector<uint64_t>& r, int64_t min, uint64_t g) {
  ForPlan plan;
  const int count = static_cast<int>(r.size());
  const int blocks = (count + kMiniblock - 1) / kMiniblock;
  plan.q.resize(r.size());
  plan.widths.resize(static_cast<size_t>(blocks));
  uint64_t bits = 0;
  const Divider divide(g);
  for (int b = 0; b < blocks; ++b) {
    uint64_t max = 0;
    const int end = std::min(count, (b + 1) * kMiniblock);
    for (int i = b * kMiniblock; i < end; ++i) {
      plan.q[i] = divide(r[i] - static_cast<uint64_t>(min));  // exact, non-negative
      max = std::max(max, plan.q[i]);
    }
    plan.widths[b] = static_cast<uint8_t>(std::bit_width(max));
    bits += static_cast<uint64_t>(end - b * kMiniblock) * plan.widths[b];
  }
  plan.size = static_cast<size_t>(blocks) + (bits + 7) / 8;
  return plan;
}

void WriteFor(const ForPlan& plan, std::vector<uint8_t>& out) {
  out.insert(out.end(), plan.widths.begin(), plan.widths.end());
  Packer packer(out);
  for (size_t i = 0; i < plan.q.size(); ++i) packer.Put(plan.q[i], plan.widths[i / kMiniblock]);
  packer.Flush();
}

// Huffman code lengths (at most kMaxCodeLength) for symbols with counts;
// unused symbols get 0. Two-queue construction over at most 65 leaves.
void HuffmanLengths(const uint32_t* counts, uint8_t* lengths) {
  uint64_t weight[kSymbols];
  for (int s = 0; s < kSymbols; ++s) weight[s] = counts[s];
  for (;;) {
    std::fill(lengths, lengths + kSymbols, 0);
    int leaves[kSymbols];
    int n = 0;
    for (int s = 0; s < kSymbols; ++s) {
      if (weight[s] > 0) leaves[n++] = s;
    }
    if (n < 2) {
      if (n == 1) lengths[leaves[0]] = 1;
      return;
    }
    std::sort(leaves, leaves + n, [&](int a, int b) { return weight[a] < weight[b]; });
    // Nodes 0..n-1 are leaves (in weight order), n.. internal ones, which
    // are created in non-decreasing weight order.
    uint64_t node_weight[2 * kSymbols];
    int parent[2 * kSymbols];
    for (int i = 0; i < n; ++i) node_weight[i] = weight[leaves[i]];
    int next_leaf = 0, next_internal = n, created = n;
    auto pop = [&]() {
      if (next_leaf < n &&
          (next_internal == created || node_weight[next_leaf] <= node_weight[next_internal])) {
        return next_leaf++;
      }
      return next_internal++;
    };
    while (created < 2 * n - 1) {
      const int a = pop(), b = pop();
      node_weight[created] = node_weight[a] + node_weight[b];
      parent[a] = parent[b] = created;
      ++created;
    }
    parent[created - 1] = -1;
    int depth[2 * kSymbols];
    depth[created - 1] = 0;
    int max = 0;
    for (int i = created - 2; i >= 0; --i) {
      depth[i] = depth[parent[i]] + 1;  // parents are created after children
      if (i < n) {
        lengths[leaves[i]] = static_cast<uint8_t>(depth[i]);
        max = std::max(max, depth[i]);
      }
    }
    if (max <= kMaxCodeLength) return;
    // Too deep (very skewed counts): flatten the distribution and retry.
    for (uint64_t& w : weight) {
      if (w > 0) w = (w + 1) / 2;
    }
  }
}

// Residuals relative to base, divided by g > 0, as zigzag values whose bit
// widths are Huffman-coded.
struct HuffmanPlan {
  std::vector<uint64_t> z;
  uint8_t lengths[kSymbols] = {};
  int min_w = 0, max_w = 0;
  uint64_t bits = 0;  // payload bits (table and codes)
  size_t size = 0;    // bytes after g
};

HuffmanPlan PlanHuffman(const std::vector<uint64_t>& r, int64_t base, uint64_t g) {
  HuffmanPlan plan;
  // |r - base| is exact in uint64 and a multiple of g; the signed quotient
  // (wrapped to int64 if need be) times g gives back r - base modulo 2^64.
  plan.z.resize(r.size());
  uint32_t counts[kSymbols] = {};
  const uint64_t ubase = static_cast<uint64_t>(base);
  const Divider divide(g);
  for (size_t i = 0; i < r.size(); ++i) {
    const bool negative = static_cast<int64_t>(r[i]) < base;
    const uint64_t q = divide(negative ? ubase - r[i] : r[i] - ubase);
    plan.z[i] = ZigZag(static_cast<int64_t>(negative ? uint64_t{0} - q : q));
    ++counts[std::bit_width(plan.z[i])];
  }
  HuffmanLengths(counts, plan.lengths);
  plan.min_w = kSymbols;
  plan.max_w = -1;
  for (int s = 0; s < kSymbols; ++s) {
    if (counts[s] == 0) continue;
    plan.min_w = std::min(plan.min_w, s);
    plan.max_w = std::max(plan.max_w, s);
    plan.bits += static_cast<uint64_t>(counts[s]) * static_cast<uint64_t>(std::max(s - 1, 0));
  }
  plan.bits += 14;
  if (plan.min_w < plan.max_w) {  // a single symbol needs no table and no codes
    plan.bits += 4 * static_cast<uint64_t>(plan.max_w - plan.min_w + 1);
    for (int s = plan.min_w; s <= plan.max_w; ++s) {
      plan.bits += static_cast<uint64_t>(counts[s]) * plan.lengths[s];
    }
  }
  const uint64_t bytes = (plan.bits + 7) / 8;
  plan.size = static_cast<size_t>(UvarintSize(bytes)) + bytes;
  return plan;
}

void WriteHuffman(const HuffmanPlan& plan, std::vector<uint8_t>& out) {
  const bool coded = plan.min_w < plan.max_w;
  uint32_t codes[kSymbols] = {};
  CanonicalCodes(plan.lengths, codes);
  PutUvarint(out, (plan.bits + 7) / 8);
  uint8_t bit_pos = 0;
  BitWriter w(out, bit_pos);
  w.WriteBits(static_cast<uint64_t>(plan.min_w), 7);
  w.WriteBits(static_cast<uint64_t>(plan.max_w), 7);
  if (coded) {
    for (int s = plan.min_w; s <= plan.max_w; ++s) w.WriteBits(plan.lengths[s], 4);
  }
  for (uint64_t v : plan.z) {
    const int width = std::bit_width(v);
    if (coded) w.WriteBits(codes[width], plan.lengths[width]);
    if (width >= 2) w.WriteBits(v, width - 1);  // the leading one is implied
  }
}

int64_t Median(const std::vector<uint64_t>& r) {
  std::vector<int64_t> sorted(r.size());
  for (size_t i = 0; i < r.size(); ++i) sorted[i] = static_cast<int64_t>(r[i]);
  std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
  return sorted[sorted.size() / 2];
}

uint64_t BaseMagnitude(int64_t base) {
  return base < 0 ? uint64_t{0} - static_cast<uint64_t>(base) : static_cast<uint64_t>(base);
}

// Header byte and first values; base only when there are residuals.
void WriteHeader(std::span<const int64_t> values, int order, IntKind kind, int64_t base,
                 std::vector<uint8_t>& out) {
  const int n = static_cast<int>(values.size());
  out.push_back(static_cast<uint8_t>(order | (static_cast<int>(kind) << 2) | (base < 0 ? 16 : 0)));
  if (order >= 1 && n >= 1) PutVarint(out, values[0]);
  if (order == 2 && n >= 2) {
    PutVarint(out, static_cast<int64_t>(static_cast<uint64_t>(values[1]) -
                                        static_cast<uint64_t>(values[0])));
  }
  if (order == kLinear && n >= 2) PutVarint(out, static_cast<int64_t>(LinearStep(values)));
  if (n > Leading(order)) PutUvarint(out, BaseMagnitude(base));
}

size_t HeaderSize(std::span<const int64_t> values, int order, int64_t base) {
  std::vector<uint8_t> header;
  WriteHeader(values, order, IntKind::kEqual, base, header);
  return header.size();
}

// One candidate coding of one order: everything needed to write it.
struct Candidate {
  int order = 0;
  IntKind kind = IntKind::kEqual;
  int64_t base = 0;
  uint64_t g = 0;
  ForPlan for_plan;
  HuffmanPlan huffman_plan;
  size_t size = SIZE_MAX;
};

void Write(std::span<const int64_t> values, const Candidate& c, std::vector<uint8_t>& out) {
  WriteHeader(values, c.order, c.kind, c.base, out);
  if (c.kind == IntKind::kEqual) return;
  PutUvarint(out, c.g);
  if (c.kind == IntKind::kFor) {
    WriteFor(c.for_plan, out);
  } else {
    WriteHuffman(c.huffman_plan, out);
  }
}

// Plans `order` with the allowed kinds (-1: both) and keeps the smallest
// in *best.
void Consider(std::span<const int64_t> values, int order, int kind, Candidate* best) {
  const std::vector<uint64_t> r = Residuals(values, order);
  if (r.empty()) {
    const size_t size = HeaderSize(values, order, 0);
    if (size < best->size) {
      *best = Candidate{order, IntKind::kEqual, 0, 0, {}, {}, size};
    }
    return;
  }
  int64_t min = static_cast<int64_t>(r[0]);
  for (uint64_t x : r) min = std::min(min, static_cast<int64_t>(x));
  const uint64_t g = DifferenceGcd(r);
  if (g == 0) {  // all residuals equal: nothing per value, whatever the kind
    const size_t size = HeaderSize(values, order, min);
    if (size < best->size) {
      *best = Candidate{order, IntKind::kEqual, min, 0, {}, {}, size};
    }
    return;
  }
  const size_t g_size = static_cast<size_t>(UvarintSize(g));
  if (kind != static_cast<int>(IntKind::kHuffman)) {
    ForPlan plan = PlanFor(r, min, g);
    const size_t size = HeaderSize(values, order, min) + g_size + plan.size;
    if (size < best->size) {
      *best = Candidate{order, IntKind::kFor, min, g, std::move(plan), {}, size};
    }
  }
  if (kind != static_cast<int>(IntKind::kFor)) {
    // The median suits both counters (deltas around a rate) and gauges
    // (residuals around zero).
    const int64_t median = Median(r);
    HuffmanPlan plan = PlanHuffman(r, median, g);
    const size_t size = HeaderSize(values, order, median) + g_size + plan.size;
    if (size < best->size) {
      *best = Candidate{order, IntKind::kHuffman, median, g, {}, std::move(plan), size};
    }
  }
}

}  // namespace

void EncodeIntStream(std::span<const int64_t> values, int order, IntKind kind,
                     std::vector<uint8_t>& out) {
  Candidate best;
  Consider(values, order, static_cast<int>(kind), &best);
  Write(values, best, out);
}

void EncodeIntStreamBest(std::span<const int64_t> values, int min_order, int max_order,
                         std::vector<uint8_t>& out, int kind) {
  Candidate best;
  for (int order = min_order; order <= max_order; ++order) {
    Consider(values, order, kind, &best);
    // Equal residuals cost nothing per value: a higher order only adds a
    // header value (with n > 2 every order keeps some residuals).
    if (best.kind == IntKind::kEqual && values.size() > 2) break;
  }
  Write(values, best, out);
}

bool IntStreamReader::Init(const uint8_t** p, const uint8_t* end, int n) {
  const uint8_t* q = *p;
  if (q == end) return false;
  const uint8_t header = *q++;
  order_ = static_cast<int8_t>(header & 3);
  const int kind = (header >> 2) & 3;
  if (kind > static_cast<int>(IntKind::kEqual) || (header & 0xe0) != 0) {
    return false;
  }
  kind_ = static_cast<IntKind>(kind);
  int64_t v;
  if (order_ >= 1 && n >= 1) {
    if (!GetVarint(&q, end, &v)) return false;
    first_[0] = static_cast<uint64_t>(v);
  }
  if (order_ >= 2 && n >= 2) {  // v1 - v0, or the linear step
    if (!GetVarint(&q, end, &v)) return false;
    first_[1] = static_cast<uint64_t>(v);
  }
  residuals_ = std::max(0, n - Leading(order_));
  if (residuals_ > 0) {
    uint64_t magnitude;
    if (!GetUvarint(&q, end, &magnitude)) return false;
    base_ = header & 16 ? uint64_t{0} - magnitude : magnitude;
    if (kind_ != IntKind::kEqual) {
      if (!GetUvarint(&q, end, &g_) || g_ == 0) return false;
    }
    if (kind_ == IntKind::kFor) {
      const int blocks = (residuals_ + kMiniblock - 1) / kMiniblock;
      if (end - q < blocks) return false;
      widths_ = q;
      q += blocks;
      uint64_t bits = 0;
      for (int b = 0; b < blocks; ++b) {
        if (widths_[b] > 64) return false;
        const int count = std::min(kMiniblock, residuals_ - b * kMiniblock);
        bits += static_cast<uint64_t>(count) * widths_[b];
      }
      const uint64_t bytes = (bits + 7) / 8;
      if (static_cast<uint64_t>(end - q) < bytes) return false;
      data_ = q;
      q += bytes;
      end_ = q;
    } else if (kind_ == IntKind::kHuffman) {
      uint64_t bytes;
      if (!GetUvarint(&q, end, &bytes) || static_cast<uint64_t>(end - q) < bytes) return false;
      if (!InitHuffman(q, q + bytes)) return false;
      q += bytes;
    }
  }
  *p = q;
  return true;
}

bool IntStreamReader::InitHuffman(const uint8_t* begin, const uint8_t* end) {
  bits_ = BitReader(begin, end);
  single_width_ = -1;
  huffman_fast_ = false;
  uint64_t min_w, max_w;
  if (!bits_.ReadBits(7, &min_w) || !bits_.ReadBits(7, &max_w)) return false;
  if (min_w > max_w || max_w >= kSymbols) return false;
  if (min_w == max_w) {
    single_width_ = static_cast<int8_t>(min_w);
    return true;
  }
  uint8_t lengths[kSymbols] = {};
  int length_count[16] = {};
  for (uint64_t s = min_w; s <= max_w; ++s) {
    uint64_t l;
    if (!bits_.ReadBits(4, &l) || l > kMaxCodeLength) return false;
    lengths[s] = static_cast<uint8_t>(l);
    ++length_count[l];
  }
  // Reject over-subscribed codes (Kraft sum above one); an incomplete code
  // is tolerated: its unused patterns stay 0 in the table and fail in Read.
  int left = 1;
  for (int l = 1; l <= kMaxCodeLength; ++l) {
    left = left * 2 - length_count[l];
    if (left < 0) return false;
  }
  if (left == 1 << kMaxCodeLength) return false;  // no symbol at all
  table_ = HuffmanTable::Get(static_cast<int>(min_w), static_cast<int>(max_w), lengths);
  lut_bits_ = static_cast<uint8_t>(table_->lut_bits());
  longest_symbol_ = static_cast<uint8_t>(table_->longest());
  huffman_fast_ = table_->fast();
  return true;
}

bool IntStreamReader::Arithmetic(uint64_t* first, uint64_t* step) const {
  if (order_ != 1 || kind_ != IntKind::kEqual) return false;
  *first = first_[0];
  *step = residuals_ > 0 ? base_ : 0;
  return true;
}

template <typename Emit>
bool IntStreamReader::DecodeHuffman(int count, Emit emit) {
  // A local copy keeps the bit buffer in registers across the loop.
  BitReader b = bits_;
  const int longest = longest_symbol_;
  const uint32_t* lut = table_->lut();
  for (int i = 0; i < count; ++i) {
    // Refills (to at least 57 bits unless the input ends first) only when
    // the longest symbol might not be buffered: once per several symbols.
    b.Fill(longest);
    const uint32_t entry = lut[b.Peek(lut_bits_)];
    const int total = static_cast<int>(entry & 0xff);
    if (total > b.available()) return false;  // no such code, or truncated
    const int width = static_cast<int>(entry >> 16);
    uint64_t z = static_cast<uint64_t>(width);  // widths 0 and 1 are the values 0 and 1
    if (width >= 2) {
      // The mantissa, the low bits of the `total` just peeked, follows
      // the code; its leading one is implied.
      z = (b.Peek(total) << (65 - width) >> (65 - width)) | uint64_t{1} << (width - 1);
    }
    b.Skip(total);  // total <= 56
    emit(i, static_cast<uint64_t>(UnZigZag(z)));
  }
  bits_ = b;
  return true;
}

bool IntStreamReader::SkipHuffman(int count, uint64_t* q) {
  constexpr int kBits = HuffmanTable::kMultiBits;
  // Each lookup covers at most kBits symbols (one bit or more each); the
  // last few go one at a time.
  if (count >= 4 * kBits) {
    const uint64_t* multi = table_->MultiSymbol();
    BitReader b = bits_;
    uint64_t sum = 0;
    int left = count;
    auto take = [&](uint64_t entry) {
      b.Skip(static_cast<int>((entry >> 8) & 0xff));
      left -= static_cast<int>(entry & 0xff);
      sum += static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(entry >> 32)));
    };
    while (left >= kBits) {
      // Two lookups per refill check: with 2 * kBits bits buffered neither
      // can run past them.
      while (left >= 2 * kBits && b.Fill(2 * kBits)) {
        const uint64_t first = multi[b.Peek(kBits)];
        if (first == HuffmanTable::kNoSymbols) break;
        take(first);
        const uint64_t second = multi[b.Peek(kBits)];
        if (second == HuffmanTable::kNoSymbols) break;
        take(second);
      }
      if (left < kBits) break;
      b.Fill(kBits);
      const uint64_t entry = multi[b.Peek(kBits)];
      if (static_cast<int>((entry >> 8) & 0xff) <= b.available()) {
        take(entry);
        continue;
      }
      // Near the input's end the symbol-at-a-time path below decides.
      if (entry != HuffmanTable::kNoSymbols) break;
      // A symbol longer than kBits (or no code at all): alone.
      bits_ = b;
      if (!DecodeHuffman(1, [&](int, uint64_t x) { sum += x; })) return false;
      b = bits_;
      --left;
    }
    bits_ = b;
    *q += sum;
    count = left;
  }
  return DecodeHuffman(count, [&](int, uint64_t x) { *q += x; });
}

uint64_t IntStreamReader::Extract(uint64_t bit, int width) const {
  const uint8_t* q = data_ + (bit >> 3);
  const int shift = static_cast<int>(bit & 7);
  uint64_t v = Load64(q, end_) >> shift;
  // Init checked the packed bytes, so a value crossing 64 bits has q[8].
  if (shift + width > 64) v |= static_cast<uint64_t>(q[8]) << (64 - shift);
  return v & Mask(width);
}

bool IntStreamReader::ReadResiduals(int count, uint64_t* r) {
  if (g_ == 0) {
    std::fill(r, r + count, base_);
    residual_ += count;
    return true;
  }
  if (kind_ == IntKind::kFor) {
    int i = 0;
    while (i < count) {
      const int take = std::min(count - i, kMiniblock - residual_ % kMiniblock);
      const int width = widths_[residual_ / kMiniblock];
      if (width == 0) {
        std::fill(r + i, r + i + take, base_);
      } else {
        for (int j = i; j < i + take; ++j) {
          r[j] = base_ + g_ * Extract(bit_, width);
          bit_ += static_cast<uint64_t>(width);
        }
      }
      residual_ += take;
      i += take;
    }
    return true;
  }
  if (huffman_fast_) {
    const uint64_t base = base_, g = g_;
    if (!DecodeHuffman(count, [&](int i, uint64_t q) { r[i] = base + g * q; })) return false;
    residual_ += count;
    return true;
  }
  for (int i = 0; i < count; ++i) {
    int width = single_width_;
    if (width < 0) {
      bits_.Fill(56);
      const uint32_t entry = table_->lut()[bits_.Peek(lut_bits_)];
      const int length = static_cast<int>((entry >> 8) & 15);
      if (length == 0 || length > bits_.available()) return false;
      bits_.Consume(length);
      width = static_cast<int>(entry >> 16);
      if (width >= 2 && width - 1 <= bits_.available()) {  // mantissa already buffered
        const uint64_t z = bits_.Peek(width - 1) | uint64_t{1} << (width - 1);
        bits_.Consume(width - 1);
        r[i] = base_ + g_ * static_cast<uint64_t>(UnZigZag(z));
        continue;
      }
    }
    uint64_t z = width;  // widths 0 and 1 are the values 0 and 1
    if (width >= 2) {
      if (!bits_.ReadBits(width - 1, &z)) return false;
      z |= uint64_t{1} << (width - 1);
    }
    r[i] = base_ + g_ * static_cast<uint64_t>(UnZigZag(z));
  }
  residual_ += count;
  return true;
}

bool IntStreamReader::Read(int count, int64_t* out) {
  int i = 0;
  for (; i < count && emitted_ < Leading(order_); ++i, ++emitted_) {
    if (emitted_ == 0) {
      prev_ = first_[0];
    } else {
      prev_delta_ = first_[1];
      prev_ += prev_delta_;
    }
    out[i] = static_cast<int64_t>(prev_);
  }
  const int take = count - i;
  if (take <= 0) return true;
  uint64_t* r = reinterpret_cast<uint64_t*>(out + i);
  if (!ReadResiduals(take, r)) return false;
  // Undo the differencing in place (modulo 2^64).
  if (order_ == 1) {
    uint64_t prev = prev_;
    for (int j = 0; j < take; ++j) r[j] = prev += r[j];
    prev_ = prev;
  } else if (order_ == 2) {
    uint64_t prev = prev_, delta = prev_delta_;
    for (int j = 0; j < take; ++j) r[j] = prev += delta += r[j];
    prev_ = prev;
    prev_delta_ = delta;
  } else if (order_ == kLinear) {
    uint64_t line = prev_;  // the line's value at the previous index
    const uint64_t step = first_[1];
    for (int j = 0; j < take; ++j) r[j] += line += step;
    prev_ = line;
  }
  emitted_ += take;
  return true;
}

bool IntStreamReader::SkipResiduals(int count, uint64_t* sum) {
  if (sum != nullptr) *sum += base_ * static_cast<uint64_t>(count);
  if (g_ == 0) {
    residual_ += count;
    return true;
  }
  uint64_t q = 0;  // sum of the residuals' quotients (r = base + g * q)
  if (kind_ == IntKind::kFor) {
    int i = 0;
    while (i < count) {
      const int take = std::min(count - i, kMiniblock - residual_ % kMiniblock);
      const int width = widths_[residual_ / kMiniblock];
      if (sum != nullptr && width > 0) {
        for (int j = 0; j < take; ++j) {
          q += Extract(bit_, width);
          bit_ += static_cast<uint64_t>(width);
        }
      } else {
        bit_ += static_cast<uint64_t>(take) * static_cast<uint64_t>(width);
      }
      residual_ += take;
      i += take;
    }
    if (sum != nullptr) *sum += g_ * q;
    return true;
  }
  if (huffman_fast_) {
    if (!SkipHuffman(count, &q)) return false;
    if (sum != nullptr) *sum += g_ * q;
    residual_ += count;
    return true;
  }
  for (int i = 0; i < count; ++i) {
    int width = single_width_;
    if (width < 0) {
      bits_.Fill(56);
      const uint32_t entry = table_->lut()[bits_.Peek(lut_bits_)];
      const int length = static_cast<int>((entry >> 8) & 15);
      if (length == 0 || length > bits_.available()) return false;
      bits_.Consume(length);
      width = static_cast<int>(entry >> 16);
    }
    uint64_t z = width;  // widths 0 and 1 are the values 0 and 1
    if (width >= 2) {
      if (!bits_.ReadBits(width - 1, &z)) return false;
      z |= uint64_t{1} << (width - 1);
    }
    q += static_cast<uint64_t>(UnZigZag(z));
  }
  if (sum != nullptr) *sum += g_ * q;
  residual_ += count;
  return true;
}

bool IntStreamReader::Skip(int count) {
  int64_t scratch[kMiniblock];
  // The leading value of orders 1 and 3 is read as usual; order 2 is decoded
  // throughout (each value needs the running delta).
  if (order_ != 2) {
    for (; count > 0 && emitted_ < Leading(order_); --count) {
      if (!Read(1, scratch)) return false;
    }
  }
  while (count > 0 && order_ == 2) {
    const int take = std::min(count, kMiniblock);
    if (!Read(take, scratch)) return false;
    count -= take;
  }
  if (count <= 0) return true;
  if (order_ == 1) {
    uint64_t total = 0;
    if (!SkipResiduals(count, &total)) return false;
    prev_ += total;
  } else {
    if (!SkipResiduals(count, nullptr)) return false;
    if (order_ == kLinear) prev_ += first_[1] * static_cast<uint64_t>(count);
  }
  emitted_ += count;
  return true;
}

}  // namespace gpumon::tsdb::chunkenc
