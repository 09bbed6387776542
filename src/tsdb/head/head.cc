#include "tsdb/head/head.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <map>

#include "tsdb/chunkenc/chunk.h"
#include "tsdb/head/head_appender.h"
#include "tsdb/head/head_querier.h"
#include "tsdb/index/postings_for_matchers.h"

namespace gpumon::tsdb::head {

namespace {

constexpr uint64_t kHashMul = 0x9e3779b97f4a7c15ULL;

// A fast label-set hash for the head's own lookup table (never persisted).
uint64_t HashBytes(std::string_view s, uint64_t h) {
  h ^= s.size() * kHashMul;
  const char* p = s.data();
  size_t n = s.size();
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = std::rotl((h ^ w) * kHashMul, 31);
    p += 8;
    n -= 8;
  }
  if (n > 0) {
    uint64_t w = 0;
    std::memcpy(&w, p, n);
    h = std::rotl((h ^ w) * kHashMul, 31);
  }
  return h;
}

uint64_t HashLabels(const Labels& labels) {
  uint64_t h = 0x243f6a8885a308d3ULL;
  for (const Label& l : labels) {
    h = HashBytes(l.name, h);
    h = HashBytes(l.value, h);
  }
  return Mix64(h);
}

// Labels with empty values dropped (an absent label reads as ""), or an
// error for sets that cannot identify a series.
Status CanonicalLabels(const Labels& in, const Labels** out, Labels* storage) {
  bool has_empty = false;
  for (const Label& l : in) {
    if (l.name.empty()) return Status::Error("empty label name in series " + in.ToString());
    if (l.value.empty()) has_empty = true;
  }
  *out = &in;
  if (has_empty) {
    std::vector<Label> kept;
    for (const Label& l : in) {
      if (!l.value.empty()) kept.push_back(l);
    }
    *storage = Labels::FromSorted(std::move(kept));
    *out = storage;
  }
  if ((*out)->empty()) return Status::Error("empty label set");
  if ((*out)->size() > std::numeric_limits<uint16_t>::max()) {
    // The label set itself may be megabytes: name only its start.
    std::string start = in.ToString().substr(0, 200);
    return Status::Error("too many labels in series " + start +
                         "...: " + std::to_string((*out)->size()) + " labels, at most " +
                         std::to_string(std::numeric_limits<uint16_t>::max()));
  }
  return Status::Ok();
}

// Reads the head's postings under its index lock (held by the caller).
class HeadIndexView : public index::LabelIndexView {
 public:
  HeadIndexView(const SymbolTable& symbols, const MemPostings& postings)
      : symbols_(symbols), postings_(postings) {}

  Result<index::Postings> AllPostings() const override { return postings_.All(); }

  Result<index::Postings> PostingsFor(std::string_view name,
                                      std::string_view value) const override {
    auto n = symbols_.Find(name);
    auto v = symbols_.Find(value);
    if (!n || !v) return index::Postings{};
    const MemPostings::List* list = postings_.Get(*n, *v);
    return list ? *list : index::Postings{};
  }

  Result<index::Postings> PostingsForValues(
      std::string_view name, const std::function<bool(std::string_view)>& accept) const override {
    auto n = symbols_.Find(name);
    if (!n) return index::Postings{};
    std::vector<std::span<const uint64_t>> lists;
    postings_.ForEachValue(*n, [&](uint32_t value, const MemPostings::List& list) {
      if (accept(symbols_.Get(value))) lists.emplace_back(list);
    });
    if (lists.empty()) return index::Postings{};
    if (lists.size() == 1) return index::Postings(lists[0].begin(), lists[0].end());
    return index::MergeAll(lists);
  }

 private:
  const SymbolTable& symbols_;
  const MemPostings& postings_;
};

// Re-encodes samples into chunks of at most `per_chunk` samples.
void EncodeRuns(std::span<const Sample> samples, int per_chunk,
                std::vector<std::vector<uint8_t>>* owned, std::vector<ChunkData>* out) {
  for (size_t i = 0; i < samples.size(); i += static_cast<size_t>(per_chunk)) {
    auto run = samples.subspan(i, std::min(samples.size() - i, static_cast<size_t>(per_chunk)));
    owned->push_back(chunkenc::EncodeBest(run));
    out->push_back(ChunkData{run.front().t, run.back().t, {}});
  }
}

}  // namespace

Head::Epoch::~Epoch() {
  for (uint8_t* p : garbage) delete[] p;
  // Unlinks the chain iteratively: a reader held across many rotations
  // would otherwise free it by deep recursion.
  std::shared_ptr<Epoch> n = std::move(next);
  while (n != nullptr && n.use_count() == 1) {
    std::shared_ptr<Epoch> after = std::move(n->next);
    n.reset();
    n = std::move(after);
  }
}

Head::Head(HeadOptions options)
    : opts_(options),
      chunk_opts_{std::clamp(options.samples_per_chunk, 1, chunkenc::kMaxSamples),
                  options.chunk_range_ms},
      hash_stripes_(new HashStripe[kStripes]),
      epoch_(std::make_shared<Epoch>()) {}

Head::~Head() {
  series_.ForEach([](Series* s) { Series::Free(s); });
}

std::unique_ptr<HeadAppender> Head::Appender() {
  return std::unique_ptr<HeadAppender>(new HeadAppender(this));
}

std::unique_ptr<tsdb::Querier> Head::Querier(int64_t mint, int64_t maxt) const {
  return std::make_unique<HeadQuerier>(this, mint, maxt);
}

void Head::SetWalSink(WalSink* sink) {
  std::lock_guard commit(commit_mu_);
  wal_ = sink;
}

void Head::SetMinValidTime(int64_t t) {
  std::lock_guard commit(commit_mu_);
  min_valid_time_.store(t, std::memory_order_release);
}

Series* Head::LookupRef(uint64_t ref, bool take_pending) const {
  if (!take_pending) return series_.Get(ref);
  std::lock_guard lock(series_.LockFor(ref));
  Series* s = series_.Get(ref);
  if (s != nullptr) s->pending.fetch_add(1, std::memory_order_relaxed);
  return s;
}

bool Head::HasSeries(uint64_t ref) const {
  std::lock_guard lock(series_.LockFor(ref));
  return series_.Get(ref) != nullptr;
}

Result<Series*> Head::GetOrCreate(const Labels& labels, uint64_t want_ref, bool take_pending) {
  const Labels* lset;
  Labels storage;
  if (Status st = CanonicalLabels(labels, &lset, &storage); !st.ok()) return st;
  const uint64_t h = HashLabels(*lset);
  HashStripe& hs = hash_stripes_[h & (kStripes - 1)];
  std::lock_guard lock(hs.mu);
  Series* s = hs.table.Find(h, [&](const Series* c) { return c->LabelsEqual(*lset, symbols_); });
  if (s != nullptr) {
    if (take_pending) s->pending.fetch_add(1, std::memory_order_relaxed);
    return s;
  }
  std::vector<uint32_t> ids;
  ids.reserve(lset->size() * 2);
  uint64_t ref;
  {
    std::unique_lock index(index_mu_);
    // Assigned under the index lock so postings lists see increasing refs.
    ref = want_ref != 0 ? want_ref : next_ref_.fetch_add(1, std::memory_order_relaxed);
    if (ref > SeriesDirectory::kMaxRef) {
      return Status::Error("series ref " + std::to_string(ref) + " is beyond the head's limit of " +
                           std::to_string(SeriesDirectory::kMaxRef) + " (" + lset->ToString() +
                           ")");
    }
    for (const Label& l : *lset) {
      ids.push_back(symbols_.Intern(l.name));
      ids.push_back(symbols_.Intern(l.value));
    }
    postings_.Add(ref, ids);
  }
  s = Series::New(ref, h, ids);
  if (take_pending) s->pending.store(1, std::memory_order_relaxed);
  {
    std::lock_guard ref_lock(series_.LockFor(ref));
    series_.Set(ref, s);  // in range: checked above
  }
  hs.table.Insert(s);
  num_series_.fetch_add(1, std::memory_order_relaxed);
  return s;
}

Result<index::Postings> Head::Postings(std::span<const Matcher> matchers) const {
  std::shared_lock index(index_mu_);
  HeadIndexView view(symbols_, postings_);
  return index::PostingsForMatchers(view, matchers);
}

std::string Head::SeriesString(const Series* s) const { return s->ToLabels(symbols_).ToString(); }

void Head::NoteTimes(int64_t mint, int64_t maxt) {
  // Writers hold commit_mu_, so plain read-modify-write is enough.
  if (mint < min_time_.load(std::memory_order_relaxed)) {
    min_time_.store(mint, std::memory_order_release);
  }
  if (maxt > max_time_.load(std::memory_order_relaxed)) {
    max_time_.store(maxt, std::memory_order_release);
  }
}

void Head::RotateEpoch(std::vector<uint8_t*> garbage) {
  if (garbage.empty()) return;
  // Readers copy epoch_ only under the shared apply lock, which the caller
  // excludes, and an older epoch still alive would hold epoch_ too: a count
  // of 1 means no snapshot exists, so nothing can point at the bytes.
  if (epoch_.use_count() == 1) {
    for (uint8_t* p : garbage) delete[] p;
    return;
  }
  epoch_->garbage.insert(epoch_->garbage.end(), garbage.begin(), garbage.end());
  auto fresh = std::make_shared<Epoch>();
  epoch_->next = fresh;
  epoch_ = std::move(fresh);
}

Status Head::CommitBatch(HeadAppender* app) {
  auto& entries = app->entries_;
  auto& samples = app->samples_;
  std::lock_guard commit(commit_mu_);
  const int64_t min_valid = MinValidTime();
  const int64_t window = opts_.ooo_window_ms;
  for (auto& e : entries) {
    e.sim_has = e.series->has_last.load(std::memory_order_relaxed);
    e.sim_t = e.series->last_t.load(std::memory_order_relaxed);
    e.sim_v = e.series->last_v.load(std::memory_order_relaxed);
  }
  // (entry, t) → value bits of this batch, built only once an out-of-order
  // sample needs a duplicate check against the batch.
  std::map<std::pair<uint32_t, int64_t>, uint64_t> batch;
  bool batch_built = false;
  for (size_t i = 0; i < samples.size(); ++i) {
    auto& p = samples[i];
    auto& e = entries[p.entry];
    Series* s = e.series;
    if (p.t < min_valid) {
      return Status::Error("out of bounds sample: series " + SeriesString(s) + ": timestamp " +
                           std::to_string(p.t) + " < minimum valid time " +
                           std::to_string(min_valid));
    }
    if (!e.sim_has || p.t > e.sim_t) {
      p.kind = HeadAppender::kInOrder;
      e.sim_has = true;
      e.sim_t = p.t;
      e.sim_v = p.v;
    } else if (p.t == e.sim_t) {
      if (p.v != e.sim_v) {
        return Status::Error("duplicate sample for timestamp: series " + SeriesString(s) +
                             ": timestamp " + std::to_string(p.t) + " already has another value");
      }
      p.kind = HeadAppender::kSkip;
    } else {
      const bool in_window =
          window > 0 &&
          (e.sim_t < std::numeric_limits<int64_t>::min() + window || p.t >= e.sim_t - window);
      if (!in_window) {
        std::string msg = "out of order sample: series " + SeriesString(s) + ": timestamp " +
                          std::to_string(p.t) + " <= last " + std::to_string(e.sim_t);
        if (window > 0) {
          msg += " (outside the out-of-order window of " + std::to_string(window) + "ms)";
        }
        return Status::Error(msg);
      }
      if (!batch_built) {
        for (size_t j = 0; j < i; ++j) {
          if (samples[j].kind != HeadAppender::kSkip) {
            batch[{samples[j].entry, samples[j].t}] = samples[j].v;
          }
        }
        batch_built = true;
      }
      std::optional<uint64_t> existing;
      if (auto it = batch.find({p.entry, p.t}); it != batch.end()) {
        existing = it->second;
      } else {
        existing = s->ValueBitsAt(p.t);
      }
      if (existing) {
        if (*existing != p.v) {
          return Status::Error("duplicate sample for timestamp: series " + SeriesString(s) +
                               ": timestamp " + std::to_string(p.t) + " already has another value");
        }
        p.kind = HeadAppender::kSkip;
      } else {
        p.kind = HeadAppender::kOutOfOrder;
      }
    }
    if (batch_built && p.kind != HeadAppender::kSkip) batch[{p.entry, p.t}] = p.v;
  }

  if (wal_ != nullptr) {
    wal_series_scratch_.clear();
    for (const auto& e : entries) {
      if (!e.series->logged) {
        wal_series_scratch_.push_back(RefSeries{e.series->ref(), e.series->ToLabels(symbols_)});
      }
    }
    if (!wal_series_scratch_.empty()) {
      Status st = wal_->LogSeries(wal_series_scratch_);
      health_.RecordWalWrite(st);
      if (!st.ok()) return st.WithContext("commit: logging series to the WAL");
      for (const auto& e : entries) e.series->logged = true;
    }
    wal_samples_scratch_.clear();
    for (const auto& p : samples) {
      if (p.kind == HeadAppender::kSkip) continue;
      wal_samples_scratch_.push_back(
          RefSample{entries[p.entry].series->ref(), p.t, std::bit_cast<double>(p.v)});
    }
    if (!wal_samples_scratch_.empty()) {
      Status st = wal_->LogSamples(wal_samples_scratch_);
      health_.RecordWalWrite(st);
      if (!st.ok()) return st.WithContext("commit: logging samples to the WAL");
    }
  }

  int64_t bmin = kMaxTime, bmax = kMinTime;
  uint64_t appended = 0;
  std::vector<uint8_t*> garbage;  // closed-chunk buffers replaced by cuts
  std::unique_lock apply(apply_mu_);
  // Series are cold in a large head: fetch the series object well ahead,
  // then (once it has arrived) the end of its open chunk.
  constexpr size_t kPrefetchDistance = 8;
  constexpr size_t kSeriesPrefetchDistance = 2 * kPrefetchDistance;
  for (size_t i = 0; i < std::min(kSeriesPrefetchDistance, samples.size()); ++i) {
    __builtin_prefetch(entries[samples[i].entry].series);
  }
  for (size_t i = 0; i < std::min(kPrefetchDistance, samples.size()); ++i) {
    entries[samples[i].entry].series->PrefetchOpenChunk();
  }
  for (size_t i = 0; i < samples.size(); ++i) {
    const auto& p = samples[i];
    if (i + kSeriesPrefetchDistance < samples.size()) {
      __builtin_prefetch(entries[samples[i + kSeriesPrefetchDistance].entry].series);
    }
    if (i + kPrefetchDistance < samples.size()) {
      entries[samples[i + kPrefetchDistance].entry].series->PrefetchOpenChunk();
    }
    if (p.kind == HeadAppender::kSkip) continue;
    ++appended;
    Series* s = entries[p.entry].series;
    if (p.kind == HeadAppender::kInOrder) {
      s->AppendInOrder(p.t, std::bit_cast<double>(p.v), chunk_opts_, &garbage);
    } else {
      s->InsertOoo(p.t, std::bit_cast<double>(p.v));
    }
    bmin = std::min(bmin, p.t);
    bmax = std::max(bmax, p.t);
  }
  if (bmin <= bmax) NoteTimes(bmin, bmax);
  samples_appended_.fetch_add(appended, std::memory_order_relaxed);
  RotateEpoch(std::move(garbage));
  return Status::Ok();
}

Status Head::ReplaySeries(uint64_t ref, const Labels& labels) {
  if (ref == 0) return Status::Error("replay: series ref 0 is invalid (" + labels.ToString() + ")");
  std::lock_guard commit(commit_mu_);
  const Labels* lset;
  Labels storage;
  if (Status st = CanonicalLabels(labels, &lset, &storage); !st.ok()) {
    return st.WithContext("replay: series ref " + std::to_string(ref));
  }
  if (Series* s = LookupRef(ref, false)) {
    if (s->LabelsEqual(*lset, symbols_)) return Status::Ok();
    return Status::Error("replay: series ref " + std::to_string(ref) + " is " + SeriesString(s) +
                         ", not " + lset->ToString());
  }
  uint64_t next = next_ref_.load(std::memory_order_relaxed);
  while (next <= ref && !next_ref_.compare_exchange_weak(next, ref + 1)) {
  }
  auto s = GetOrCreate(*lset, ref, false);
  if (!s.ok()) return s.status().WithContext("replay: series ref " + std::to_string(ref));
  if ((*s)->ref() != ref) replay_aliases_[ref] = (*s)->ref();
  (*s)->logged = true;
  return Status::Ok();
}

bool Head::ReplayOne(Series* s, int64_t t, double v, std::vector<uint8_t*>* garbage) {
  if (t < MinValidTime()) return false;
  const int64_t last = s->last_t.load(std::memory_order_relaxed);
  if (!s->has_last.load(std::memory_order_relaxed) || t > last) {
    s->AppendInOrder(t, v, chunk_opts_, garbage);
    return true;
  }
  const int64_t window = opts_.ooo_window_ms;
  if (t == last || window <= 0) return false;
  if (last >= std::numeric_limits<int64_t>::min() + window && t < last - window) return false;
  if (s->ValueBitsAt(t)) return false;
  s->InsertOoo(t, v);
  return true;
}

Status Head::ReplaySamples(std::span<const RefSample> samples) {
  std::lock_guard commit(commit_mu_);
  std::unique_lock apply(apply_mu_);
  int64_t bmin = kMaxTime, bmax = kMinTime;
  std::vector<uint8_t*> garbage;
  for (const RefSample& rs : samples) {
    uint64_t ref = rs.ref;
    if (auto it = replay_aliases_.find(ref); it != replay_aliases_.end()) ref = it->second;
    Series* s = LookupRef(ref, false);
    if (s == nullptr) {
      ++replay_unknown_refs_;
      continue;
    }
    if (!ReplayOne(s, rs.t, rs.v, &garbage)) {
      ++replay_skipped_samples_;
      continue;
    }
    bmin = std::min(bmin, rs.t);
    bmax = std::max(bmax, rs.t);
  }
  if (bmin <= bmax) NoteTimes(bmin, bmax);
  RotateEpoch(std::move(garbage));
  return Status::Ok();
}

Status Head::ReplayTombstones(std::span<const record::RefTombstone> tombstones) {
  std::lock_guard commit(commit_mu_);
  std::unique_lock apply(apply_mu_);
  std::vector<uint8_t*> garbage;
  for (const auto& ts : tombstones) {
    uint64_t ref = ts.ref;
    if (auto it = replay_aliases_.find(ref); it != replay_aliases_.end()) ref = it->second;
    if (Series* s = LookupRef(ref, false)) s->DeleteRange(ts.mint, ts.maxt, &garbage);
  }
  RotateEpoch(std::move(garbage));
  return Status::Ok();
}

Status Head::ForEachSeriesInRange(int64_t mint, int64_t maxt, const SeriesChunksFn& fn) const {
  if (maxt <= mint) return Status::Ok();
  const int64_t last = maxt - 1;  // inclusive end
  struct Item {
    Labels labels;
    uint64_t ref;
  };
  std::vector<Item> items;
  {
    std::shared_lock apply(apply_mu_);
    series_.ForEach([&](const Series* s) {
      if (!s->Empty() && s->MinTime() <= last && s->MaxTime() >= mint) {
        items.push_back(Item{s->ToLabels(symbols_), s->ref()});
      }
    });
  }
  std::sort(items.begin(), items.end(),
            [](const Item& a, const Item& b) { return a.labels < b.labels; });

  std::vector<ChunkData> chunks;
  std::vector<std::vector<uint8_t>> owned;
  std::vector<Sample> samples;
  for (const Item& item : items) {
    chunks.clear();
    owned.clear();
    std::shared_ptr<Epoch> epoch;  // keeps referenced closed chunks alive
    {
      std::shared_lock apply(apply_mu_);
      epoch = epoch_;
      const Series* s = LookupRef(item.ref, false);
      if (s == nullptr) continue;
      std::vector<ChunkView> views;
      std::vector<uint8_t> open_copy;
      std::vector<Sample> ooo;
      s->Snapshot(mint, last, &views, &open_copy, &ooo);
      const bool open_in_views = !open_copy.empty();
      if (ooo.empty()) {
        for (size_t i = 0; i < views.size(); ++i) {
          const ChunkView& v = views[i];
          const bool is_open = open_in_views && i + 1 == views.size();
          if (!is_open && v.mint >= mint && v.maxt <= last) {
            chunks.push_back(ChunkData{v.mint, v.maxt, v.bytes});
            continue;
          }
          samples.clear();
          if (!DecodeChunk(v.bytes, &samples)) {
            return Status::Error("head: corrupt chunk in series " + item.labels.ToString());
          }
          std::erase_if(samples, [&](const Sample& x) { return x.t < mint || x.t > last; });
          if (!samples.empty()) EncodeRuns(samples, chunk_opts_.samples_per_chunk, &owned, &chunks);
        }
      } else {
        // Out-of-order samples overlap: merge everything and re-chunk.
        samples.clear();
        for (const ChunkView& v : views) {
          if (!DecodeChunk(v.bytes, &samples)) {
            return Status::Error("head: corrupt chunk in series " + item.labels.ToString());
          }
        }
        samples.insert(samples.end(), ooo.begin(), ooo.end());
        std::stable_sort(samples.begin(), samples.end(),
                         [](const Sample& a, const Sample& b) { return a.t < b.t; });
        std::erase_if(samples, [&](const Sample& x) { return x.t < mint || x.t > last; });
        samples.erase(std::unique(samples.begin(), samples.end(),
                                  [](const Sample& a, const Sample& b) { return a.t == b.t; }),
                      samples.end());
        if (!samples.empty()) EncodeRuns(samples, chunk_opts_.samples_per_chunk, &owned, &chunks);
      }
    }
    // Owned chunks were appended with empty spans; point them at their bytes
    // now that `owned` no longer grows.
    size_t o = 0;
    for (auto& c : chunks) {
      if (c.bytes.data() == nullptr) c.bytes = owned[o++];
    }
    if (chunks.empty()) continue;
    if (Status st = fn(item.ref, item.labels, chunks); !st.ok()) return st;
  }
  return Status::Ok();
}

Status Head::Truncate(int64_t mint) {
  std::lock_guard commit(commit_mu_);
  std::unique_lock apply(apply_mu_);
  if (mint > min_valid_time_.load(std::memory_order_relaxed)) {
    min_valid_time_.store(mint, std::memory_order_release);
  }
  std::vector<uint8_t*> garbage;
  std::vector<Series*> candidates;
  int64_t new_min = kMaxTime, new_max = kMinTime;
  series_.ForEach([&](Series* s) {
    s->TruncateBefore(mint, &garbage);
    if (s->Empty()) {
      if (s->pending.load(std::memory_order_acquire) == 0) candidates.push_back(s);
    } else {
      new_min = std::min(new_min, s->MinTime());
      new_max = std::max(new_max, s->MaxTime());
    }
  });
  std::vector<Series*> removed;
  for (Series* s : candidates) {
    HashStripe& hs = hash_stripes_[s->hash() & (kStripes - 1)];
    std::lock_guard hash_lock(hs.mu);
    std::lock_guard ref_lock(series_.LockFor(s->ref()));
    // An appender may have picked the series up since the first pass.
    if (s->pending.load(std::memory_order_acquire) != 0) continue;
    hs.table.Erase(s);
    series_.Clear(s->ref());
    removed.push_back(s);
  }
  if (!removed.empty()) {
    std::sort(removed.begin(), removed.end(),
              [](const Series* a, const Series* b) { return a->ref() < b->ref(); });
    std::vector<uint64_t> refs;
    std::vector<std::pair<uint32_t, uint32_t>> pairs;
    refs.reserve(removed.size());
    for (const Series* s : removed) {
      refs.push_back(s->ref());
      auto ids = s->label_ids();
      for (size_t i = 0; i + 1 < ids.size(); i += 2) pairs.emplace_back(ids[i], ids[i + 1]);
    }
    std::unique_lock index(index_mu_);
    postings_.Remove(refs, pairs);
    for (const Series* s : removed) {
      for (uint32_t id : s->label_ids()) symbols_.Release(id);
    }
  }
  for (Series* s : removed) Series::Free(s);
  if (!removed.empty()) series_.FreeEmptyBlocks();
  num_series_.fetch_sub(removed.size(), std::memory_order_relaxed);
  min_time_.store(new_min, std::memory_order_release);
  max_time_.store(new_max, std::memory_order_release);
  RotateEpoch(std::move(garbage));
  return Status::Ok();
}

Status Head::Delete(std::span<const Matcher> matchers, int64_t mint, int64_t maxt) {
  if (maxt < mint) return Status::Ok();
  auto refs = Postings(matchers);
  if (!refs.ok()) return refs.status().WithContext("head delete");
  std::lock_guard commit(commit_mu_);
  // Series cannot disappear while commit_mu_ is held (only Truncate removes
  // them, under the same lock).
  std::vector<Series*> targets;
  std::vector<record::RefTombstone> tombstones;
  {
    std::shared_lock apply(apply_mu_);
    for (uint64_t ref : *refs) {
      Series* s = LookupRef(ref, false);
      if (s == nullptr || s->Empty() || s->MaxTime() < mint || s->MinTime() > maxt) continue;
      targets.push_back(s);
      tombstones.push_back(record::RefTombstone{ref, mint, maxt});
    }
  }
  if (targets.empty()) return Status::Ok();
  if (wal_ != nullptr) {
    Status st = wal_->LogTombstones(tombstones);
    health_.RecordWalWrite(st);
    if (!st.ok()) return st.WithContext("head delete: logging tombstones to the WAL");
  }
  std::unique_lock apply(apply_mu_);
  std::vector<uint8_t*> garbage;
  for (Series* s : targets) s->DeleteRange(mint, maxt, &garbage);
  int64_t new_min = kMaxTime, new_max = kMinTime;
  series_.ForEach([&](const Series* s) {
    if (s->Empty()) return;
    new_min = std::min(new_min, s->MinTime());
    new_max = std::max(new_max, s->MaxTime());
  });
  min_time_.store(new_min, std::memory_order_release);
  max_time_.store(new_max, std::memory_order_release);
  RotateEpoch(std::move(garbage));
  return Status::Ok();
}

HeadStats Head::Stats(size_t top_k) const {
  HeadStats st;
  size_t table_bytes = kStripes * sizeof(HashStripe);
  {
    std::shared_lock apply(apply_mu_);
    series_.ForEach([&](const Series* s) {
      ++st.series;
      st.samples += s->NumSamples();
      st.chunks += s->NumChunks();
      st.ooo_samples += s->NumOoo();
      st.series_bytes += s->MemoryBytes();
    });
    table_bytes += series_.MemoryBytes();
    for (size_t i = 0; i < kStripes; ++i) {
      std::lock_guard lock(hash_stripes_[i].mu);
      table_bytes += hash_stripes_[i].table.MemoryBytes();
    }
  }
  {
    std::shared_lock index(index_mu_);
    st.symbols = symbols_.size();
    st.index_bytes = table_bytes + symbols_.MemoryBytes() + postings_.MemoryBytes();
    postings_.ForEachName([&](uint32_t name, const MemPostings::ValueMap& values) {
      LabelCardinality c;
      c.name = std::string(symbols_.Get(name));
      c.values = values.size();
      for (const auto& [v, list] : values) c.series += list.size();
      st.top_labels.push_back(std::move(c));
    });
  }
  std::sort(st.top_labels.begin(), st.top_labels.end(),
            [](const LabelCardinality& a, const LabelCardinality& b) {
              return a.values != b.values ? a.values > b.values : a.name < b.name;
            });
  if (st.top_labels.size() > top_k) st.top_labels.resize(top_k);
  st.memory_bytes = st.series_bytes + st.index_bytes;
  st.min_time = MinTime();
  st.max_time = MaxTime();
  {
    std::lock_guard commit(commit_mu_);
    st.replay_unknown_refs = replay_unknown_refs_;
    st.replay_skipped_samples = replay_skipped_samples_;
  }
  return st;
}

}  // namespace gpumon::tsdb::head
