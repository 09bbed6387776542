// WAL record payloads: what the head logs so it can rebuild itself after a
// restart. A record is one type byte followed by a type-specific body; the
// WAL frames and checksums records but never looks inside them. Format in
// docs/formats/wal.md.
//
// Contract:
// - Encoders replace the contents of *out (reusing its capacity, so a hot
//   commit path allocates nothing in steady state) and never fail.
// - Every value round-trips exactly: refs and timestamps over their whole
//   range (deltas wrap), floats as raw bit patterns (NaN payloads such as
//   the stale marker, -0.0, subnormals), label names and values as bytes
//   (empty values included).
// - Decoders take untrusted bytes (the CRC only proves the bytes are what
//   was written, not that a valid encoder wrote them). They never read out
//   of bounds, never allocate more than the input can describe (counts are
//   capped by the bytes left), and on malformed input return an error
//   naming the record type, the entry and the byte offset. On error *out
//   holds the entries decoded so far and must not be used.
// - Decoded series labels are checked to be strictly sorted by name (the
//   Labels invariant); anything else is an error.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "common/labels.h"
#include "common/status.h"

namespace gpumon::tsdb::record {

enum class RecordType : uint8_t {
  kInvalid = 0,  // never written; also what PeekType returns for unknown bytes
  kSeries = 1,
  kSamples = 2,
  kTombstones = 3,
};

std::string_view RecordTypeName(RecordType type);

// A new series and the reference the head gave it; samples and tombstones
// refer to series by this ref.
struct RefSeries {
  uint64_t ref = 0;
  Labels labels;
  bool operator==(const RefSeries&) const = default;
};

struct RefSample {
  uint64_t ref = 0;
  int64_t t = 0;
  double v = 0;
};

// Samples of series `ref` in [mint, maxt] (both inclusive) are deleted.
struct RefTombstone {
  uint64_t ref = 0;
  int64_t mint = 0;
  int64_t maxt = 0;
  bool operator==(const RefTombstone&) const = default;
};

void EncodeSeries(std::span<const RefSeries> series, std::vector<uint8_t>* out);
void EncodeSamples(std::span<const RefSample> samples, std::vector<uint8_t>* out);
void EncodeTombstones(std::span<const RefTombstone> tombstones, std::vector<uint8_t>* out);

std::vector<uint8_t> EncodeSeries(std::span<const RefSeries> series);
std::vector<uint8_t> EncodeSamples(std::span<const RefSample> samples);
std::vector<uint8_t> EncodeTombstones(std::span<const RefTombstone> tombstones);

// The type of a record from its first byte; kInvalid for an empty record or
// an unknown type byte.
RecordType PeekType(std::span<const uint8_t> record);

// Decoders replace the contents of *out.
Status DecodeSeries(std::span<const uint8_t> record, std::vector<RefSeries>* out);
Status DecodeSamples(std::span<const uint8_t> record, std::vector<RefSample>* out);
Status DecodeTombstones(std::span<const uint8_t> record, std::vector<RefTombstone>* out);

}  // namespace gpumon::tsdb::record
