#include "tsdb/db/merge_querier.h"

#include <algorithm>

namespace gpumon::tsdb::db {
namespace {

// Merges sorted iterators; on equal timestamps the highest-index source wins.
class MergedIterator : public SeriesIterator {
 public:
  explicit MergedIterator(std::vector<std::unique_ptr<SeriesIterator>> its)
      : its_(std::move(its)), valid_(its_.size(), false) {}

  bool Next() override {
    if (!started_) {
      started_ = true;
      for (size_t i = 0; i < its_.size(); ++i) valid_[i] = its_[i]->Next();
    } else {
      Advance(cur_.t);
    }
    return Pick();
  }

  bool Seek(int64_t t) override {
    if (started_ && has_ && cur_.t >= t) return true;
    started_ = true;
    for (size_t i = 0; i < its_.size(); ++i) {
      if (!valid_[i] || its_[i]->At().t < t) valid_[i] = its_[i]->Seek(t);
    }
    return Pick();
  }

  Sample At() const override { return cur_; }

  Status status() const override {
    for (const auto& it : its_) {
      if (!it->status().ok()) return it->status();
    }
    return Status::Ok();
  }

 private:
  // Moves every source positioned at time t past it.
  void Advance(int64_t t) {
    for (size_t i = 0; i < its_.size(); ++i) {
      if (valid_[i] && its_[i]->At().t <= t) valid_[i] = its_[i]->Next();
    }
  }
  bool Pick() {
    has_ = false;
    for (size_t i = 0; i < its_.size(); ++i) {
      if (!valid_[i]) continue;
      Sample s = its_[i]->At();
      if (!has_ || s.t <= cur_.t) {  // later sources win ties
        cur_ = s;
        has_ = true;
      }
    }
    return has_;
  }

  std::vector<std::unique_ptr<SeriesIterator>> its_;
  std::vector<bool> valid_;
  bool started_ = false;
  bool has_ = false;
  Sample cur_;
};

class MergedSeriesSet : public SeriesSet {
 public:
  explicit MergedSeriesSet(std::vector<std::unique_ptr<SeriesSet>> sets)
      : sets_(std::move(sets)), valid_(sets_.size(), false) {
    for (size_t i = 0; i < sets_.size(); ++i) valid_[i] = sets_[i]->Next();
    started_ = false;
  }

  bool Next() override {
    if (started_) {
      for (size_t i : current_) valid_[i] = sets_[i]->Next();
    }
    started_ = true;
    current_.clear();
    min_ = nullptr;
    for (size_t i = 0; i < sets_.size(); ++i) {
      if (!valid_[i]) continue;
      const Labels& l = sets_[i]->labels();
      if (min_ == nullptr || l < *min_) {
        min_ = &l;
        current_.assign(1, i);
      } else if (l == *min_) {
        current_.push_back(i);
      }
    }
    return min_ != nullptr;
  }

  // The sources holding the current series only move in Next, so their
  // labels can be lent rather than copied.
  const Labels& labels() const override { return min_ != nullptr ? *min_ : empty_; }

  std::unique_ptr<SeriesIterator> Iterator() const override {
    if (current_.size() == 1) return sets_[current_[0]]->Iterator();
    std::vector<std::unique_ptr<SeriesIterator>> its;
    its.reserve(current_.size());
    for (size_t i : current_) its.push_back(sets_[i]->Iterator());
    return MergeIterators(std::move(its));
  }

  Status status() const override {
    for (const auto& s : sets_) {
      if (!s->status().ok()) return s->status();
    }
    return Status::Ok();
  }

 private:
  std::vector<std::unique_ptr<SeriesSet>> sets_;
  std::vector<bool> valid_;
  std::vector<size_t> current_;  // sources holding the current series, ascending
  bool started_ = false;
  const Labels* min_ = nullptr;  // labels of the current series, in a source
  Labels empty_;
};

Result<std::vector<std::string>> Union(std::vector<std::vector<std::string>> lists) {
  std::vector<std::string> out;
  for (auto& l : lists) {
    std::vector<std::string> merged;
    merged.reserve(out.size() + l.size());
    std::set_union(std::make_move_iterator(out.begin()), std::make_move_iterator(out.end()),
                   std::make_move_iterator(l.begin()), std::make_move_iterator(l.end()),
                   std::back_inserter(merged));
    out = std::move(merged);
  }
  return out;
}

}  // namespace

std::unique_ptr<SeriesIterator> MergeIterators(std::vector<std::unique_ptr<SeriesIterator>> its) {
  return std::make_unique<MergedIterator>(std::move(its));
}

std::unique_ptr<SeriesSet> MergeQuerier::Select(std::span<const Matcher> matchers,
                                                const SelectHints& hints) const {
  std::vector<std::unique_ptr<SeriesSet>> sets;
  sets.reserve(queriers_.size());
  for (const auto& q : queriers_) sets.push_back(q->Select(matchers, hints));
  return std::make_unique<MergedSeriesSet>(std::move(sets));
}

Result<std::vector<std::string>> MergeQuerier::LabelNames(std::span<const Matcher> matchers) const {
  std::vector<std::vector<std::string>> lists;
  for (const auto& q : queriers_) {
    auto r = q->LabelNames(matchers);
    if (!r.ok()) return r.status();
    lists.push_back(std::move(r).value());
  }
  return Union(std::move(lists));
}

Result<std::vector<std::string>> MergeQuerier::LabelValues(
    const std::string& name, std::span<const Matcher> matchers) const {
  std::vector<std::vector<std::string>> lists;
  for (const auto& q : queriers_) {
    auto r = q->LabelValues(name, matchers);
    if (!r.ok()) return r.status();
    lists.push_back(std::move(r).value());
  }
  return Union(std::move(lists));
}

}  // namespace gpumon::tsdb::db
