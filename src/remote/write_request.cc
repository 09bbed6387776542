// Encoding goes through the protobuf-generated classes (the reference
// serializer; sending is bounded by the network, not by this). Decoding is
// the ingestion path for every pushing agent, so it reads the wire format by
// hand straight into the result; libprotobuf stays its oracle in the tests
// and the fuzz target.
#include "remote/write_request.h"

#include <google/protobuf/arena.h>
#include <snappy.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <utility>

#include "proto/remote.pb.h"
#include "remote/body_decompress.h"

namespace gpumon::remote {
namespace {

// Arena blocks sized to the message being built, so that most requests
// need one or two blocks.
google::protobuf::ArenaOptions ArenaOptionsFor(size_t wire_bytes) {
  google::protobuf::ArenaOptions options;
  options.start_block_size = std::clamp<size_t>(wire_bytes, 4096, 64 << 20);
  options.max_block_size = std::max<size_t>(options.start_block_size, 8 << 20);
  return options;
}

// RFC 3629 UTF-8: no overlongs, no surrogates, nothing above U+10FFFF.
// ASCII runs (the common case for label text) take the first branch.
bool ValidUtf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    unsigned char c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    int len;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the 2nd byte
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return false;
    }
    if (end - p < len) return false;
    if (p[1] < lo || p[1] > hi) return false;
    for (int i = 2; i < len; ++i) {
      if ((p[i] & 0xC0) != 0x80) return false;
    }
    p += len;
  }
  return true;
}

// Label text quoted for an error message, cut short so a hostile 1 MB label
// does not end up in a log line.
std::string Quote(std::string_view s) {
  constexpr size_t kMax = 64;
  std::string out = "\"";
  for (char c : s.substr(0, kMax)) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u >= 0x7F) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  out += '"';
  if (s.size() > kMax) out += "...";
  return out;
}

Status SeriesError(size_t index, const std::string& what) {
  return Status::Error("timeseries[" + std::to_string(index) + "]: " + what);
}

// Nesting protobuf allows by default (messages and groups below the top).
constexpr int kMaxDepth = 100;

enum WireType : uint32_t {
  kVarint = 0,
  kFixed64 = 1,
  kLen = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5
};

// Reads protobuf wire format from a bounded buffer. Every method returns
// false on malformed input, with the same acceptance rules as the C++
// protobuf runtime (tags of at most 5 bytes, cut to 32 bits, field 0 invalid,
// varints of at most 10 bytes, lengths of at most 5 bytes below 2^31,
// wire types 6 and 7 invalid), so a body either runtime parses, the other
// parses too; the fuzz target checks this against libprotobuf.
class WireReader {
 public:
  WireReader(const char* p, const char* end) : p_(p), end_(end) {}
  explicit WireReader(std::string_view s) : WireReader(s.data(), s.data() + s.size()) {}

  bool done() const { return p_ == end_; }
  const char* pos() const { return p_; }

  bool Varint(uint64_t* v, int max_bytes = 10) {
    uint64_t result = 0;
    for (int i = 0; i < max_bytes; ++i) {
      if (p_ == end_) return false;
      uint8_t b = static_cast<uint8_t>(*p_++);
      if (i < 10) result |= uint64_t{b & 0x7Fu} << (7 * i);  // bits past 64 are dropped
      if (!(b & 0x80)) {
        *v = result;
        return true;
      }
    }
    return false;
  }

  bool Tag(uint32_t* field, uint32_t* wire_type) {
    uint64_t tag;
    // Like protobuf, bits past 32 in a 5-byte tag are dropped.
    if (!Varint(&tag, 5)) return false;
    tag &= 0xFFFFFFFFu;
    *field = static_cast<uint32_t>(tag >> 3);
    *wire_type = static_cast<uint32_t>(tag & 7);
    return *field != 0 && *wire_type <= kFixed32;
  }

  bool Fixed64(uint64_t* v) {
    if (end_ - p_ < 8) return false;
    uint64_t r = 0;
    for (int i = 0; i < 8; ++i) r |= uint64_t{static_cast<uint8_t>(p_[i])} << (8 * i);
    p_ += 8;
    *v = r;
    return true;
  }

  bool Bytes(std::string_view* out) {
    uint64_t len;
    if (!Varint(&len, 5) || len >= (uint64_t{1} << 31)) return false;
    if (static_cast<uint64_t>(end_ - p_) < len) return false;
    *out = std::string_view(p_, len);
    p_ += len;
    return true;
  }

  // Skips one field whose tag was just read; a group is skipped up to its
  // matching end tag.
  bool Skip(uint32_t field, uint32_t wire_type, int depth) {
    uint64_t ignored;
    std::string_view bytes;
    switch (wire_type) {
      case kVarint:
        return Varint(&ignored);
      case kFixed64:
        return Fixed64(&ignored);
      case kLen:
        return Bytes(&bytes);
      case kFixed32:
        if (end_ - p_ < 4) return false;
        p_ += 4;
        return true;
      case kStartGroup: {
        if (depth + 1 > kMaxDepth) return false;
        uint32_t f, wt;
        while (Tag(&f, &wt)) {
          if (wt == kEndGroup) return f == field;
          if (!Skip(f, wt, depth + 1)) return false;
        }
        return false;
      }
      default:  // an end tag outside its group
        return false;
    }
  }

  // Checks a whole message whose declared fields are all scalars or
  // strings (metadata, histogram heads, labels of exemplars): for those,
  // protobuf's parse succeeds exactly when every field skips cleanly.
  bool SkipMessage(int depth) {
    uint32_t field, wt;
    while (!done()) {
      if (!Tag(&field, &wt) || !Skip(field, wt, depth)) return false;
    }
    return true;
  }

 private:
  const char* p_;
  const char* end_;
};

Status ProtoError(const std::string& where, const char* at, const char* base) {
  return Status::Error("protobuf: malformed " + where + " at byte " + std::to_string(at - base) +
                       " (after snappy)");
}

// Label fields, last occurrence winning as in protobuf.
bool ParseLabel(std::string_view msg, std::string_view* name, std::string_view* value) {
  WireReader r(msg);
  *name = {};
  *value = {};
  uint32_t field, wt;
  while (!r.done()) {
    if (!r.Tag(&field, &wt)) return false;
    if (field == 1 && wt == kLen) {
      if (!r.Bytes(name)) return false;
    } else if (field == 2 && wt == kLen) {
      if (!r.Bytes(value)) return false;
    } else if (!r.Skip(field, wt, 2)) {
      return false;
    }
  }
  return true;
}

bool ParseSample(std::string_view msg, tsdb::Sample* out) {
  WireReader r(msg);
  uint64_t value_bits = 0, t = 0;
  uint32_t field, wt;
  while (!r.done()) {
    if (!r.Tag(&field, &wt)) return false;
    if (field == 1 && wt == kFixed64) {
      if (!r.Fixed64(&value_bits)) return false;
    } else if (field == 2 && wt == kVarint) {
      if (!r.Varint(&t)) return false;
    } else if (!r.Skip(field, wt, 2)) {
      return false;
    }
  }
  *out = tsdb::Sample{static_cast<int64_t>(t), std::bit_cast<double>(value_bits)};
  return true;
}

bool ValidExemplar(std::string_view msg) {
  WireReader r(msg);
  uint32_t field, wt;
  while (!r.done()) {
    if (!r.Tag(&field, &wt)) return false;
    std::string_view label;
    if (field == 1 && wt == kLen) {
      if (!r.Bytes(&label) || !WireReader(label).SkipMessage(3)) return false;
    } else if (!r.Skip(field, wt, 2)) {
      return false;
    }
  }
  return true;
}

// Validates a label list (wire order) and builds the Labels value. Labels
// with an empty value are dropped: Prometheus treats them as absent.
Result<Labels> BuildLabels(size_t index,
                           const std::vector<std::pair<std::string_view, std::string_view>>& in) {
  std::vector<Label> out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    auto [name, value] = in[i];
    if (name.empty()) {
      return SeriesError(index, "label name \"\" is empty (value " + Quote(value) + ")");
    }
    if (!ValidUtf8(name)) {
      return SeriesError(index, "label name " + Quote(name) + " is not valid UTF-8");
    }
    if (!ValidUtf8(value)) {
      return SeriesError(index, "label " + Quote(name) + " has a value that is not valid UTF-8");
    }
    if (i > 0) {
      std::string_view prev = in[i - 1].first;
      if (name == prev) return SeriesError(index, "duplicate label name " + Quote(name));
      if (name < prev) {
        return SeriesError(index, "labels not sorted: " + Quote(name) + " after " + Quote(prev));
      }
    }
    if (!value.empty()) out.push_back(Label{std::string(name), std::string(value)});
  }
  if (out.empty()) return SeriesError(index, "no labels");
  return Labels::FromSorted(std::move(out));
}

}  // namespace

std::string EncodeWriteRequest(std::span<const TimeSeries> series) {
  size_t hint = 0;
  for (const TimeSeries& s : series) hint += s.samples.size() * 24 + s.labels.size() * 64;
  google::protobuf::Arena arena(ArenaOptionsFor(hint));
  auto* req = google::protobuf::Arena::CreateMessage<prometheus::WriteRequest>(&arena);
  req->mutable_timeseries()->Reserve(static_cast<int>(series.size()));
  for (const TimeSeries& s : series) {
    prometheus::TimeSeries* ts = req->add_timeseries();
    ts->mutable_labels()->Reserve(static_cast<int>(s.labels.size()));
    // Labels keeps its items sorted by name, the order the spec requires.
    for (const Label& l : s.labels) {
      prometheus::Label* pl = ts->add_labels();
      pl->set_name(l.name);
      pl->set_value(l.value);
    }
    ts->mutable_samples()->Reserve(static_cast<int>(s.samples.size()));
    for (const tsdb::Sample& sample : s.samples) {
      prometheus::Sample* ps = ts->add_samples();
      ps->set_value(sample.v);
      ps->set_timestamp(sample.t);
    }
  }
  std::string raw = req->SerializeAsString();
  std::string body;
  snappy::Compress(raw.data(), raw.size(), &body);
  return body;
}

Result<std::vector<TimeSeries>> DecodeWriteRequest(std::string_view body) {
  // Protobuf's own 2 GiB message limit; the receiver passes a far smaller one.
  DecompressResult raw = DecompressBody("snappy", body, static_cast<size_t>(INT32_MAX));
  if (raw.status != 200) return Status::Error(raw.message);
  std::vector<TimeSeries> out;
  Status st = ForEachSeries(raw.data, [&out](size_t, const TimeSeries& series) {
    out.push_back(series);
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return out;
}

Status ForEachSeries(std::string_view raw, const SeriesVisitor& visit) {
  // Straight from the wire into one reused series: labels are copied once,
  // into the Labels the visitor sees.
  const char* base = raw.data();
  TimeSeries series;
  std::vector<std::pair<std::string_view, std::string_view>> labels;
  size_t index = 0;
  WireReader req(raw);
  uint32_t field, wt;
  while (!req.done()) {
    const char* at = req.pos();
    if (!req.Tag(&field, &wt)) return ProtoError("WriteRequest field", at, base);
    std::string_view msg;
    if (field == 1 && wt == kLen) {
      if (!req.Bytes(&msg)) return ProtoError("WriteRequest.timeseries", at, base);
    } else if (field == 3 && wt == kLen) {
      if (!req.Bytes(&msg) || !WireReader(msg).SkipMessage(1)) {
        return ProtoError("WriteRequest.metadata", at, base);
      }
      continue;
    } else {
      if (!req.Skip(field, wt, 0)) return ProtoError("WriteRequest field", at, base);
      continue;
    }

    series.samples.clear();
    labels.clear();
    bool histograms = false;
    WireReader ts(msg);
    while (!ts.done()) {
      const char* fat = ts.pos();
      auto fail = [&](const char* what) {
        return ProtoError("timeseries[" + std::to_string(index) + "]." + what, fat, base);
      };
      if (!ts.Tag(&field, &wt)) return fail("field");
      std::string_view sub;
      if (wt == kLen && field >= 1 && field <= 4) {
        if (!ts.Bytes(&sub)) return fail("field");
        if (field == 1) {
          std::string_view name, value;
          if (!ParseLabel(sub, &name, &value)) return fail("labels");
          labels.emplace_back(name, value);
        } else if (field == 2) {
          if (!ParseSample(sub, &series.samples.emplace_back())) return fail("samples");
        } else if (field == 3) {
          if (!ValidExemplar(sub)) return fail("exemplars");
        } else {
          if (!WireReader(sub).SkipMessage(2)) return fail("histograms");
          histograms = true;
        }
      } else if (!ts.Skip(field, wt, 1)) {
        return fail("field");
      }
    }
    if (histograms) return SeriesError(index, "native histograms are not supported");
    auto built = BuildLabels(index, labels);
    if (!built.ok()) return built.status();
    series.labels = std::move(built.value());
    if (Status st = visit(index, series); !st.ok()) return st;
    ++index;
  }
  return Status::Ok();
}

}  // namespace gpumon::remote
