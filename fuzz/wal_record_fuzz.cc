// Fuzz target for the WAL frame decoder and the record decoders. Any byte
// string must decode to records or to a clean stop (end, torn tail,
// corruption with an offset inside the input) — never a crash, hang, leak,
// out-of-bounds read or unbounded allocation. The first byte picks a mode:
//   0: the rest is a segment file, decoded as newest and as older segment,
//      each record then fed to the record decoders;
//   1: the rest is one record, fed to every record decoder;
//   2: the rest is cut into payloads that are framed into a valid segment,
//      then truncated; every record before the cut must come back intact
//      and the cut must read as a torn tail, never as corruption.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "tsdb/record/record.h"
#include "tsdb/wal/frame.h"
#include "tsdb/wal/segment.h"

namespace {

using namespace gpumon::tsdb;  // NOLINT: fuzz harness brevity

void Check(bool ok) {
  if (!ok) std::abort();
}

bool SameSamples(const std::vector<record::RefSample>& a, const std::vector<record::RefSample>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].ref != b[i].ref || a[i].t != b[i].t ||
        std::bit_cast<uint64_t>(a[i].v) != std::bit_cast<uint64_t>(b[i].v)) {
      return false;
    }
  }
  return true;
}

// Decodes with every decoder; whatever decodes must survive a re-encode.
void DecodeRecord(std::span<const uint8_t> rec) {
  std::vector<record::RefSeries> series, series2;
  std::vector<record::RefSample> samples, samples2;
  std::vector<record::RefTombstone> stones, stones2;
  const record::RecordType type = record::PeekType(rec);
  if (record::DecodeSeries(rec, &series).ok()) {
    Check(type == record::RecordType::kSeries);
    Check(record::DecodeSeries(record::EncodeSeries(series), &series2).ok() && series == series2);
  }
  if (record::DecodeSamples(rec, &samples).ok()) {
    Check(type == record::RecordType::kSamples);
    Check(record::DecodeSamples(record::EncodeSamples(samples), &samples2).ok() &&
          SameSamples(samples, samples2));
  }
  if (record::DecodeTombstones(rec, &stones).ok()) {
    Check(type == record::RecordType::kTombstones);
    Check(record::DecodeTombstones(record::EncodeTombstones(stones), &stones2).ok() &&
          stones == stones2);
  }
}

void DecodeSegment(std::span<const uint8_t> bytes, bool last) {
  wal::SegmentDecoder d(bytes, last);
  wal::FrameResult r;
  uint64_t prev_end = 0;
  while ((r = d.Next()) == wal::FrameResult::kRecord) {
    Check(d.record_offset() >= prev_end);
    Check(d.record().data() >= bytes.data() &&
          d.record().data() + d.record().size() <= bytes.data() + bytes.size());
    prev_end = d.offset();
    DecodeRecord(d.record());
  }
  Check(d.offset() <= bytes.size());
  Check(r != wal::FrameResult::kTorn || last);
  Check(r == wal::FrameResult::kEnd || !d.reason().empty());
  Check(d.Next() == r);
}

void FramedThenCut(std::span<const uint8_t> input) {
  if (input.size() < 2) return;
  const size_t cut_seed = input[0] | (input[1] << 8);
  input = input.subspan(2);
  std::vector<uint8_t> seg(wal::kSegmentHeaderSize);
  wal::WriteSegmentHeader(seg.data());
  std::vector<std::span<const uint8_t>> payloads;
  std::vector<size_t> ends;
  while (!input.empty()) {
    size_t n = std::min<size_t>(input[0], input.size() - 1);
    payloads.push_back(input.subspan(1, n));
    input = input.subspan(1 + n);
    uint8_t h[wal::kFrameHeaderSize];
    wal::EncodeFrameHeader(payloads.back(), h);
    seg.insert(seg.end(), h, h + wal::kFrameHeaderSize);
    seg.insert(seg.end(), payloads.back().begin(), payloads.back().end());
    ends.push_back(seg.size());
  }
  const size_t cut = cut_seed % (seg.size() + 1);
  wal::SegmentDecoder d(std::span<const uint8_t>(seg.data(), cut), /*last=*/true);
  size_t i = 0;
  wal::FrameResult r;
  while ((r = d.Next()) == wal::FrameResult::kRecord) {
    Check(i < payloads.size() && ends[i] <= cut);
    Check(std::equal(d.record().begin(), d.record().end(), payloads[i].begin(), payloads[i].end()));
    ++i;
  }
  Check(r != wal::FrameResult::kCorrupt);
  // Every frame that ends at or before the cut was returned.
  Check(i == payloads.size() || ends[i] > cut);
  Check(r == wal::FrameResult::kEnd
            ? (cut == 0 || (i == 0 ? cut == wal::kSegmentHeaderSize : ends[i - 1] == cut))
            : true);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::span<const uint8_t> rest(data + 1, size - 1);
  switch (data[0] % 3) {
    case 0:
      DecodeSegment(rest, /*last=*/true);
      DecodeSegment(rest, /*last=*/false);
      break;
    case 1:
      DecodeRecord(rest);
      break;
    default:
      FramedThenCut(rest);
      break;
  }
  return 0;
}
