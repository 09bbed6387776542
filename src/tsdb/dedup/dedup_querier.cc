#include "tsdb/dedup/dedup_querier.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>

namespace gpumon::tsdb::dedup {
namespace {

constexpr int64_t kMinT = std::numeric_limits<int64_t>::min();
constexpr int64_t kMaxT = std::numeric_limits<int64_t>::max();
// Penalty before any interval is known: timestamps are ms and scrape
// intervals are seconds long (Thanos's initial penalty).
constexpr int64_t kInitialPenalty = 5000;

int64_t SatAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? kMaxT : kMinT;
  return r;
}

class PenaltyIterator : public SeriesIterator {
 public:
  explicit PenaltyIterator(std::vector<std::unique_ptr<SeriesIterator>> its) {
    reps_.reserve(its.size());
    for (auto& it : its) reps_.push_back(Replica{std::move(it)});
  }

  bool Next() override {
    started_ = true;
    int best = -1;
    int64_t best_t = 0;
    for (size_t i = 0; i < reps_.size(); ++i) {
      Replica& r = reps_[i];
      if (!r.ok) continue;
      if (!r.primed) {
        r.primed = true;
        r.ok = r.it->Next();
      }
      // Seek past the last emitted time plus this replica's penalty.
      if (r.ok && has_last_) r.ok = r.it->Seek(SatAdd(SatAdd(last_t_, 1), r.penalty));
      if (!r.ok) {
        if (Status s = r.it->status(); !s.ok() && status_.ok()) status_ = s;
        continue;
      }
      int64_t t = r.it->At().t;
      if (best < 0 || t < best_t) {
        best = static_cast<int>(i);
        best_t = t;
      }
    }
    if (best < 0 || !status_.ok()) {
      cur_ = -1;
      return false;
    }
    // The replicas not chosen must now skip twice the interval just seen,
    // so a sample of theirs that lies close to ours does not raise the
    // sampling rate.
    // Before an interval is known the penalty is kInitialPenalty itself
    // (Thanos's 5 s), not twice it.
    int64_t penalty = kInitialPenalty;
    if (has_last_) {
      const int64_t delta = SatAdd(best_t, -last_t_);
      penalty = SatAdd(delta, delta);
    }
    for (size_t i = 0; i < reps_.size(); ++i) {
      reps_[i].penalty = static_cast<int>(i) == best ? 0 : penalty;
    }
    cur_ = best;
    sample_ = reps_[best].it->At();
    last_t_ = best_t;
    has_last_ = true;
    return true;
  }

  bool Seek(int64_t t) override {
    // Step with Next rather than seeking the replicas, so gaps before t are
    // handled as in a full scan and the choice of replica is the same.
    if (!started_ && !Next()) return false;
    if (cur_ < 0) return false;
    while (sample_.t < t) {
      if (!Next()) return false;
    }
    return true;
  }

  Sample At() const override { return sample_; }
  Status status() const override { return status_; }

 private:
  struct Replica {
    std::unique_ptr<SeriesIterator> it;
    bool ok = true;
    bool primed = false;
    int64_t penalty = 0;
  };
  std::vector<Replica> reps_;
  bool started_ = false;
  bool has_last_ = false;
  int64_t last_t_ = kMinT;
  int cur_ = -1;
  Sample sample_{};
  Status status_;
};

// One series of the inner set: its labels with and without the replica
// labels, and its iterator (taken while the inner set was positioned on it).
struct Member {
  Labels original;
  Labels stripped;
  std::unique_ptr<SeriesIterator> it;
};

class DedupSeriesSet : public SeriesSet {
 public:
  DedupSeriesSet(const Querier& inner, std::unique_ptr<SeriesSet> inner_set,
                 std::vector<Member> members)
      : inner_(inner), status_(inner_set->status()), members_(std::move(members)) {
    sets_.push_back(std::move(inner_set));
  }

  bool Next() override {
    if (!status_.ok()) return false;
    begin_ = end_;
    if (begin_ >= members_.size()) return false;
    end_ = begin_ + 1;
    while (end_ < members_.size() && members_[end_].stripped == members_[begin_].stripped) ++end_;
    return true;
  }

  const Labels& labels() const override { return members_[begin_].stripped; }

  std::unique_ptr<SeriesIterator> Iterator() const override {
    std::vector<std::unique_ptr<SeriesIterator>> its;
    for (size_t i = begin_; i < end_; ++i) {
      Member& m = members_[i];
      // The inner set handed one iterator per series; a second request
      // selects the exact series again.
      its.push_back(m.it ? std::move(m.it) : Reselect(m.original));
    }
    if (its.size() == 1) return std::move(its[0]);
    return NewPenaltyIterator(std::move(its));
  }

  Status status() const override { return status_; }

 private:
  std::unique_ptr<SeriesIterator> Reselect(const Labels& labels) const;

  const Querier& inner_;
  Status status_;
  // Iterators may refer to the set they came from: the sets live as long
  // as this one.
  mutable std::vector<std::unique_ptr<SeriesSet>> sets_;
  mutable std::vector<Member> members_;
  size_t begin_ = 0, end_ = 0;
};

// An iterator with no samples, for a series that vanished between selects.
class EmptyIterator : public SeriesIterator {
 public:
  explicit EmptyIterator(Status s) : status_(std::move(s)) {}
  bool Next() override { return false; }
  bool Seek(int64_t) override { return false; }
  Sample At() const override { return {}; }
  Status status() const override { return status_; }

 private:
  Status status_;
};

std::unique_ptr<SeriesIterator> DedupSeriesSet::Reselect(const Labels& labels) const {
  std::vector<Matcher> ms;
  for (const auto& l : labels) {
    auto m = Matcher::Make(MatchType::kEqual, l.name, l.value);
    if (!m.ok()) return std::make_unique<EmptyIterator>(m.status());
    ms.push_back(std::move(m).value());
  }
  sets_.push_back(inner_.Select(ms));
  SeriesSet& set = *sets_.back();
  while (set.Next()) {
    if (set.labels() == labels) return set.Iterator();
  }
  return std::make_unique<EmptyIterator>(set.status());
}

class DedupQuerier : public Querier {
 public:
  DedupQuerier(std::unique_ptr<Querier> inner, std::vector<std::string> replica_labels)
      : inner_(std::move(inner)), replica_(std::move(replica_labels)) {}

  std::unique_ptr<SeriesSet> Select(std::span<const Matcher> matchers,
                                    const SelectHints& hints) const override {
    auto set = inner_->Select(matchers, hints);
    std::vector<Member> members;
    while (set->Next()) {
      const Labels& l = set->labels();
      members.push_back(Member{l, Strip(l), set->Iterator()});
    }
    // Dropping labels can change the order; stable keeps replicas in the
    // order of their original labels, which decides ties.
    std::stable_sort(members.begin(), members.end(),
                     [](const Member& a, const Member& b) { return a.stripped < b.stripped; });
    return std::make_unique<DedupSeriesSet>(*inner_, std::move(set), std::move(members));
  }

  Result<std::vector<std::string>> LabelNames(std::span<const Matcher> matchers) const override {
    auto names = inner_->LabelNames(matchers);
    if (!names.ok()) return names;
    std::vector<std::string> out;
    for (auto& n : *names) {
      if (!IsReplica(n)) out.push_back(std::move(n));
    }
    return out;
  }

  Result<std::vector<std::string>> LabelValues(const std::string& name,
                                               std::span<const Matcher> matchers) const override {
    if (IsReplica(name)) return std::vector<std::string>{};
    return inner_->LabelValues(name, matchers);
  }

 private:
  bool IsReplica(std::string_view name) const {
    return std::find(replica_.begin(), replica_.end(), name) != replica_.end();
  }
  Labels Strip(const Labels& l) const {
    bool any = false;
    for (const auto& r : replica_) any = any || l.Has(r);
    if (!any) return l;
    std::vector<Label> kept;
    kept.reserve(l.size());
    for (const auto& x : l) {
      if (!IsReplica(x.name)) kept.push_back(x);
    }
    return Labels::FromSorted(std::move(kept));
  }

  std::unique_ptr<Querier> inner_;
  std::vector<std::string> replica_;
};

}  // namespace

std::unique_ptr<SeriesIterator> NewPenaltyIterator(
    std::vector<std::unique_ptr<SeriesIterator>> replicas) {
  return std::make_unique<PenaltyIterator>(std::move(replicas));
}

std::unique_ptr<Querier> NewDedupQuerier(std::unique_ptr<Querier> inner,
                                         std::vector<std::string> replica_labels) {
  if (replica_labels.empty()) return inner;
  return std::make_unique<DedupQuerier>(std::move(inner), std::move(replica_labels));
}

}  // namespace gpumon::tsdb::dedup
