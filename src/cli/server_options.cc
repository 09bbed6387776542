#include "cli/server_options.h"

#include <chrono>
#include <cstdio>

#include "common/duration.h"
#include "scrape/config.h"
#include "sim/fleet.h"

namespace gpumon::cli {
namespace {

Result<int64_t> DurationFlag(const Flags& flags, const std::string& name, int64_t fallback,
                             bool allow_zero) {
  auto text = flags.Get(name);
  if (!text) return fallback;
  if (*text == "0") {  // "0" needs no unit, as in Prometheus
    if (!allow_zero) return Status::Error("flag --" + name + ": must be greater than 0");
    return int64_t{0};
  }
  auto d = ParseDuration(*text);
  if (!d.ok()) return Status::Error("flag --" + name + ": " + d.status().message());
  if (d->count() < 0 || (!allow_zero && d->count() == 0)) {
    return Status::Error("flag --" + name + ": must be " + (allow_zero ? "" : "greater than ") +
                         "0" + (allow_zero ? " or more" : ""));
  }
  return static_cast<int64_t>(d->count());
}

}  // namespace

const std::map<std::string, bool>& ServerFlagTable() {
  static const std::map<std::string, bool> kFlags = {{"listen", true},
                                                     {"data", true},
                                                     {"retention", true},
                                                     {"retention-size", true},
                                                     {"query.timeout", true},
                                                     {"query.max-samples", true},
                                                     {"query.max-concurrency", true},
                                                     {"query.lookback-delta", true},
                                                     {"query.replica-label", true},
                                                     {"config", true},
                                                     {"simulate", true},
                                                     {"rules", true},
                                                     {"seed", true},
                                                     {"scenario", true},
                                                     {"speed", true},
                                                     {"ground-truth", true},
                                                     {"nvml-lib", true},
                                                     {"local.interval", true},
                                                     {"web.config.file", true},
                                                     {"web.external-url", true},
                                                     {"web.enable-admin-api", false},
                                                     {"web.enable-lifecycle", false},
                                                     {"web.enable-remote-write-receiver", false},
                                                     {"web.max-connections", true},
                                                     {"web.read-timeout", true},
                                                     {"web.shutdown-timeout", true},
                                                     {"help", false}};
  return kFlags;
}

const char* ServerUsage() {
  return "usage: gpumon server [--listen HOST:PORT] [--data DIR] [--config FILE]\n"
         "                     [--simulate SPEC] [--retention DURATION] [--retention-size BYTES]\n"
         "                     [flags below]\n\n"
         "The all-in-one monitoring server: scrapes targets (or, with no --config, this\n"
         "node's GPUs in-process), stores them in the TSDB in --data, evaluates rules,\n"
         "notifies Alertmanager, remote-writes, and serves the Prometheus HTTP API.\n"
         "  --listen                 address to serve on (default :9090)\n"
         "  --data                   TSDB directory (default ./data)\n"
         "  --config                 Prometheus-format configuration: scrape_configs,\n"
         "                           rule_files, alerting, remote_write; SIGHUP reloads it\n"
         "  --simulate SPEC          with no --config: collect a SIMULATED local fleet,\n"
         "                           e.g. h200x8 (labelled simulated=\"true\")\n"
         "  --rules FILE             with no --config: evaluate these rule files (globs,\n"
         "                           repeatable), e.g. 'rules/*.rules.yml'; alerts are in\n"
         "                           /api/v1/alerts (use --config to notify Alertmanager)\n"
         "  --seed N                 simulator seed (default 1)\n"
         "  --scenario SPEC          with --simulate: run simulator scenarios, e.g.\n"
         "                           thermal-runaway:gpu=3:start=20m (repeatable)\n"
         "  --speed X                with --simulate: simulated time runs X times faster\n"
         "  --ground-truth FILE      with --simulate: rewrite FILE with what really\n"
         "                           happened, every few seconds and at exit\n"
         "  --nvml-lib PATH          NVML library to load instead of the driver's\n"
         "  --local.interval         collection interval with no --config (default 15s)\n"
         "  --retention              delete raw data older than this (default 15d; 0: keep)\n"
         "  --retention-size         delete the oldest blocks beyond this size, e.g. 512MB\n"
         "                           (default 0: no limit)\n"
         "  --query.timeout          longest a query may run (default 2m)\n"
         "  --query.max-samples      most samples a query may hold at once (default 50000000)\n"
         "  --query.max-concurrency  queries run at once; more wait (default 20)\n"
         "  --query.lookback-delta   how far back an instant selector looks (default 5m)\n"
         "  --query.replica-label    label telling HA replicas apart; series differing only\n"
         "                           in it are merged at query time (repeatable)\n"
         "  --web.config.file        TLS and basic auth (exporter-toolkit web config format)\n"
         "  --web.external-url       URL users reach the server at (alert generatorURL)\n"
         "  --web.enable-admin-api   serve /api/v1/admin/tsdb/* (delete, snapshot)\n"
         "  --web.enable-lifecycle   serve POST /-/reload and /-/quit\n"
         "  --web.enable-remote-write-receiver  accept remote write on /api/v1/write\n"
         "  --web.max-connections    most connections served at once; more get 503\n"
         "                           (default 4096)\n"
         "  --web.read-timeout       longest a request body may take to arrive, and a\n"
         "                           kept-alive connection may stay idle (default 5m)\n"
         "  --web.shutdown-timeout   after SIGTERM, exit within this even if a component\n"
         "                           hangs while stopping (default 30s)\n";
}

Result<ServerOptions> ParseServerOptions(const Flags& flags) {
  ServerOptions o;
  o.listen = flags.Get("listen").value_or(o.listen);
  o.data = flags.Get("data").value_or(o.data);
  auto retention = DurationFlag(flags, "retention", o.db.retention_ms, true);
  if (!retention.ok()) return retention.status();
  o.db.retention_ms = *retention;
  if (auto size = flags.Get("retention-size")) {
    auto bytes = scrape::ParseByteSize(*size);
    if (!bytes.ok()) return bytes.status().WithContext("flag --retention-size");
    o.db.retention_bytes = *bytes;
  }
  auto timeout = DurationFlag(flags, "query.timeout", o.engine.timeout_ms, false);
  if (!timeout.ok()) return timeout.status();
  o.engine.timeout_ms = *timeout;
  auto lookback = DurationFlag(flags, "query.lookback-delta", o.engine.lookback_delta_ms, false);
  if (!lookback.ok()) return lookback.status();
  o.engine.lookback_delta_ms = *lookback;
  auto samples = flags.GetInt("query.max-samples", o.engine.max_samples, 1, INT64_MAX);
  if (!samples.ok()) return samples.status();
  o.engine.max_samples = *samples;
  auto concurrency = flags.GetInt("query.max-concurrency", o.engine.max_concurrent, 1, 100000);
  if (!concurrency.ok()) return concurrency.status();
  o.engine.max_concurrent = static_cast<int>(*concurrency);
  auto interval = DurationFlag(flags, "local.interval", o.local_interval_ms, false);
  if (!interval.ok()) return interval.status();
  o.local_interval_ms = *interval;

  o.config_file = flags.Get("config");
  o.simulate_spec = flags.Get("simulate");
  if (o.config_file && o.simulate_spec) {
    return Status::Error(
        "flags --config and --simulate exclude each other: --simulate collects the local node, "
        "--config scrapes the configured targets (scrape `gpumon simulate` for a simulated fleet)");
  }
  for (const std::string& r : flags.GetAll("rules")) {
    if (r.empty()) return Status::Error("flag --rules: empty file name");
    o.rule_files.push_back(r);
  }
  if (o.config_file && !o.rule_files.empty()) {
    return Status::Error(
        "flags --config and --rules exclude each other: list rule files under rule_files in "
        "the configuration");
  }
  o.seed = flags.Get("seed").value_or(o.seed);
  for (const std::string& s : flags.GetAll("scenario")) {
    if (!s.empty()) o.scenarios.push_back(s);
  }
  if (auto speed = flags.Get("speed")) {
    const double v = sim::ParseSpeed(*speed);
    if (v == 0) {
      return Status::Error("flag --speed: expected a number greater than 0, got \"" + *speed +
                           "\"");
    }
    o.speed = v;
  }
  o.ground_truth_file = flags.Get("ground-truth");
  if (!o.simulate_spec &&
      (!o.scenarios.empty() || flags.Has("speed") || o.ground_truth_file.has_value())) {
    return Status::Error("flags --scenario, --speed and --ground-truth need --simulate");
  }
  o.nvml_library = flags.Get("nvml-lib").value_or("");
  o.web_config_file = flags.Get("web.config.file");
  o.external_url = flags.Get("web.external-url").value_or("");
  o.replica_labels = flags.GetAll("query.replica-label");
  for (const auto& l : o.replica_labels) {
    if (l.empty()) return Status::Error("flag --query.replica-label: empty label name");
  }
  o.enable_admin_api = flags.Has("web.enable-admin-api");
  o.enable_lifecycle = flags.Has("web.enable-lifecycle");
  o.enable_remote_write_receiver = flags.Has("web.enable-remote-write-receiver");
  auto max_connections = flags.GetInt("web.max-connections", o.max_connections, 1, 1000000);
  if (!max_connections.ok()) return max_connections.status();
  o.max_connections = *max_connections;
  auto read_timeout = DurationFlag(flags, "web.read-timeout", o.read_timeout_ms, false);
  if (!read_timeout.ok()) return read_timeout.status();
  o.read_timeout_ms = *read_timeout;
  auto shutdown_timeout = DurationFlag(flags, "web.shutdown-timeout", o.shutdown_timeout_ms, false);
  if (!shutdown_timeout.ok()) return shutdown_timeout.status();
  o.shutdown_timeout_ms = *shutdown_timeout;

  auto ms = [](int64_t v) { return FormatDuration(std::chrono::milliseconds(v)); };
  auto yes = [](bool b) { return std::string(b ? "true" : "false"); };
  std::string replicas;
  for (const auto& l : o.replica_labels) replicas += (replicas.empty() ? "" : ",") + l;
  o.effective_flags = {
      {"listen", o.listen},
      {"data", o.data},
      {"config", o.config_file.value_or("")},
      {"simulate", o.simulate_spec.value_or("")},
      {"rules",
       [&] {
         std::string joined;
         for (const auto& r : o.rule_files) joined += (joined.empty() ? "" : ",") + r;
         return joined;
       }()},
      {"scenario",
       [&] {
         std::string joined;
         for (const auto& s : o.scenarios) joined += (joined.empty() ? "" : ";") + s;
         return joined;
       }()},
      {"speed",
       [&] {
         char buf[32];
         std::snprintf(buf, sizeof buf, "%g", o.speed);
         return std::string(buf);
       }()},
      {"ground-truth", o.ground_truth_file.value_or("")},
      {"retention", ms(o.db.retention_ms)},
      {"retention-size", std::to_string(o.db.retention_bytes)},
      {"query.timeout", ms(o.engine.timeout_ms)},
      {"query.max-samples", std::to_string(o.engine.max_samples)},
      {"query.max-concurrency", std::to_string(o.engine.max_concurrent)},
      {"query.lookback-delta", ms(o.engine.lookback_delta_ms)},
      {"query.replica-label", replicas},
      {"web.config.file", o.web_config_file.value_or("")},
      {"web.external-url", o.external_url},
      {"web.enable-admin-api", yes(o.enable_admin_api)},
      {"web.enable-lifecycle", yes(o.enable_lifecycle)},
      {"web.enable-remote-write-receiver", yes(o.enable_remote_write_receiver)},
      {"web.max-connections", std::to_string(o.max_connections)},
      {"web.read-timeout", ms(o.read_timeout_ms)},
      {"web.shutdown-timeout", ms(o.shutdown_timeout_ms)},
      {"local.interval", ms(o.local_interval_ms)},
  };
  return o;
}

}  // namespace gpumon::cli
