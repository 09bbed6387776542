#include "web/api/json_values.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "web/api/value_format.h"

namespace gpumon::web::api {
namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

// [[t,"v"],...] formatted straight into the output: a range result is
// mostly points, and rapidjson's per-character writing and escaping (of
// text that never needs it) would cost most of the encoding time.
// Formatted timestamps of a range answer: its series share one step grid,
// so each grid time is formatted once, not once per series. Times off the
// grid (or a grid too large to hold) are formatted directly.
class TimestampCache {
 public:
  explicit TimestampCache(const promql::Matrix& m) {
    int64_t lo = INT64_MAX, hi = INT64_MIN, step = 0;
    for (const promql::Series& s : m) {
      if (s.points.empty()) continue;
      lo = std::min(lo, s.points.front().t);
      hi = std::max(hi, s.points.back().t);
      for (size_t i = 1; i < s.points.size() && step == 0; ++i) {
        step = s.points[i].t - s.points[i - 1].t;
      }
    }
    if (step <= 0 || hi < lo || (hi - lo) / step >= kMaxSlots) return;
    base_ = lo;
    step_ = step;
    slots_.resize(static_cast<size_t>((hi - lo) / step + 1));
  }

  // Writes the text of `ms` at `out` (at least 24 bytes); returns its length.
  size_t Write(int64_t ms, char* out) {
    const int64_t off = ms - base_;
    if (step_ == 0 || off < 0 || off % step_ != 0 ||
        static_cast<size_t>(off / step_) >= slots_.size()) {
      return FormatTimestamp(ms, out);
    }
    Slot& s = slots_[static_cast<size_t>(off / step_)];
    if (s.len == 0) s.len = static_cast<uint8_t>(FormatTimestamp(ms, s.text));  // first use
    std::memcpy(out, s.text, sizeof(s.text));  // fixed size: cheaper than len
    return s.len;
  }

 private:
  static constexpr int64_t kMaxSlots = 1 << 16;
  struct Slot {
    char text[23];  // FormatTimestamp writes at most 22 bytes
    uint8_t len = 0;
  };
  int64_t base_ = 0;
  int64_t step_ = 0;
  std::vector<Slot> slots_;
};

bool WritePoints(JsonWriter& w, const std::vector<promql::FPoint>& points, TimestampCache& ts) {
  ChunkedOutput& out = w.RawValueOutput(rapidjson::kArrayType);
  // Points are formatted into a local block, handed over a few KiB at a
  // time. One point takes at most ",[" + timestamp (23 copied) + ",\"" +
  // value (< 32) + "\"]".
  constexpr size_t kMaxPoint = 96;
  char block[8192];
  char* c = block;
  *c++ = '[';
  bool first = true;
  for (const promql::FPoint& p : points) {
    if (c + kMaxPoint > block + sizeof(block)) {
      out.Append(block, static_cast<size_t>(c - block));
      c = block;
    }
    if (!first) *c++ = ',';
    first = false;
    *c++ = '[';
    c += ts.Write(p.t, c);
    *c++ = ',';
    *c++ = '"';
    c += FormatSampleValue(p.f, c);
    *c++ = '"';
    *c++ = ']';
  }
  *c++ = ']';
  out.Append(block, static_cast<size_t>(c - block));
  return w.ok();
}

// Whether rapidjson would write s unchanged between quotes: it escapes only
// control characters, '"' and '\\'. Eight bytes at a time: a byte-wise
// loop would cost more than the copy it guards.
bool Plain(std::string_view s) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL, kHigh = 0x8080808080808080ULL;
  // Nonzero when some byte of v is below n (n <= 128); bytes >= 0x80 never count.
  auto any_below = [](uint64_t v, uint64_t n) { return (v - kOnes * n) & ~v & kHigh; };
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t v;
    std::memcpy(&v, s.data() + i, 8);
    if (any_below(v, 0x20) | any_below(v ^ (kOnes * '"'), 1) | any_below(v ^ (kOnes * '\\'), 1)) {
      return false;
    }
  }
  for (; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == '"' || c == '\\') return false;
  }
  return true;
}

}  // namespace

bool WriteLabels(JsonWriter& w, const Labels& labels) {
  // Label names and values seldom hold a character JSON escapes: such a set
  // is formatted in one piece rather than character by character.
  size_t size = 2;
  bool plain = true;
  for (const Label& l : labels) {
    plain = plain && Plain(l.name) && Plain(l.value);
    size += l.name.size() + l.value.size() + 6;  // "":"",
  }
  if (plain) {
    char stack[1024];
    std::string heap;
    char* begin = stack;
    if (size > sizeof(stack)) {
      heap.resize(size);
      begin = heap.data();
    }
    char* c = begin;
    *c++ = '{';
    for (const Label& l : labels) {
      if (c != begin + 1) *c++ = ',';
      *c++ = '"';
      c = std::copy(l.name.begin(), l.name.end(), c);
      *c++ = '"';
      *c++ = ':';
      *c++ = '"';
      c = std::copy(l.value.begin(), l.value.end(), c);
      *c++ = '"';
    }
    *c++ = '}';
    w.RawValueOutput(rapidjson::kObjectType).Append(begin, static_cast<size_t>(c - begin));
    return w.ok();
  }
  w.StartObject();
  for (const Label& l : labels) {
    w.Str(l.name);
    w.Str(l.value);
  }
  return w.EndObject() && w.ok();
}

bool WriteTimestamp(JsonWriter& w, int64_t ms) {
  char buf[32];
  size_t n = FormatTimestamp(ms, buf);
  return w.Raw(std::string_view(buf, n), rapidjson::kNumberType);
}

bool WriteSampleValue(JsonWriter& w, double v) {
  char buf[32];
  size_t n = FormatSampleValue(v, buf);
  return w.Str(std::string_view(buf, n));
}

bool WritePoint(JsonWriter& w, int64_t ms, double v) {
  w.StartArray();
  WriteTimestamp(w, ms);
  WriteSampleValue(w, v);
  return w.EndArray();
}

const char* ResultTypeName(const promql::Value& v) {
  return std::visit(Overloaded{
                        [](const promql::Scalar&) { return "scalar"; },
                        [](const promql::String&) { return "string"; },
                        [](const promql::Vector&) { return "vector"; },
                        [](const promql::Matrix&) { return "matrix"; },
                    },
                    v);
}

size_t SeriesCount(const promql::Value& v) {
  if (auto* vec = std::get_if<promql::Vector>(&v)) return vec->size();
  if (auto* m = std::get_if<promql::Matrix>(&v)) return m->size();
  return 0;
}

bool WriteValue(JsonWriter& w, const promql::Value& v, size_t limit) {
  return std::visit(Overloaded{
                        [&](const promql::Scalar& s) { return WritePoint(w, s.t, s.v); },
                        [&](const promql::String& s) {
                          w.StartArray();
                          WriteTimestamp(w, s.t);
                          w.Str(s.v);
                          return w.EndArray();
                        },
                        [&](const promql::Vector& vec) {
                          size_t n = limit > 0 ? std::min(limit, vec.size()) : vec.size();
                          w.StartArray();
                          for (size_t i = 0; i < n; ++i) {
                            w.StartObject();
                            w.Key("metric");
                            WriteLabels(w, vec[i].metric);
                            w.Key("value");
                            WritePoint(w, vec[i].t, vec[i].f);
                            w.EndObject();
                            if (!w.ok()) return false;
                          }
                          return w.EndArray();
                        },
                        [&](const promql::Matrix& m) {
                          size_t n = limit > 0 ? std::min(limit, m.size()) : m.size();
                          TimestampCache ts(m);
                          w.StartArray();
                          for (size_t i = 0; i < n; ++i) {
                            w.StartObject();
                            w.Key("metric");
                            WriteLabels(w, m[i].metric);
                            w.Key("values");
                            WritePoints(w, m[i].points, ts);
                            w.EndObject();
                            if (!w.ok()) return false;
                          }
                          return w.EndArray();
                        },
                    },
                    v);
}

bool WriteQueryData(JsonWriter& w, const promql::Value& v, size_t limit) {
  w.StartObject();
  w.Key("resultType");
  w.String(ResultTypeName(v));
  w.Key("result");
  if (!WriteValue(w, v, limit)) return false;
  return w.EndObject() && w.ok();
}

}  // namespace gpumon::web::api
