#include "tsdb/head/head_appender.h"

#include <bit>
#include <limits>
#include <string>

#include "tsdb/append_error.h"
#include "tsdb/head/head.h"
#include "tsdb/head/series.h"

namespace gpumon::tsdb::head {

HeadAppender::~HeadAppender() { Release(); }

int HeadAppender::FindEntry(uint64_t ref) const {
  if (slots_.empty()) return -1;
  const size_t mask = slots_.size() - 1;
  for (size_t i = Mix64(ref) & mask;; i = (i + 1) & mask) {
    if (slots_[i].ref == ref) return static_cast<int>(slots_[i].entry);
    if (slots_[i].ref == 0) return -1;
  }
}

uint32_t HeadAppender::AddEntry(Series* s) {
  const auto idx = static_cast<uint32_t>(entries_.size());
  entries_.push_back(Entry{s});
  if ((entries_.size()) * 2 > slots_.size()) {
    // Rebuild at twice the entries, so the table stays at most half full.
    std::vector<Slot> bigger(std::max<size_t>(16, std::bit_ceil(entries_.size() * 4)));
    const size_t mask = bigger.size() - 1;
    for (uint32_t e = 0; e < entries_.size(); ++e) {
      const uint64_t ref = entries_[e].series->ref();
      size_t i = Mix64(ref) & mask;
      while (bigger[i].ref != 0) i = (i + 1) & mask;
      bigger[i] = Slot{ref, e};
    }
    slots_.swap(bigger);
    return idx;
  }
  const size_t mask = slots_.size() - 1;
  size_t i = Mix64(s->ref()) & mask;
  while (slots_[i].ref != 0) i = (i + 1) & mask;
  slots_[i] = Slot{s->ref(), idx};
  return idx;
}

void HeadAppender::Prefetch(uint64_t ref) const { head_->PrefetchSeries(ref); }

Result<uint64_t> HeadAppender::Append(uint64_t ref, const Labels& labels, int64_t t, double v) {
  Result<uint64_t> r = AppendOne(ref, labels, t, v);
  if (!r.ok()) head_->health_.CountFailures(ClassifyAppendError(r.status().message()), 1);
  return r;
}

Result<uint64_t> HeadAppender::AppendOne(uint64_t ref, const Labels& labels, int64_t t, double v) {
  int idx = ref != 0 ? FindEntry(ref) : -1;
  if (idx < 0) {
    Series* s = ref != 0 ? head_->LookupRef(ref, /*take_pending=*/true) : nullptr;
    if (s == nullptr) {
      auto created = head_->GetOrCreate(labels, 0, /*take_pending=*/true);
      if (!created.ok()) return created.status();
      s = *created;
    }
    idx = FindEntry(s->ref());
    if (idx >= 0) {
      // Already in this batch (reached through its labels): one pending
      // registration per appender is enough.
      s->pending.fetch_sub(1, std::memory_order_release);
    } else {
      idx = static_cast<int>(AddEntry(s));
    }
  }
  Entry& e = entries_[static_cast<size_t>(idx)];
  Series* s = e.series;
  const uint64_t bits = std::bit_cast<uint64_t>(v);

  // Advisory validation against committed state (Commit re-validates).
  const int64_t min_valid = head_->MinValidTime();
  if (t < min_valid) {
    return Status::Error("out of bounds sample: series " + head_->SeriesString(s) + ": timestamp " +
                         std::to_string(t) + " < minimum valid time " + std::to_string(min_valid));
  }
  // The newest sample known, committed or buffered; none for a new series
  // (whatever timestamp it has, kMinTime included).
  bool have_max = s->has_last.load(std::memory_order_acquire);
  int64_t max_t = s->last_t.load(std::memory_order_acquire);
  uint64_t max_v = s->last_v.load(std::memory_order_relaxed);
  if (e.has_buffered && (!have_max || e.last_t >= max_t)) {
    have_max = true;
    max_t = e.last_t;
    max_v = e.last_v;
  }
  if (!have_max) {
    // First sample of the series: nothing to compare with.
  } else if (t == max_t) {
    if (bits == max_v) return s->ref();  // same sample again: ignored
    return Status::Error("duplicate sample for timestamp: series " + head_->SeriesString(s) +
                         ": timestamp " + std::to_string(t) + " already has another value");
  }
  if (have_max && t < max_t) {
    const int64_t window = head_->opts_.ooo_window_ms;
    const bool in_window =
        window > 0 && (max_t < std::numeric_limits<int64_t>::min() + window || t >= max_t - window);
    if (!in_window) {
      std::string msg = "out of order sample: series " + head_->SeriesString(s) + ": timestamp " +
                        std::to_string(t) + " <= last " + std::to_string(max_t);
      if (window > 0)
        msg += " (outside the out-of-order window of " + std::to_string(window) + "ms)";
      return Status::Error(msg);
    }
  }
  samples_.push_back(Pending{static_cast<uint32_t>(idx), kInOrder, t, bits});
  if (!e.has_buffered || t > e.last_t) {
    e.has_buffered = true;
    e.last_t = t;
    e.last_v = bits;
  }
  return s->ref();
}

Status HeadAppender::Commit() {
  Status st;
  if (!samples_.empty()) st = head_->CommitBatch(this);
  // A failed commit stores none of the batch: every sample counts.
  if (!st.ok()) head_->health_.CountFailures(ClassifyAppendError(st.message()), samples_.size());
  Release();
  return st;
}

void HeadAppender::Rollback() { Release(); }

void HeadAppender::Release() {
  for (const Entry& e : entries_) e.series->pending.fetch_sub(1, std::memory_order_release);
  // Keep the table for the next batch unless it is far larger than this
  // batch needed (clearing it would cost more than rebuilding).
  if (slots_.size() > 1024 && entries_.size() * 16 < slots_.size()) {
    std::vector<Slot>().swap(slots_);
  } else {
    std::fill(slots_.begin(), slots_.end(), Slot{});
  }
  entries_.clear();
  samples_.clear();
}

}  // namespace gpumon::tsdb::head
