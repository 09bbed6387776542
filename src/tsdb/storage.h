// The read interface the TSDB offers to the query engine: select series by
// matchers over a time range and iterate their samples; look up label names
// and values. Implemented by the head, by persistent blocks, by downsampled
// tiers, and by a merge of them (DB::Querier).
//
// Contract:
// - SeriesSet yields series in ascending label order, each once.
// - A SeriesIterator yields samples in strictly increasing time order,
//   restricted to the querier's [mint, maxt] (both inclusive).
// - Seek(t) advances to the first sample with time >= t (never backwards)
//   and returns whether one exists.
// - Errors surface through status() after Next()/Seek() return false.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/labels.h"
#include "common/status.h"
#include "tsdb/matcher.h"
#include "tsdb/sample.h"

namespace gpumon::tsdb {

class SeriesIterator {
 public:
  virtual ~SeriesIterator() = default;
  virtual bool Next() = 0;
  virtual bool Seek(int64_t t) = 0;
  virtual Sample At() const = 0;
  virtual Status status() const { return Status::Ok(); }
};

class SeriesSet {
 public:
  virtual ~SeriesSet() = default;
  virtual bool Next() = 0;
  virtual const Labels& labels() const = 0;
  virtual std::unique_ptr<SeriesIterator> Iterator() const = 0;
  virtual Status status() const { return Status::Ok(); }
};

// Hints that let a querier answer from a coarser downsampled tier. step_ms
// is the resolution the caller needs (0: raw samples required).
struct SelectHints {
  int64_t step_ms = 0;
};

class Querier {
 public:
  virtual ~Querier() = default;
  virtual std::unique_ptr<SeriesSet> Select(std::span<const Matcher> matchers,
                                            const SelectHints& hints = {}) const = 0;
  // Sorted, unique. With matchers, only names/values of matching series.
  virtual Result<std::vector<std::string>> LabelNames(std::span<const Matcher> matchers) const = 0;
  virtual Result<std::vector<std::string>> LabelValues(const std::string& name,
                                                       std::span<const Matcher> matchers) const = 0;
};

}  // namespace gpumon::tsdb
