#include "ingest/otlp_delta.h"

#include <utility>

namespace gpumon::ingest {

OtlpDeltaAccumulator::Txn::Txn(OtlpDeltaAccumulator* acc, Clock::time_point now)
    : acc_(acc), now_(now), lock_(acc->mu_, std::defer_lock) {}

size_t OtlpDeltaAccumulator::Txn::SeriesOf(const Staged& s) const {
  size_t n = 0;
  for (const auto& [name, family] : s.families) n += family.size();
  return n;
}

OtlpDeltaAccumulator::Txn::Staged& OtlpDeltaAccumulator::Txn::Stage(const Labels& group) {
  if (!lock_.owns_lock()) {
    lock_.lock();
    acc_->ExpireLocked(now_);
  }
  auto it = staged_.find(group);
  if (it != staged_.end()) return it->second;
  Staged s;
  if (auto g = acc_->groups_.find(group); g != acc_->groups_.end()) {
    s.families = g->second.families;
    s.committed_series = g->second.series;
  }
  return staged_.emplace(group, std::move(s)).first->second;
}

bool OtlpDeltaAccumulator::Txn::AddSum(const Labels& group, const std::string& family,
                                       const Labels& series, double delta, std::string* why) {
  Staged& s = Stage(group);
  Family& f = s.families[family];
  auto it = f.find(series);
  if (it == f.end()) {
    if (acc_->series_ + new_series_ >= acc_->limits_.max_series) {
      *why = "delta accumulator full (" + std::to_string(acc_->limits_.max_series) +
             " series): new delta series refused";
      if (f.empty()) s.families.erase(family);
      return false;
    }
    ++new_series_;
    it = f.emplace(series, Series{}).first;
  }
  if (it->second.is_histogram) it->second = Series{};
  it->second.value += delta;
  return true;
}

bool OtlpDeltaAccumulator::Txn::AddHistogram(const Labels& group, const std::string& family,
                                             const Labels& series, const Histogram& delta,
                                             std::string* why) {
  Staged& s = Stage(group);
  Family& f = s.families[family];
  auto it = f.find(series);
  if (it == f.end()) {
    if (acc_->series_ + new_series_ >= acc_->limits_.max_series) {
      *why = "delta accumulator full (" + std::to_string(acc_->limits_.max_series) +
             " series): new delta series refused";
      if (f.empty()) s.families.erase(family);
      return false;
    }
    ++new_series_;
    Series fresh;
    fresh.is_histogram = true;
    fresh.histogram = delta;
    f.emplace(series, std::move(fresh));
    return true;
  }
  Series& cur = it->second;
  Histogram& h = cur.histogram;
  if (!cur.is_histogram || h.bounds != delta.bounds || h.buckets.size() != delta.buckets.size()) {
    cur.is_histogram = true;
    cur.value = 0;
    h = delta;  // bounds changed: start over
    return true;
  }
  for (size_t i = 0; i < h.buckets.size(); ++i) h.buckets[i] += delta.buckets[i];
  h.count += delta.count;
  h.sum += delta.sum;
  h.has_sum = h.has_sum && delta.has_sum;
  return true;
}

void OtlpDeltaAccumulator::Txn::Remove(const Labels& group, const std::string& family,
                                       const Labels& series) {
  Staged& s = Stage(group);
  auto f = s.families.find(family);
  if (f == s.families.end()) return;
  f->second.erase(series);
  if (f->second.empty()) s.families.erase(f);
}

const OtlpDeltaAccumulator::Family* OtlpDeltaAccumulator::Txn::Find(const Labels& group,
                                                                    const std::string& family) {
  Staged& s = Stage(group);
  auto f = s.families.find(family);
  return f == s.families.end() ? nullptr : &f->second;
}

void OtlpDeltaAccumulator::Txn::Commit(const Labels& group) {
  auto it = staged_.find(group);
  if (it == staged_.end()) return;
  Staged& s = it->second;
  size_t now_series = SeriesOf(s);
  Group& g = acc_->groups_[group];
  // The series this group adds (or frees) against the committed count.
  acc_->series_ = acc_->series_ - g.series + now_series;
  if (now_series > s.committed_series) {
    size_t added = now_series - s.committed_series;
    new_series_ = added > new_series_ ? 0 : new_series_ - added;
  }
  g.series = now_series;
  g.families = std::move(s.families);
  g.last_commit = now_;
  if (g.series == 0) acc_->groups_.erase(group);
  staged_.erase(it);
}

void OtlpDeltaAccumulator::ExpireLocked(Clock::time_point now) {
  if (limits_.expiry.count() == 0) return;
  for (auto it = groups_.begin(); it != groups_.end();) {
    if (now - it->second.last_commit > limits_.expiry) {
      series_ -= it->second.series;
      it = groups_.erase(it);
    } else {
      ++it;
    }
  }
}

size_t OtlpDeltaAccumulator::series() const {
  std::lock_guard lock(mu_);
  return series_;
}

size_t OtlpDeltaAccumulator::groups() const {
  std::lock_guard lock(mu_);
  return groups_.size();
}

}  // namespace gpumon::ingest
