// Fuzz target for the block readers: the input is split into an index file
// and a chunk segment ([u32 little-endian index length][index][segment]);
// both are opened, with and without checksum verification, and everything
// is read: symbols, label names and values, every series and postings list,
// matcher evaluation, every chunk record, and each series' samples through
// the block's chunk iterator. The whole input is also decoded as a
// tombstones file and as meta.json. Any outcome but a crash, hang, leak or
// out-of-bounds access is fine; errors must name their file.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "tsdb/block/chunk_segments.h"
#include "tsdb/block/chunk_series_iterator.h"
#include "tsdb/block/meta.h"
#include "tsdb/block/tombstones.h"
#include "tsdb/chunkenc/chunk.h"
#include "tsdb/index/encoding.h"
#include "tsdb/index/index_reader.h"
#include "tsdb/index/postings_for_matchers.h"

namespace {

using gpumon::Status;
using gpumon::tsdb::Matcher;
using gpumon::tsdb::MatchType;
using gpumon::tsdb::block::ChunkReader;
using gpumon::tsdb::block::ChunkSeriesIterator;
using gpumon::tsdb::index::IndexReader;

void CheckNamed(const Status& s, std::string_view name) {
  if (!s.ok() && s.message().find(name) == std::string::npos) std::abort();
}

void ReadChunks(const ChunkReader& chunks) {
  for (size_t s = 0; s < chunks.num_segments(); ++s) {
    Status st = chunks.ForEachChunk(s, [](uint64_t, std::span<const uint8_t> bytes) {
      auto it = gpumon::tsdb::chunkenc::NewIterator(bytes);
      while (it->Next()) {
      }
      (void)gpumon::tsdb::chunkenc::CountSamples(bytes);
    });
    CheckNamed(st, "seg");
  }
}

void ReadIndex(const IndexReader& ix, const ChunkReader* chunks) {
  for (std::string_view name : ix.LabelNames()) {
    auto values = ix.LabelValues(name);
    std::vector<Matcher> ms;
    ms.push_back(Matcher::Make(MatchType::kRegexMatch, std::string(name), ".+").value());
    if (!values.empty()) {
      ms.push_back(Matcher::Make(MatchType::kNotEqual, "x", std::string(values[0])).value());
    }
    CheckNamed(gpumon::tsdb::index::PostingsForMatchers(ix, ms).status(), "idx");
    ms = {Matcher::Make(MatchType::kEqual, std::string(name), "").value()};
    CheckNamed(gpumon::tsdb::index::PostingsForMatchers(ix, ms).status(), "idx");
  }
  gpumon::tsdb::index::Postings p;
  for (uint32_t i = 0; i < ix.num_postings_entries(); ++i) {
    CheckNamed(ix.ReadPostings(ix.PostingsEntryAt(i), &p), "idx");
  }
  IndexReader::SeriesRefs refs;
  for (uint64_t id = 0; id < ix.num_series(); ++id) {
    Status s = ix.ReadSeries(id, &refs);
    CheckNamed(s, "idx");
    if (!s.ok()) continue;
    (void)ix.ToLabels(refs.labels);
    if (chunks == nullptr || refs.chunks.empty()) continue;
    gpumon::tsdb::block::Intervals deleted{{refs.chunks[0].mint, refs.chunks[0].mint}};
    ChunkSeriesIterator it(nullptr, chunks, refs.chunks, deleted, refs.chunks[0].mint,
                           refs.chunks.back().maxt);
    int64_t last = 0;
    bool first = true;
    while (it.Next()) {
      if (!first && it.At().t <= last) std::abort();  // order promise broken
      last = it.At().t;
      first = false;
    }
  }
  CheckNamed(ix.Verify(), "idx");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> in(data, size);
  std::span<const uint8_t> index_bytes = in, segment_bytes;
  if (size >= 4) {
    uint64_t n = gpumon::tsdb::index::LoadU32(data);
    if (n <= size - 4) {
      index_bytes = in.subspan(4, n);
      segment_bytes = in.subspan(4 + n);
    }
  }
  for (bool verify : {false, true}) {
    ChunkReader chunks;
    bool have_chunks = false;
    auto cr = ChunkReader::Open({{1, segment_bytes, "seg"}}, {.verify_checksums = verify});
    CheckNamed(cr.status(), "seg");
    if (cr.ok()) {
      chunks = std::move(cr).value();
      have_chunks = true;
      ReadChunks(chunks);
    }
    auto ix = IndexReader::Open(index_bytes, "idx", {.verify_checksums = verify});
    CheckNamed(ix.status(), "idx");
    if (ix.ok()) ReadIndex(*ix, have_chunks ? &chunks : nullptr);
  }
  CheckNamed(gpumon::tsdb::block::DecodeTombstones(in, "tomb").status(), "tomb");
  std::string_view text(reinterpret_cast<const char*>(data), size);
  CheckNamed(gpumon::tsdb::block::MetaFromJson(text, "meta").status(), "meta");
  return 0;
}
