#include "tsdb/block/block_querier.h"

#include <utility>
#include <vector>

#include "tsdb/block/block.h"
#include "tsdb/block/chunk_series_iterator.h"

namespace gpumon::tsdb::block {
namespace {

class StaticSeriesSet : public SeriesSet {
 public:
  explicit StaticSeriesSet(Status status = Status::Ok()) : status_(std::move(status)) {}
  bool Next() override { return false; }
  const Labels& labels() const override { return labels_; }
  std::unique_ptr<SeriesIterator> Iterator() const override { return nullptr; }
  Status status() const override { return status_; }

 private:
  Labels labels_;
  Status status_;
};

class BlockSeriesSet : public SeriesSet {
 public:
  BlockSeriesSet(std::shared_ptr<const Block> block, std::shared_ptr<const Tombstones> tombstones,
                 index::Postings ids, int64_t mint, int64_t maxt)
      : block_(std::move(block)),
        tombstones_(std::move(tombstones)),
        ids_(std::move(ids)),
        mint_(mint),
        maxt_(maxt) {}

  bool Next() override {
    const index::IndexReader& ix = block_->index();
    SeriesCache& cache = block_->series_cache();
    while (pos_ < ids_.size()) {
      const uint64_t id = ids_[pos_++];
      const bool cached = cache.Get(id, &labels_, &all_chunks_);
      if (!cached) {
        Status s = ix.ReadSeries(id, &refs_);
        if (!s.ok()) {
          status_ = s;
          pos_ = ids_.size();
          return false;
        }
        all_chunks_.swap(refs_.chunks);
      }
      const Intervals* del = tombstones_ ? tombstones_->Get(id) : nullptr;
      chunks_.clear();
      for (const index::ChunkMeta& c : all_chunks_) {
        if (c.maxt < mint_ || c.mint > maxt_) continue;
        if (del != nullptr && Covers(*del, c.mint, c.maxt)) continue;
        chunks_.push_back(c);
      }
      if (chunks_.empty()) continue;
      // Built (and cached) only for series with data in range.
      if (!cached) {
        labels_ = ix.ToLabels(refs_.labels);
        cache.Put(id, labels_, all_chunks_);
      }
      deleted_ = del != nullptr ? *del : Intervals{};
      return true;
    }
    return false;
  }
  const Labels& labels() const override { return labels_; }
  std::unique_ptr<SeriesIterator> Iterator() const override {
    return std::make_unique<ChunkSeriesIterator>(block_, &block_->chunk_reader(), chunks_, deleted_,
                                                 mint_, maxt_);
  }
  Status status() const override { return status_; }

 private:
  std::shared_ptr<const Block> block_;
  std::shared_ptr<const Tombstones> tombstones_;
  index::Postings ids_;
  size_t pos_ = 0;
  int64_t mint_;
  int64_t maxt_;
  index::IndexReader::SeriesRefs refs_;
  std::vector<index::ChunkMeta> all_chunks_;  // of the current series
  std::vector<index::ChunkMeta> chunks_;      // those in range, not deleted
  Intervals deleted_;
  Labels labels_;
  Status status_;
};

class BlockQuerier : public Querier {
 public:
  BlockQuerier(std::shared_ptr<const Block> block, std::shared_ptr<const Tombstones> tombstones,
               int64_t mint, int64_t maxt)
      : block_(std::move(block)), tombstones_(std::move(tombstones)), mint_(mint), maxt_(maxt) {}

  std::unique_ptr<SeriesSet> Select(std::span<const Matcher> matchers,
                                    const SelectHints& /*hints*/) const override {
    const BlockMeta& m = block_->meta();
    if (maxt_ < mint_ || maxt_ < m.min_time || mint_ >= m.max_time) {
      return std::make_unique<StaticSeriesSet>();
    }
    auto ids = block_->Postings(matchers);
    if (!ids.ok()) return std::make_unique<StaticSeriesSet>(ids.status());
    return std::make_unique<BlockSeriesSet>(block_, tombstones_, std::move(ids).value(), mint_,
                                            maxt_);
  }
  Result<std::vector<std::string>> LabelNames(std::span<const Matcher> matchers) const override {
    return block_->LabelNames(matchers);
  }
  Result<std::vector<std::string>> LabelValues(const std::string& name,
                                               std::span<const Matcher> matchers) const override {
    return block_->LabelValues(name, matchers);
  }

 private:
  std::shared_ptr<const Block> block_;
  std::shared_ptr<const Tombstones> tombstones_;
  int64_t mint_;
  int64_t maxt_;
};

}  // namespace

std::unique_ptr<Querier> NewBlockQuerier(std::shared_ptr<const Block> block,
                                         std::shared_ptr<const Tombstones> tombstones, int64_t mint,
                                         int64_t maxt) {
  return std::make_unique<BlockQuerier>(std::move(block), std::move(tombstones), mint, maxt);
}

}  // namespace gpumon::tsdb::block
