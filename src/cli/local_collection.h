// LocalCollection: `gpumon server`'s in-process collection. With no
// configuration the server monitors its own node: the agent's collectors
// (real NVML when present, the simulator with --simulate, otherwise only
// the agent's own metrics) run inside the server, and the server's own
// metrics are collected the same way, all stored directly.
//
// Contract:
// - Each local source is a scrape::ScrapeLoop whose fetch renders the
//   exposition in-process instead of over HTTP, so labels, the report
//   series (up, scrape_duration_seconds, scrape_samples_scraped,
//   scrape_samples_post_metric_relabeling, scrape_series_added), staleness
//   and commit semantics are exactly those of a configured scrape.
// - Node target: labels job=<node_job>, instance=<hostname>; its samples
//   are the agent's /metrics in the chosen name scheme (simulated GPUs
//   carry simulated="true"). When the self target is on, the agent's
//   process_* families are left out of the node target: it is the same
//   process, reported once under the self job.
// - Self target: labels job=<self_job>, instance=<self_instance>, samples
//   from options.self_metrics (e.g. selfmon::Registry::Render).
// - StartLocalCollection fails only when what was asked for explicitly
//   cannot be had (the simulator's library for --simulate, a valid scenario
//   list, a ground-truth file, or a given --nvml-lib); a missing NVML driver
//   is not an error, it is described.
// - Stop() (and destruction) stops the loops, writing stale markers for
//   every local series, then the collectors. Targets() is thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "exposition/format.h"
#include "gpu/family_builder.h"
#include "scrape/appender.h"
#include "scrape/manager.h"

namespace gpumon::cli {

struct LocalCollectionOptions {
  // The node's collectors; false runs only the self target.
  bool collect_node = true;
  std::optional<std::string> simulate_spec;  // a fleet spec, e.g. "h100x8"
  std::string seed = "1";
  // With simulate_spec: scenarios (';'-separated), time scale, and a file
  // the simulator's ground truth is rewritten to every few seconds and when
  // stopped (empty: none).
  std::string scenarios;
  double speed = 1;
  std::string ground_truth_file;
  // NVML library to load; empty: the driver's (or the simulator's with
  // simulate_spec).
  std::string nvml_library;
  std::string hostname;  // empty: the machine's host name
  gpu::NameScheme names = gpu::NameScheme::kNative;
  std::string node_job = "gpumon-agent";

  // The server's own metrics; empty: no self target.
  std::function<void(exposition::Format, std::string*)> self_metrics;
  std::string self_job = "gpumon";
  std::string self_instance = "localhost:9090";

  int64_t interval_ms = 15000;
  // false: start nothing in the background (tests drive ScrapeNow).
  bool run = true;
};

class LocalCollection {
 public:
  ~LocalCollection();
  LocalCollection(const LocalCollection&) = delete;
  LocalCollection& operator=(const LocalCollection&) = delete;

  // For the start-up notice: "collecting from NVML: 8 GPUs (driver ...)",
  // "SIMULATED fleet h100x8: 8 GPUs, not real hardware", or
  // "no NVML found (...): agent metrics only, no GPU metrics".
  const std::string& description() const { return description_; }
  bool simulated() const { return simulated_; }
  size_t gpus() const;

  // One scrape of every local target at `now_ms`, on the caller's thread;
  // only with options.run == false (the loops' threads own the targets
  // otherwise).
  void ScrapeNow(int64_t now_ms);
  // Status of the local targets, in /api/v1/targets' shape.
  std::vector<scrape::TargetSnapshot> Targets() const;
  void Stop();

 private:
  friend Result<std::unique_ptr<LocalCollection>> StartLocalCollection(
      const LocalCollectionOptions& options, scrape::AppenderFactory appender);
  struct Impl;
  explicit LocalCollection(std::unique_ptr<Impl> impl);

  std::unique_ptr<Impl> impl_;
  std::string description_;
  bool simulated_ = false;
};

Result<std::unique_ptr<LocalCollection>> StartLocalCollection(const LocalCollectionOptions& options,
                                                              scrape::AppenderFactory appender);

}  // namespace gpumon::cli
