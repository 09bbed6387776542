// WriteStorage: the server's remote_write fan-out. It owns one
// QueueManager per remote_write entry, each with its disk queue in
// <dir>/<queue name>/, and wraps the server's appender factory so that
// every committed batch is also queued for every endpoint.
//
// Contract:
// - Wrap(inner) returns a factory whose appenders pass Append, Commit and
//   Rollback through to inner's; only samples inner accepted are queued,
//   and only once inner's Commit succeeded. A queueing failure (disk full)
//   is logged and counted, never turned into a failed commit.
// - ApplyConfig validates everything before changing anything: names must
//   be unique (an unnamed entry is named by a hash of its config, as
//   Prometheus does), URLs absolute http(s), relabel rules valid, headers
//   not reserved. It keeps running queues whose config and external labels
//   are unchanged, restarts changed ones on the same directory (the
//   backlog is kept), stops removed ones and deletes their directories,
//   like any other directory under <dir> that no entry claims.
// - Stop ends all sending; what is undelivered stays on disk and is sent
//   after the next ApplyConfig (e.g. after a restart). Commits after Stop
//   only reach inner.
// - AppendRef hands out WriteStorage's own series refs (SeriesRefs), each
//   mapped to the labels and inner's ref, which is passed on with the
//   labels: callers keep their ref fast path and every queued sample
//   still has its labels. Refs unused for 3-6 hours are forgotten; the
//   caller then gets an error and resolves by labels again.
// - Thread-safe; appenders and factories may outlive the WriteStorage
//   (they then stop queueing).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/labels.h"
#include "common/status.h"
#include "remote/queue/queue_manager.h"
#include "scrape/appender.h"
#include "scrape/config.h"

namespace gpumon::remote {

struct WriteStorageOptions {
  // Segment size and disk bound per queue (sample_age_limit comes from
  // each entry's queue_config).
  DiskQueueOptions disk;
  std::string user_agent = "gpumon/" GPUMON_VERSION;
};

// The directory name a remote_write entry's queue uses: its name, or the
// hash-derived default name, with characters unsafe in paths replaced.
std::string RemoteWriteQueueName(const scrape::RemoteWriteConfig& config);

class WriteStorage {
 public:
  // `dir` is the folder holding every queue, e.g. <data>/remote-write.
  explicit WriteStorage(std::string dir, WriteStorageOptions options = {});
  ~WriteStorage();
  WriteStorage(const WriteStorage&) = delete;
  WriteStorage& operator=(const WriteStorage&) = delete;

  Status ApplyConfig(const std::vector<scrape::RemoteWriteConfig>& configs, Labels external_labels);
  scrape::AppenderFactory Wrap(scrape::AppenderFactory inner);
  void Stop();
  std::vector<QueueStats> Stats() const;

  struct State;  // shared with the appenders

 private:
  const std::string dir_;
  const WriteStorageOptions options_;
  std::shared_ptr<State> state_;
};

}  // namespace gpumon::remote
