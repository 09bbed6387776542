#include "tsdb/head/head_querier.h"

#include <algorithm>
#include <mutex>
#include <shared_mutex>

#include "tsdb/chunkenc/chunk.h"
#include "tsdb/head/head.h"
#include "tsdb/head/series.h"

namespace gpumon::tsdb::head {

namespace {

// One series as Select saw it.
struct SeriesData {
  Labels labels;
  std::vector<ChunkView> chunks;   // time order
  std::vector<uint8_t> open_copy;  // backs the open chunk's view
  std::vector<Sample> ooo;         // out-of-order samples in range, sorted
  std::shared_ptr<const void> epoch;
};

// Merges the chunks with the out-of-order samples, within [mint, maxt].
class HeadSeriesIterator : public SeriesIterator {
 public:
  HeadSeriesIterator(std::shared_ptr<const SeriesData> data, int64_t mint, int64_t maxt)
      : d_(std::move(data)), mint_(mint), maxt_(maxt) {}

  bool Next() override {
    if (done_) return false;
    if (!started_) return SeekFrom(mint_);
    if (from_a_) AdvanceA();
    if (from_b_) ++b_;
    return Pick();
  }

  bool Seek(int64_t t) override {
    if (done_) return false;
    if (!started_) return SeekFrom(std::max(t, mint_));
    if (at_.t >= t) return true;
    SeekA(t);
    SeekB(t);
    return Pick();
  }

  Sample At() const override { return at_; }
  Status status() const override { return status_; }

 private:
  bool SeekFrom(int64_t t) {
    started_ = true;
    SeekA(t);
    SeekB(t);
    return Pick();
  }

  // Chooses the earlier of the two streams' current samples.
  bool Pick() {
    const bool b_valid = b_ < d_->ooo.size();
    if (!status_.ok() || (!a_valid_ && !b_valid)) return Finish();
    from_a_ = a_valid_ && (!b_valid || a_.t <= d_->ooo[b_].t);
    from_b_ = b_valid && (!a_valid_ || d_->ooo[b_].t <= a_.t);
    at_ = from_a_ ? a_ : d_->ooo[b_];
    if (at_.t > maxt_) return Finish();
    return true;
  }

  bool Finish() {
    done_ = true;
    return false;
  }

  void OpenChunk(size_t i) { cur_ = chunkenc::NewIterator(d_->chunks[i].bytes); }

  void AdvanceA() {
    while (true) {
      if (cur_ && cur_->Next()) {
        a_ = cur_->At();
        a_valid_ = true;
        return;
      }
      if (cur_ && !cur_->status().ok()) {
        status_ = cur_->status();
        a_valid_ = false;
        return;
      }
      if (next_chunk_ >= d_->chunks.size()) {
        a_valid_ = false;
        return;
      }
      OpenChunk(next_chunk_++);
    }
  }

  void SeekA(int64_t t) {
    if (a_valid_ && a_.t >= t) return;
    // Within the current chunk first, unless it ends before t.
    if (cur_ && next_chunk_ > 0 && d_->chunks[next_chunk_ - 1].maxt >= t) {
      if (cur_->Seek(t)) {
        a_ = cur_->At();
        a_valid_ = true;
        return;
      }
      if (!cur_->status().ok()) {
        status_ = cur_->status();
        a_valid_ = false;
        return;
      }
    }
    while (next_chunk_ < d_->chunks.size() && d_->chunks[next_chunk_].maxt < t) ++next_chunk_;
    while (next_chunk_ < d_->chunks.size()) {
      OpenChunk(next_chunk_++);
      if (cur_->Seek(t)) {
        a_ = cur_->At();
        a_valid_ = true;
        return;
      }
      if (!cur_->status().ok()) {
        status_ = cur_->status();
        break;
      }
    }
    a_valid_ = false;
  }

  void SeekB(int64_t t) {
    const auto& ooo = d_->ooo;
    if (b_ < ooo.size() && ooo[b_].t >= t) return;
    b_ =
        static_cast<size_t>(std::lower_bound(ooo.begin() + static_cast<ptrdiff_t>(b_), ooo.end(), t,
                                             [](const Sample& s, int64_t x) { return s.t < x; }) -
                            ooo.begin());
  }

  std::shared_ptr<const SeriesData> d_;
  int64_t mint_;
  int64_t maxt_;
  bool started_ = false;
  bool done_ = false;
  // Stream A: the chunks.
  std::unique_ptr<SeriesIterator> cur_;
  size_t next_chunk_ = 0;
  bool a_valid_ = false;
  Sample a_;
  // Stream B: out-of-order samples.
  size_t b_ = 0;
  bool from_a_ = false;
  bool from_b_ = false;
  Sample at_;
  Status status_;
};

class HeadSeriesSet : public SeriesSet {
 public:
  HeadSeriesSet(std::vector<std::shared_ptr<const SeriesData>> series, int64_t mint, int64_t maxt)
      : series_(std::move(series)), mint_(mint), maxt_(maxt) {}

  bool Next() override {
    if (pos_ >= series_.size()) return false;
    ++pos_;
    return true;
  }
  const Labels& labels() const override { return series_[pos_ - 1]->labels; }
  std::unique_ptr<SeriesIterator> Iterator() const override {
    return std::make_unique<HeadSeriesIterator>(series_[pos_ - 1], mint_, maxt_);
  }

 private:
  std::vector<std::shared_ptr<const SeriesData>> series_;
  size_t pos_ = 0;
  int64_t mint_;
  int64_t maxt_;
};

class ErrorSeriesSet : public SeriesSet {
 public:
  explicit ErrorSeriesSet(Status status) : status_(std::move(status)) {}
  bool Next() override { return false; }
  const Labels& labels() const override { return empty_; }
  std::unique_ptr<SeriesIterator> Iterator() const override { return nullptr; }
  Status status() const override { return status_; }

 private:
  Status status_;
  Labels empty_;
};

}  // namespace

int64_t HeadQuerier::EffectiveMint() const { return std::max(mint_, head_->MinValidTime()); }

bool HeadQuerier::HeadOverlaps() const {
  return head_->MinTime() <= maxt_ && head_->MaxTime() >= EffectiveMint();
}

std::unique_ptr<SeriesSet> HeadQuerier::Select(std::span<const Matcher> matchers,
                                               const SelectHints& /*hints*/) const {
  const int64_t mint = EffectiveMint();
  auto refs = head_->Postings(matchers);
  if (!refs.ok()) return std::make_unique<ErrorSeriesSet>(refs.status());
  std::vector<std::shared_ptr<const SeriesData>> out;
  if (mint <= maxt_) {
    std::shared_lock apply(head_->apply_mu_);
    std::shared_ptr<const void> epoch = head_->epoch_;
    for (uint64_t ref : *refs) {
      const Series* s = head_->LookupRef(ref, false);
      if (s == nullptr) continue;
      auto d = std::make_shared<SeriesData>();
      s->Snapshot(mint, maxt_, &d->chunks, &d->open_copy, &d->ooo);
      if (d->chunks.empty() && d->ooo.empty()) continue;
      d->labels = s->ToLabels(head_->symbols_);
      d->epoch = epoch;
      out.push_back(std::move(d));
    }
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a->labels < b->labels; });
  return std::make_unique<HeadSeriesSet>(std::move(out), mint, maxt_);
}

Status HeadQuerier::ForEachLabelPair(
    std::span<const Matcher> matchers,
    const std::function<void(uint32_t name_id, uint32_t value_id)>& fn) const {
  auto refs = head_->Postings(matchers);
  if (!refs.ok()) return refs.status();
  const int64_t mint = EffectiveMint();
  std::shared_lock apply(head_->apply_mu_);
  for (uint64_t ref : *refs) {
    const Series* s = head_->LookupRef(ref, false);
    if (s == nullptr || s->Empty() || s->MinTime() > maxt_ || s->MaxTime() < mint) continue;
    auto lids = s->label_ids();
    for (size_t i = 0; i + 1 < lids.size(); i += 2) fn(lids[i], lids[i + 1]);
  }
  return Status::Ok();
}

Result<std::vector<std::string>> HeadQuerier::LabelNames(std::span<const Matcher> matchers) const {
  std::vector<std::string> names;
  if (!HeadOverlaps()) return names;
  if (matchers.empty()) {
    std::shared_lock index(head_->index_mu_);
    head_->postings_.ForEachName([&](uint32_t name, const MemPostings::ValueMap&) {
      names.emplace_back(head_->symbols_.Get(name));
    });
  } else {
    std::vector<uint32_t> ids;
    Status st =
        ForEachLabelPair(matchers, [&](uint32_t name_id, uint32_t) { ids.push_back(name_id); });
    if (!st.ok()) return st;
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    for (uint32_t id : ids) names.emplace_back(head_->symbols_.Get(id));
  }
  std::sort(names.begin(), names.end());
  return names;
}

Result<std::vector<std::string>> HeadQuerier::LabelValues(const std::string& name,
                                                          std::span<const Matcher> matchers) const {
  std::vector<std::string> values;
  if (!HeadOverlaps()) return values;
  if (matchers.empty()) {
    std::shared_lock index(head_->index_mu_);
    auto id = head_->symbols_.Find(name);
    if (id) {
      head_->postings_.ForEachValue(*id, [&](uint32_t value, const MemPostings::List&) {
        values.emplace_back(head_->symbols_.Get(value));
      });
    }
  } else {
    std::vector<uint32_t> ids;
    Status st = ForEachLabelPair(matchers, [&](uint32_t name_id, uint32_t value_id) {
      if (head_->symbols_.Get(name_id) == name) ids.push_back(value_id);
    });
    if (!st.ok()) return st;
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    for (uint32_t id : ids) values.emplace_back(head_->symbols_.Get(id));
  }
  std::sort(values.begin(), values.end());
  return values;
}

}  // namespace gpumon::tsdb::head
