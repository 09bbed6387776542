// `gpumon server`'s command line: flags parsed and checked into
// ServerOptions before anything starts, so a bad flag fails fast with a
// message naming it. Defaults are Prometheus's where a flag has a
// Prometheus counterpart (same name, same meaning).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/flags.h"
#include "common/status.h"
#include "promql/engine.h"
#include "tsdb/db/db.h"

namespace gpumon::cli {

struct ServerOptions {
  std::string listen = ":9090";
  std::string data = "./data";
  tsdb::db::DbOptions db;
  promql::EngineOptions engine;
  std::optional<std::string> config_file;    // --config: scrape, rules, alerting, remote write
  std::optional<std::string> simulate_spec;  // --simulate: simulated local GPUs (no --config)
  std::vector<std::string> rule_files;       // --rules (repeatable, globs; no --config)
  std::string seed = "1";
  std::vector<std::string> scenarios;            // --scenario (repeatable), with --simulate
  double speed = 1;                              // --speed, with --simulate
  std::optional<std::string> ground_truth_file;  // --ground-truth, with --simulate
  std::string nvml_library;                      // --nvml-lib
  std::optional<std::string> web_config_file;    // --web.config.file: TLS and basic auth
  std::string external_url;                      // --web.external-url; empty: http://<host>:<port>
  std::vector<std::string> replica_labels;       // --query.replica-label (repeatable)
  bool enable_admin_api = false;                 // --web.enable-admin-api
  bool enable_lifecycle = false;                 // --web.enable-lifecycle: POST /-/reload
  bool enable_remote_write_receiver = false;     // --web.enable-remote-write-receiver
  // --web.max-connections: Prometheus's flag (its default is 512); higher
  // here because an idle connection costs no thread in this server.
  int64_t max_connections = 4096;
  // --web.read-timeout (Prometheus's, default 5m): the longest a request
  // body may take to arrive and a kept-alive connection may sit idle.
  int64_t read_timeout_ms = 5 * 60 * 1000;
  // --web.shutdown-timeout: after SIGTERM/SIGINT the process exits within
  // this, even when a component hangs while stopping.
  int64_t shutdown_timeout_ms = 30 * 1000;
  int64_t local_interval_ms = 15 * 1000;  // --local.interval
  // Every flag with its effective value, for /api/v1/status/flags.
  std::map<std::string, std::string> effective_flags;
};

// The flag table Flags::Parse needs.
const std::map<std::string, bool>& ServerFlagTable();
const char* ServerUsage();

Result<ServerOptions> ParseServerOptions(const Flags& flags);

}  // namespace gpumon::cli
