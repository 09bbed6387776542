// Head: the in-memory, writable part of the TSDB. It holds the most recent
// samples of every active series in compressed chunks, indexes series by
// label (postings) and answers queries while appenders write.
//
// Contract:
// - Series are identified by their label set (labels with empty values are
//   dropped, as absent labels read as ""). Each series gets a ref, assigned
//   monotonically and never reused, that appenders may pass back to skip
//   the label lookup. ReplaySeries restores refs from the WAL.
// - Appends are validated per series: a sample must be newer than the
//   series' last committed sample, or, with an out-of-order window W > 0,
//   no older than last - W (such samples are kept apart and merged on
//   read). Same timestamp and same value bits: silently ignored. Same
//   timestamp, other value: "duplicate sample for timestamp". Samples older
//   than MinValidTime() (data already cut into blocks) are "out of bounds".
//   Errors name the series and the timestamps. A series' first sample is
//   accepted at any timestamp (kMinTime included).
// - health(): rejected and lost samples by cause, and whether WAL writes
//   currently work (the server's readiness; see storage_health.h).
// - Commit is all or nothing: it re-validates every buffered sample, logs
//   new series and the samples to the WalSink (if set), and only then makes
//   them visible. Commits are serialized; appenders and queriers may run on
//   any number of threads.
// - A Select sees a commit-consistent snapshot taken when it is called:
//   every commit either entirely or not at all. Samples are restricted to
//   [max(mint, MinValidTime()), maxt].
// - Chunks: the open chunk of a series is XOR-encoded; it is cut after
//   samples_per_chunk samples or when a sample crosses a multiple of
//   chunk_range_ms, and then re-encoded with chunkenc::EncodeBest.
// - The head must outlive its appenders and queriers (and series sets and
//   iterators obtained from them).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/labels.h"
#include "common/status.h"
#include "tsdb/head/mem_postings.h"
#include "tsdb/head/series.h"
#include "tsdb/head/series_directory.h"
#include "tsdb/head/series_table.h"
#include "tsdb/head/symbol_table.h"
#include "tsdb/head/wal_sink.h"
#include "tsdb/index/postings.h"
#include "tsdb/matcher.h"
#include "tsdb/storage.h"
#include "tsdb/storage_health.h"

namespace gpumon::tsdb::head {

struct HeadOptions {
  // Chunks are cut at multiples of this (the block range), so no chunk
  // spans two blocks. <= 0: no time-based cut.
  int64_t chunk_range_ms = 2LL * 3600 * 1000;
  // Samples per chunk before it is cut (1..65535).
  int samples_per_chunk = 120;
  // Out-of-order window relative to a series' last sample; 0 rejects every
  // out-of-order sample.
  int64_t ooo_window_ms = 0;
};

struct LabelCardinality {
  std::string name;
  size_t values = 0;  // distinct values
  size_t series = 0;  // series carrying the label
};

struct HeadStats {
  size_t series = 0;
  uint64_t samples = 0;
  size_t chunks = 0;  // closed + open
  uint64_t ooo_samples = 0;
  size_t symbols = 0;
  // Estimated heap bytes: series objects, chunks, lookup tables, postings,
  // symbols.
  size_t memory_bytes = 0;
  size_t series_bytes = 0;  // series objects and their chunks
  size_t index_bytes = 0;   // postings, symbols, lookup tables
  int64_t min_time = kMaxTime;
  int64_t max_time = kMinTime;
  // Label names with the most distinct values, descending.
  std::vector<LabelCardinality> top_labels;
  // WAL replay: samples of unknown series, and samples skipped as invalid.
  uint64_t replay_unknown_refs = 0;
  uint64_t replay_skipped_samples = 0;
};

// One chunk of a series handed to the block writer; mint/maxt are the times
// of its first and last samples.
struct ChunkData {
  int64_t mint = 0;
  int64_t maxt = 0;
  std::span<const uint8_t> bytes;
};
// Receives one series; the spans are valid only during the call. A non-OK
// status stops the iteration and is returned.
using SeriesChunksFn =
    std::function<Status(uint64_t ref, const Labels& labels, std::span<const ChunkData> chunks)>;

class HeadAppender;
class HeadQuerier;

class Head {
 public:
  explicit Head(HeadOptions options = {});
  ~Head();
  Head(const Head&) = delete;
  Head& operator=(const Head&) = delete;

  std::unique_ptr<HeadAppender> Appender();
  // A querier over [mint, maxt] (both inclusive).
  std::unique_ptr<tsdb::Querier> Querier(int64_t mint, int64_t maxt) const;

  // Time of the oldest/newest sample held (kMaxTime/kMinTime when empty).
  int64_t MinTime() const { return min_time_.load(std::memory_order_acquire); }
  int64_t MaxTime() const { return max_time_.load(std::memory_order_acquire); }
  size_t NumSeries() const { return num_series_.load(std::memory_order_relaxed); }
  // Samples committed since the head was created (WAL replay excluded).
  uint64_t SamplesAppended() const { return samples_appended_.load(std::memory_order_relaxed); }
  HeadStats Stats(size_t top_k = 10) const;
  const HeadOptions& options() const { return opts_; }
  // Append failures by cause and whether WAL writes currently work.
  const StorageHealth& health() const { return health_; }
  StorageHealth& health() { return health_; }

  // Samples before this time are rejected as out of bounds (the DB sets it
  // to the end of its newest block; Truncate raises it).
  void SetMinValidTime(int64_t t);
  int64_t MinValidTime() const { return min_valid_time_.load(std::memory_order_acquire); }

  // Set before appending; not owned. Commits log to it before applying.
  void SetWalSink(WalSink* sink);

  // Start-up replay from the WAL, before any appender runs. A series record
  // whose labels already exist under another ref maps that ref to the
  // existing series. Samples of unknown refs, out-of-bounds and invalid
  // samples are skipped and counted (HeadStats), not errors.
  Status ReplaySeries(uint64_t ref, const Labels& labels);
  Status ReplaySamples(std::span<const RefSample> samples);
  Status ReplayTombstones(std::span<const record::RefTombstone> tombstones);

  // Whether a series with this ref is held (for WAL checkpoints).
  bool HasSeries(uint64_t ref) const;

  // Calls fn for every series with samples in [mint, maxt) (maxt exclusive,
  // as block ranges are), in label order, with its chunks restricted to the
  // range: closed chunks inside the range as they are, the rest re-encoded.
  Status ForEachSeriesInRange(int64_t mint, int64_t maxt, const SeriesChunksFn& fn) const;

  // Drops chunks entirely before mint and the series left without data,
  // and raises MinValidTime to mint.
  Status Truncate(int64_t mint);

  // Deletes the samples in [mint, maxt] (inclusive) of the series matching
  // all matchers, rewriting the affected chunks; logs tombstones to the WAL
  // sink first.
  Status Delete(std::span<const Matcher> matchers, int64_t mint, int64_t maxt);

 private:
  friend class HeadAppender;
  friend class HeadQuerier;

  static constexpr int kStripeBits = 12;
  static constexpr size_t kStripes = size_t{1} << kStripeBits;
  // Series by label hash (for appends by labels), in lock stripes.
  struct alignas(64) HashStripe {
    mutable std::mutex mu;
    SeriesTable<LabelsKeyHash> table;
  };
  // Closed-chunk buffers replaced (by cuts, truncation, deletion) while
  // queriers may still read them; freed when the last querier holding this
  // epoch is gone.
  // Each epoch holds the next one, so bytes retired in a later epoch
  // outlive every reader that started before them, not only that epoch's.
  struct Epoch {
    std::vector<uint8_t*> garbage;
    std::shared_ptr<Epoch> next;
    ~Epoch();
  };

  // Lookups; take_pending registers an appender on the series (under the
  // series' directory lock, so garbage collection cannot race it). Without
  // it the caller must hold commit_mu_ or apply_mu_ to keep the series.
  Series* LookupRef(uint64_t ref, bool take_pending) const;
  void PrefetchSeries(uint64_t ref) const {
    if (const Series* s = series_.Get(ref)) __builtin_prefetch(s);
  }
  Result<Series*> GetOrCreate(const Labels& labels, uint64_t want_ref, bool take_pending);
  // Sorted refs of the series matching all matchers.
  Result<index::Postings> Postings(std::span<const Matcher> matchers) const;
  std::string SeriesString(const Series* s) const;
  void NoteTimes(int64_t mint, int64_t maxt);
  void RotateEpoch(std::vector<uint8_t*> garbage);  // apply_mu_ held exclusively
  // Applies a validated in-order or out-of-order sample during replay.
  bool ReplayOne(Series* s, int64_t t, double v, std::vector<uint8_t*>* garbage);
  Status CommitBatch(HeadAppender* app);

  const HeadOptions opts_;
  const ChunkOptions chunk_opts_;
  WalSink* wal_ = nullptr;
  StorageHealth health_;

  // Lock order: commit_mu_, apply_mu_, a hash stripe, index_mu_, a
  // directory lock. commit_mu_ serializes writers of sample data (commits, truncate,
  // delete, replay); apply_mu_ is held exclusively while they mutate series
  // data and shared by readers taking snapshots.
  mutable std::mutex commit_mu_;
  mutable std::shared_mutex apply_mu_;
  mutable std::shared_mutex index_mu_;
  SymbolTable symbols_;   // writes under index_mu_; Get is lock-free
  MemPostings postings_;  // under index_mu_
  SeriesDirectory series_;
  std::unique_ptr<HashStripe[]> hash_stripes_;
  std::shared_ptr<Epoch> epoch_;  // under apply_mu_

  std::atomic<uint64_t> next_ref_{1};
  std::atomic<size_t> num_series_{0};
  std::atomic<uint64_t> samples_appended_{0};
  std::atomic<int64_t> min_time_{kMaxTime};
  std::atomic<int64_t> max_time_{kMinTime};
  std::atomic<int64_t> min_valid_time_{kMinTime};

  // Under commit_mu_.
  std::unordered_map<uint64_t, uint64_t> replay_aliases_;
  uint64_t replay_unknown_refs_ = 0;
  uint64_t replay_skipped_samples_ = 0;
  std::vector<RefSeries> wal_series_scratch_;
  std::vector<RefSample> wal_samples_scratch_;
};

}  // namespace gpumon::tsdb::head
