#include "tsdb/downsample/select_aggregate.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace gpumon::tsdb::downsample {
namespace {

class VectorIterator : public SeriesIterator {
 public:
  explicit VectorIterator(std::shared_ptr<const std::vector<Sample>> samples)
      : samples_(std::move(samples)) {}
  bool Next() override {
    if (done_) return false;
    pos_ = started_ ? pos_ + 1 : 0;
    started_ = true;
    done_ = pos_ >= samples_->size();
    return !done_;
  }
  bool Seek(int64_t t) override {
    if (done_) return false;
    if (!started_) {
      started_ = true;
      pos_ = 0;
    }
    while (pos_ < samples_->size() && (*samples_)[pos_].t < t) ++pos_;
    done_ = pos_ >= samples_->size();
    return !done_;
  }
  Sample At() const override { return (*samples_)[pos_]; }

 private:
  std::shared_ptr<const std::vector<Sample>> samples_;
  size_t pos_ = 0;
  bool started_ = false;
  bool done_ = false;
};

// Strips __aggr__ from the series of one aggregate. Removing it keeps the
// inner order for series whose first label is __aggr__; series with labels
// sorting before it all come first and may need reordering, so those are
// materialized and sorted (they are rare: such series lack __name__ and
// have a label name below "__aggr__").
class StrippedSeriesSet : public SeriesSet {
 public:
  explicit StrippedSeriesSet(std::unique_ptr<SeriesSet> inner) : inner_(std::move(inner)) {}

  bool Next() override {
    if (!status_.ok()) return false;
    if (!primed_) Prime();
    if (!status_.ok()) return false;
    if (buffered_pos_ < buffered_.size()) {
      labels_ = buffered_[buffered_pos_].labels;
      from_buffer_ = true;
      ++buffered_pos_;
      return true;
    }
    from_buffer_ = false;
    if (pending_) {
      pending_ = false;
    } else if (!inner_->Next()) {
      status_ = inner_->status();
      return false;
    }
    labels_ = WithoutAggregate(inner_->labels());
    return true;
  }
  const Labels& labels() const override { return labels_; }
  std::unique_ptr<SeriesIterator> Iterator() const override {
    if (from_buffer_) return std::make_unique<VectorIterator>(buffered_[buffered_pos_ - 1].samples);
    return inner_->Iterator();
  }
  Status status() const override { return status_; }

 private:
  struct Buffered {
    Labels labels;
    std::shared_ptr<const std::vector<Sample>> samples;
  };

  void Prime() {
    primed_ = true;
    while (inner_->Next()) {
      const Labels& l = inner_->labels();
      if (!l.empty() && l.items().front().name == kAggrLabel) {
        pending_ = true;
        break;
      }
      auto samples = std::make_shared<std::vector<Sample>>();
      auto it = inner_->Iterator();
      while (it->Next()) samples->push_back(it->At());
      if (!it->status().ok()) {
        status_ = it->status();
        return;
      }
      buffered_.push_back({WithoutAggregate(l), std::move(samples)});
    }
    if (!pending_ && !inner_->status().ok()) status_ = inner_->status();
    std::sort(buffered_.begin(), buffered_.end(),
              [](const Buffered& a, const Buffered& b) { return a.labels < b.labels; });
  }

  std::unique_ptr<SeriesSet> inner_;
  bool primed_ = false;
  bool pending_ = false;  // inner_ holds a series not yet returned
  std::vector<Buffered> buffered_;
  size_t buffered_pos_ = 0;
  bool from_buffer_ = false;
  Labels labels_;
  Status status_;
};

Matcher AggregateMatcher(Aggregate which) {
  // An equality matcher always compiles.
  return std::move(Matcher::Make(MatchType::kEqual, std::string(kAggrLabel),
                                 std::string(AggregateName(which))))
      .value();
}

std::vector<Matcher> WithAggregateMatcher(std::span<const Matcher> matchers, Aggregate which) {
  std::vector<Matcher> all(matchers.begin(), matchers.end());
  all.push_back(AggregateMatcher(which));
  return all;
}

class AggregateQuerier : public Querier {
 public:
  AggregateQuerier(std::unique_ptr<Querier> tier, Aggregate which)
      : tier_(std::move(tier)), which_(which) {}

  std::unique_ptr<SeriesSet> Select(std::span<const Matcher> matchers,
                                    const SelectHints& hints) const override {
    return SelectAggregate(*tier_, matchers, which_, hints);
  }
  Result<std::vector<std::string>> LabelNames(std::span<const Matcher> matchers) const override {
    auto names = tier_->LabelNames(WithAggregateMatcher(matchers, which_));
    if (names.ok()) std::erase(*names, std::string(kAggrLabel));
    return names;
  }
  Result<std::vector<std::string>> LabelValues(const std::string& name,
                                               std::span<const Matcher> matchers) const override {
    if (name == kAggrLabel) return std::vector<std::string>{};
    return tier_->LabelValues(name, WithAggregateMatcher(matchers, which_));
  }

 private:
  std::unique_ptr<Querier> tier_;
  Aggregate which_;
};

}  // namespace

std::unique_ptr<Querier> NewAggregateQuerier(std::unique_ptr<Querier> tier, Aggregate which) {
  return std::make_unique<AggregateQuerier>(std::move(tier), which);
}

int64_t ChooseResolution(int64_t step_ms, std::span<const int64_t> available) {
  int64_t best = 0;
  for (int64_t r : available) {
    if (r > 0 && r <= step_ms && r > best) best = r;
  }
  return best;
}

std::unique_ptr<SeriesSet> SelectAggregate(const Querier& downsampled,
                                           std::span<const Matcher> matchers, Aggregate which,
                                           const SelectHints& hints) {
  return std::make_unique<StrippedSeriesSet>(
      downsampled.Select(WithAggregateMatcher(matchers, which), hints));
}

}  // namespace gpumon::tsdb::downsample
