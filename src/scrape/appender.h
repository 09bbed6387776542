// Appender: where scraped samples go. One appender per scrape: samples are
// buffered by Append and made visible together by Commit.
//
// Contract:
// - Append may reject one sample (out of order, duplicate timestamp); the
//   scrape loop counts such rejections and carries on with the batch.
// - AppendRef is the fast path for a caller that caches series: with the
//   ref an earlier AppendRef returned for the same series, the storage may
//   skip the label lookup (then `labels` may be empty). It returns the
//   series' ref, or 0 when this appender has no refs (the caller must then
//   keep passing labels). With an unknown ref and empty labels it fails.
// - Commit applies the batch or nothing; Rollback discards it.
// - HeadAppenderFactory adapts the TSDB head's appender (DB::Appender()),
//   remembering series refs per label set is left to the head itself.
#pragma once

#include <functional>
#include <memory>

#include "common/labels.h"
#include "common/status.h"
#include "tsdb/head/head_appender.h"

namespace gpumon::scrape {

class Appender {
 public:
  virtual ~Appender() = default;
  virtual Status Append(const Labels& labels, int64_t t_ms, double v) = 0;
  virtual Result<uint64_t> AppendRef(uint64_t ref, const Labels& labels, int64_t t_ms, double v) {
    (void)ref;
    if (labels.empty()) return Status::Error("series ref unknown to this appender");
    if (Status s = Append(labels, t_ms, v); !s.ok()) return s;
    return uint64_t{0};
  }
  // A hint that AppendRef(ref, ...) follows soon (no effect by default).
  virtual void Prefetch(uint64_t ref) { (void)ref; }
  virtual Status Commit() = 0;
  virtual void Rollback() = 0;
};

using AppenderFactory = std::function<std::unique_ptr<Appender>()>;

// Wraps appenders made by `make` (e.g. [db] { return db->Appender(); }).
AppenderFactory HeadAppenderFactory(
    std::function<std::unique_ptr<tsdb::head::HeadAppender>()> make);

}  // namespace gpumon::scrape
