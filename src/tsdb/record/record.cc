#include "tsdb/record/record.h"

#include <bit>
#include <string>

#include "tsdb/record/varint.h"

namespace gpumon::tsdb::record {
namespace {

// Smallest encoded size of one entry, used to cap counts read from
// untrusted input before reserving memory.
constexpr size_t kMinSeriesEntry = 2;     // ref delta + label count
constexpr size_t kMinSampleEntry = 10;    // ref delta + time delta + 8-byte value
constexpr size_t kMinTombstoneEntry = 3;  // ref delta + mint + span

// Deltas are taken with wrapping unsigned arithmetic and stored zigzagged,
// so any pair of 64-bit values round-trips and small steps in either
// direction stay short.
inline uint64_t Delta(uint64_t cur, uint64_t prev) {
  return ZigZag(static_cast<int64_t>(cur - prev));
}
inline uint64_t Undelta(uint64_t prev, int64_t delta) {
  return prev + static_cast<uint64_t>(delta);
}

void StartRecord(RecordType type, size_t count, std::vector<uint8_t>* out) {
  out->clear();
  out->push_back(static_cast<uint8_t>(type));
  PutUvarint(out, count);
}

Status Malformed(RecordType type, const std::string& what, size_t offset) {
  return Status::Error(std::string(RecordTypeName(type)) + " record: " + what + " at byte " +
                       std::to_string(offset));
}

Status EntryError(RecordType type, uint64_t index, uint64_t count, const char* what,
                  size_t offset) {
  return Malformed(type,
                   "entry " + std::to_string(index) + " of " + std::to_string(count) + ": " + what,
                   offset);
}

// Reads the type byte and the entry count, checking the count against the
// bytes that remain.
Status ReadHeader(ByteReader& r, RecordType want, size_t min_entry, uint64_t* count) {
  uint8_t type;
  if (!r.GetByte(&type)) return Malformed(want, "empty record", 0);
  if (type != static_cast<uint8_t>(want)) {
    return Malformed(
        want,
        "type byte is " + std::to_string(type) + ", want " + std::to_string(static_cast<int>(want)),
        0);
  }
  if (!r.GetUvarint(count)) return Malformed(want, "truncated entry count", r.offset());
  if (*count > r.remaining() / min_entry) {
    return Malformed(want,
                     "entry count " + std::to_string(*count) + " cannot fit in the " +
                         std::to_string(r.remaining()) + " bytes left",
                     r.offset());
  }
  return Status::Ok();
}

Status CheckEnd(const ByteReader& r, RecordType type) {
  if (!r.done()) {
    return Malformed(type, std::to_string(r.remaining()) + " trailing bytes", r.offset());
  }
  return Status::Ok();
}

}  // namespace

std::string_view RecordTypeName(RecordType type) {
  switch (type) {
    case RecordType::kSeries:
      return "series";
    case RecordType::kSamples:
      return "samples";
    case RecordType::kTombstones:
      return "tombstones";
    case RecordType::kInvalid:
      break;
  }
  return "invalid";
}

RecordType PeekType(std::span<const uint8_t> record) {
  if (record.empty()) return RecordType::kInvalid;
  switch (record[0]) {
    case static_cast<uint8_t>(RecordType::kSeries):
    case static_cast<uint8_t>(RecordType::kSamples):
    case static_cast<uint8_t>(RecordType::kTombstones):
      return static_cast<RecordType>(record[0]);
    default:
      return RecordType::kInvalid;
  }
}

void EncodeSeries(std::span<const RefSeries> series, std::vector<uint8_t>* out) {
  StartRecord(RecordType::kSeries, series.size(), out);
  uint64_t prev_ref = 0;
  for (const RefSeries& s : series) {
    PutUvarint(out, Delta(s.ref, prev_ref));
    prev_ref = s.ref;
    PutUvarint(out, s.labels.size());
    for (const Label& l : s.labels) {
      PutString(out, l.name);
      PutString(out, l.value);
    }
  }
}

void EncodeSamples(std::span<const RefSample> samples, std::vector<uint8_t>* out) {
  StartRecord(RecordType::kSamples, samples.size(), out);
  // Hot path (every commit): size once for the worst case and fill through
  // a raw pointer.
  size_t start = out->size();
  out->resize(start + samples.size() * (2 * kMaxVarintLen + 8));
  uint8_t* p = out->data() + start;
  uint64_t prev_ref = 0;
  uint64_t prev_t = 0;
  for (const RefSample& s : samples) {
    p = PutUvarintRaw(p, Delta(s.ref, prev_ref));
    p = PutUvarintRaw(p, Delta(static_cast<uint64_t>(s.t), prev_t));
    PutFixed64Raw(p, std::bit_cast<uint64_t>(s.v));
    p += 8;
    prev_ref = s.ref;
    prev_t = static_cast<uint64_t>(s.t);
  }
  out->resize(static_cast<size_t>(p - out->data()));
}

void EncodeTombstones(std::span<const RefTombstone> tombstones, std::vector<uint8_t>* out) {
  StartRecord(RecordType::kTombstones, tombstones.size(), out);
  uint64_t prev_ref = 0;
  for (const RefTombstone& ts : tombstones) {
    PutUvarint(out, Delta(ts.ref, prev_ref));
    prev_ref = ts.ref;
    PutVarint(out, ts.mint);
    PutUvarint(out, Delta(static_cast<uint64_t>(ts.maxt), static_cast<uint64_t>(ts.mint)));
  }
}

std::vector<uint8_t> EncodeSeries(std::span<const RefSeries> series) {
  std::vector<uint8_t> out;
  EncodeSeries(series, &out);
  return out;
}

std::vector<uint8_t> EncodeSamples(std::span<const RefSample> samples) {
  std::vector<uint8_t> out;
  EncodeSamples(samples, &out);
  return out;
}

std::vector<uint8_t> EncodeTombstones(std::span<const RefTombstone> tombstones) {
  std::vector<uint8_t> out;
  EncodeTombstones(tombstones, &out);
  return out;
}

Status DecodeSeries(std::span<const uint8_t> record, std::vector<RefSeries>* out) {
  constexpr RecordType kType = RecordType::kSeries;
  out->clear();
  ByteReader r(record);
  uint64_t count;
  if (Status s = ReadHeader(r, kType, kMinSeriesEntry, &count); !s.ok()) return s;
  out->reserve(count);
  uint64_t prev_ref = 0;
  for (uint64_t i = 0; i < count; ++i) {
    int64_t delta;
    uint64_t num_labels;
    if (!r.GetVarint(&delta)) return EntryError(kType, i, count, "truncated ref", r.offset());
    if (!r.GetUvarint(&num_labels)) {
      return EntryError(kType, i, count, "truncated label count", r.offset());
    }
    // Each label takes at least two bytes (two empty strings).
    if (num_labels > r.remaining() / 2) {
      return EntryError(kType, i, count, "label count exceeds the bytes left", r.offset());
    }
    prev_ref = Undelta(prev_ref, delta);
    std::vector<Label> labels;
    labels.reserve(num_labels);
    for (uint64_t j = 0; j < num_labels; ++j) {
      std::string_view name, value;
      if (!r.GetString(&name))
        return EntryError(kType, i, count, "truncated label name", r.offset());
      if (!r.GetString(&value)) {
        return EntryError(kType, i, count, "truncated label value", r.offset());
      }
      if (!labels.empty() && !(labels.back().name < name)) {
        return EntryError(kType, i, count, "label names not strictly sorted", r.offset());
      }
      labels.push_back(Label{std::string(name), std::string(value)});
    }
    out->push_back(RefSeries{prev_ref, Labels::FromSorted(std::move(labels))});
  }
  return CheckEnd(r, kType);
}

Status DecodeSamples(std::span<const uint8_t> record, std::vector<RefSample>* out) {
  constexpr RecordType kType = RecordType::kSamples;
  out->clear();
  ByteReader r(record);
  uint64_t count;
  if (Status s = ReadHeader(r, kType, kMinSampleEntry, &count); !s.ok()) return s;
  out->resize(count);
  RefSample* dst = out->data();
  uint64_t prev_ref = 0;
  uint64_t prev_t = 0;
  for (uint64_t i = 0; i < count; ++i) {
    int64_t dref, dt;
    uint64_t bits;
    if (!r.GetVarint(&dref) || !r.GetVarint(&dt) || !r.GetFixed64(&bits)) {
      out->resize(i);
      return EntryError(kType, i, count, "truncated sample", r.offset());
    }
    prev_ref = Undelta(prev_ref, dref);
    prev_t = Undelta(prev_t, dt);
    dst[i] = RefSample{prev_ref, static_cast<int64_t>(prev_t), std::bit_cast<double>(bits)};
  }
  return CheckEnd(r, kType);
}

Status DecodeTombstones(std::span<const uint8_t> record, std::vector<RefTombstone>* out) {
  constexpr RecordType kType = RecordType::kTombstones;
  out->clear();
  ByteReader r(record);
  uint64_t count;
  if (Status s = ReadHeader(r, kType, kMinTombstoneEntry, &count); !s.ok()) return s;
  out->reserve(count);
  uint64_t prev_ref = 0;
  for (uint64_t i = 0; i < count; ++i) {
    int64_t dref, mint, span;
    if (!r.GetVarint(&dref) || !r.GetVarint(&mint) || !r.GetVarint(&span)) {
      return EntryError(kType, i, count, "truncated tombstone", r.offset());
    }
    prev_ref = Undelta(prev_ref, dref);
    int64_t maxt = static_cast<int64_t>(Undelta(static_cast<uint64_t>(mint), span));
    out->push_back(RefTombstone{prev_ref, mint, maxt});
  }
  return CheckEnd(r, kType);
}

}  // namespace gpumon::tsdb::record
