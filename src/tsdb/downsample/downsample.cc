#include "tsdb/downsample/downsample.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <memory>
#include <vector>

#include "tsdb/block/block_writer.h"
#include "tsdb/block/ulid.h"
#include "tsdb/chunkenc/chunk.h"
#include "tsdb/downsample/series_spill.h"
#include "tsdb/downsample/window_aggregator.h"

namespace gpumon::tsdb::downsample {
namespace {

namespace fs = std::filesystem;

// Chunks of one output series and the bytes they point to.
struct EncodedChunks {
  std::vector<std::vector<uint8_t>> bytes;
  std::vector<block::ChunkData> chunks;

  void Encode(std::span<const Sample> samples, size_t per_chunk) {
    bytes.clear();
    chunks.clear();
    for (size_t i = 0; i < samples.size(); i += per_chunk) {
      auto part = samples.subspan(i, std::min(per_chunk, samples.size() - i));
      bytes.push_back(chunkenc::EncodeBest(part));
      chunks.push_back({part.front().t, part.back().t, {}});
    }
    for (size_t i = 0; i < chunks.size(); ++i) chunks[i].bytes = bytes[i];
  }
};

// A scratch directory removed on every exit path.
class ScratchDir {
 public:
  explicit ScratchDir(std::string path) : path_(std::move(path)) {}
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  Status Create() {
    std::error_code ec;
    fs::create_directories(path_, ec);
    if (ec) return Status::Error("create " + path_ + ": " + ec.message());
    return Status::Ok();
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

size_t PerChunk(const DownsampleOptions& o) {
  return static_cast<size_t>(std::clamp(o.samples_per_chunk, 1, chunkenc::kMaxSamples));
}

Status ReadSamples(const block::ChunkSeriesSet& set, std::vector<Sample>* out) {
  out->clear();
  auto it = set.Iterator();
  while (it->Next()) out->push_back(it->At());
  if (!it->status().ok()) return it->status().WithContext("series " + set.labels().ToString());
  return Status::Ok();
}

// Raw input: five aggregates per series, spilled per aggregate and merged
// back into label order.
Status DownsampleRaw(const std::string& data_dir, block::ChunkSeriesSet& set, int64_t resolution,
                     const DownsampleOptions& options, block::BlockWriter& writer,
                     DownsampleStats* stats) {
  ScratchDir scratch(data_dir + "/" + block::NewUlid() + ".spill" + block::kTmpForCreationSuffix);
  if (Status s = scratch.Create(); !s.ok()) return s;
  std::array<std::unique_ptr<SpillWriter>, kNumAggregates> spills;
  for (Aggregate a : kAllAggregates) {
    auto w = SpillWriter::Create(scratch.path() + "/" + std::string(AggregateName(a)));
    if (!w.ok()) return w.status();
    spills[static_cast<size_t>(a)] = std::move(w).value();
  }
  // Each spill must be in label order for the merge. Adding __aggr__ keeps
  // the input order except for series without labels sorting after it
  // (e.g. no __name__); those rare ones wait in memory.
  struct Misfit {
    Labels labels;
    EncodedChunks chunks;
  };
  std::vector<Misfit> misfits;
  std::array<Labels, kNumAggregates> last;
  std::array<bool, kNumAggregates> have_last{};

  const size_t per_chunk = PerChunk(options);
  RawAggregator agg(resolution);
  std::vector<Sample> samples;
  EncodedChunks enc;
  while (set.Next()) {
    if (set.labels().Has(kAggrLabel)) {
      stats->skipped_series++;
      continue;
    }
    stats->input_series++;
    if (Status s = ReadSamples(set, &samples); !s.ok()) return s;
    stats->input_samples += samples.size();
    agg.Clear();
    for (const Sample& s : samples) agg.Add(s.t, s.v);
    agg.Finish();
    for (Aggregate a : kAllAggregates) {
      const auto& out = agg.Get(a);
      if (out.empty()) continue;
      const size_t k = static_cast<size_t>(a);
      Labels labels = WithAggregate(set.labels(), a);
      enc.Encode(out, per_chunk);
      stats->output_series++;
      stats->output_samples += out.size();
      if (have_last[k] && !(last[k] < labels)) {
        misfits.push_back({std::move(labels), std::move(enc)});
        enc = EncodedChunks();
        continue;
      }
      if (Status s = spills[k]->Add(labels, enc.chunks); !s.ok()) return s;
      last[k] = std::move(labels);
      have_last[k] = true;
    }
  }
  if (!set.status().ok()) return set.status();

  std::array<std::unique_ptr<SpillReader>, kNumAggregates> readers;
  std::array<bool, kNumAggregates> has{};
  auto advance = [&](size_t k) -> Status {
    has[k] = readers[k]->Next();
    return readers[k]->status();
  };
  for (size_t k = 0; k < kNumAggregates; ++k) {
    if (Status s = spills[k]->Close(); !s.ok()) return s;
    auto r = SpillReader::Open(spills[k]->path());
    if (!r.ok()) return r.status();
    readers[k] = std::move(r).value();
    if (Status s = advance(k); !s.ok()) return s;
  }
  std::sort(misfits.begin(), misfits.end(),
            [](const Misfit& a, const Misfit& b) { return a.labels < b.labels; });
  size_t next_misfit = 0;
  while (true) {
    const Labels* min = nullptr;
    size_t from = kNumAggregates;  // kNumAggregates: the misfits
    for (size_t k = 0; k < kNumAggregates; ++k) {
      if (has[k] && (min == nullptr || readers[k]->labels() < *min)) {
        min = &readers[k]->labels();
        from = k;
      }
    }
    if (next_misfit < misfits.size() && (min == nullptr || misfits[next_misfit].labels < *min)) {
      const Misfit& m = misfits[next_misfit++];
      if (Status s = writer.AddSeries(m.labels, m.chunks.chunks); !s.ok()) return s;
      continue;
    }
    if (min == nullptr) break;
    if (Status s = writer.AddSeries(*min, readers[from]->chunks()); !s.ok()) return s;
    if (Status s = advance(from); !s.ok()) return s;
  }
  return Status::Ok();
}

// Downsampled input: every aggregate series is coarsened on its own and
// keeps its labels, so input order is output order.
Status DownsampleAggregates(block::ChunkSeriesSet& set, int64_t resolution,
                            const DownsampleOptions& options, block::BlockWriter& writer,
                            DownsampleStats* stats) {
  std::array<std::unique_ptr<AggregateCoarsener>, kNumAggregates> coarseners;
  for (Aggregate a : kAllAggregates) {
    coarseners[static_cast<size_t>(a)] = std::make_unique<AggregateCoarsener>(a, resolution);
  }
  const size_t per_chunk = PerChunk(options);
  std::vector<Sample> samples;
  EncodedChunks enc;
  while (set.Next()) {
    const auto kind =
        set.labels().Has(kAggrLabel) ? ParseAggregate(set.labels().Get(kAggrLabel)) : std::nullopt;
    if (!kind) {
      stats->skipped_series++;
      continue;
    }
    stats->input_series++;
    if (Status s = ReadSamples(set, &samples); !s.ok()) return s;
    stats->input_samples += samples.size();
    AggregateCoarsener& c = *coarseners[static_cast<size_t>(*kind)];
    c.Clear();
    for (const Sample& s : samples) c.Add(s.t, s.v);
    c.Finish();
    if (c.Get().empty()) continue;
    enc.Encode(c.Get(), per_chunk);
    if (Status s = writer.AddSeries(set.labels(), enc.chunks); !s.ok()) return s;
    stats->output_series++;
    stats->output_samples += c.Get().size();
  }
  return set.status();
}

}  // namespace

Result<std::string> Downsample(const std::string& data_dir, const block::Block& input,
                               int64_t resolution_ms, const DownsampleOptions& options,
                               DownsampleStats* stats) {
  const block::BlockMeta& in = input.meta();
  const int64_t from = in.downsample_resolution_ms;
  if (resolution_ms <= 0) {
    return Status::Error("downsample: resolution " + std::to_string(resolution_ms) +
                         " is not positive");
  }
  if (from >= resolution_ms || (from > 0 && resolution_ms % from != 0)) {
    return Status::Error("downsample: block " + in.id + " of resolution " + std::to_string(from) +
                         " cannot be downsampled to " + std::to_string(resolution_ms));
  }
  block::BlockWriterOptions wo;
  wo.min_time = in.min_time;
  wo.max_time = in.max_time;
  wo.compaction_level = in.compaction_level;
  wo.sources = in.sources;
  wo.parents = {{in.id, in.min_time, in.max_time}};
  wo.downsample_resolution_ms = resolution_ms;
  wo.segment_size = options.segment_size;
  auto writer = block::BlockWriter::Create(data_dir, wo);
  if (!writer.ok()) return writer.status();

  DownsampleStats local;
  auto set = input.ChunkSelect({}, kMinTime, kMaxTime);
  Status s = from == 0 ? DownsampleRaw(data_dir, *set, resolution_ms, options, **writer, &local)
                       : DownsampleAggregates(*set, resolution_ms, options, **writer, &local);
  if (!s.ok()) return s.WithContext("downsample " + input.dir());
  auto dir = (*writer)->Finish();
  if (stats != nullptr) *stats = local;
  return dir;
}

}  // namespace gpumon::tsdb::downsample
