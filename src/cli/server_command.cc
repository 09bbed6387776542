// `gpumon server`: the query server. Opens the TSDB in a data directory
// (replaying its WAL) and serves the Prometheus HTTP API over it, so
// Prometheus clients such as Grafana work unchanged. With --config it also
// scrapes the configured targets into the TSDB. Rules, alerting and remote
// write come later; each part is wired separately below.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/runtime.h"
#include "common/duration.h"
#include "common/log.h"
#include "promql/engine.h"
#include "scrape/config.h"
#include "scrape/manager.h"
#include "scrape/targets_json.h"
#include "tsdb/db/db.h"
#include "web/api/backend.h"
#include "web/api/http_api.h"
#include "web/http_server.h"

namespace gpumon::cli {
namespace {

constexpr const char* kUsage =
    "usage: gpumon server [--listen HOST:PORT] [--data DIR] [--retention DURATION]\n"
    "                     [--retention-size BYTES] [--query.timeout DURATION]\n"
    "                     [--query.max-samples N] [--query.max-concurrency N]\n"
    "                     [--query.lookback-delta DURATION] [--config FILE]\n\n"
    "Serves the Prometheus HTTP API (/api/v1/...) over the TSDB in --data\n"
    "(default ./data; load history with `gpumon tsdb import`).\n"
    "  --listen                 address to serve on (default :9090)\n"
    "  --retention              delete raw data older than this (default 15d; 0: keep)\n"
    "  --retention-size         delete the oldest blocks beyond this size, e.g. 512MB\n"
    "                           (default 0: no limit)\n"
    "  --query.timeout          longest a query may run (default 2m)\n"
    "  --query.max-samples      most samples a query may hold at once (default 50000000)\n"
    "  --query.max-concurrency  queries run at once; more wait (default 20)\n"
    "  --query.lookback-delta   how far back an instant selector looks (default 5m)\n"
    "  --config                 Prometheus-format configuration: scrape_configs are\n"
    "                           scraped into the TSDB; SIGHUP reloads it\n";

struct ServerConfig {
  std::string listen = ":9090";
  std::string data = "./data";
  tsdb::db::DbOptions db;
  promql::EngineOptions engine;
  std::map<std::string, std::string> effective_flags;
};

// "1073741824", "512MB", "1GiB" (units are powers of 1024, as Prometheus's).
Result<uint64_t> ParseBytes(const std::string& text) {
  size_t i = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  if (i == 0) return Status::Error("invalid size \"" + text + "\"");
  uint64_t n = std::stoull(text.substr(0, i));
  std::string unit = text.substr(i);
  static const std::pair<const char*, int> kUnits[] = {
      {"", 0},    {"B", 0},  {"KB", 1},  {"KiB", 1}, {"MB", 2},  {"MiB", 2}, {"GB", 3},
      {"GiB", 3}, {"TB", 4}, {"TiB", 4}, {"PB", 5},  {"PiB", 5}, {"EB", 6},  {"EiB", 6}};
  for (const auto& [name, power] : kUnits) {
    if (unit == name) {
      for (int p = 0; p < power; ++p) {
        if (n > UINT64_MAX / 1024) return Status::Error("size \"" + text + "\" overflows");
        n *= 1024;
      }
      return n;
    }
  }
  return Status::Error("invalid size \"" + text + "\": unknown unit \"" + unit + "\"");
}

Result<int64_t> DurationFlag(const Flags& flags, const std::string& name, int64_t fallback,
                             bool allow_zero) {
  auto text = flags.Get(name);
  if (!text) return fallback;
  auto d = ParseDuration(*text);
  if (!d.ok()) return Status::Error("flag --" + name + ": " + d.status().message());
  if (d->count() < 0 || (!allow_zero && d->count() == 0)) {
    return Status::Error("flag --" + name + ": must be " + (allow_zero ? "" : "greater than ") +
                         "0" + (allow_zero ? " or more" : ""));
  }
  return static_cast<int64_t>(d->count());
}

Result<ServerConfig> ParseConfig(const Flags& flags) {
  ServerConfig c;
  c.listen = flags.Get("listen").value_or(c.listen);
  c.data = flags.Get("data").value_or(c.data);
  auto retention = DurationFlag(flags, "retention", c.db.retention_ms, true);
  if (!retention.ok()) return retention.status();
  c.db.retention_ms = *retention;
  if (auto size = flags.Get("retention-size")) {
    auto bytes = ParseBytes(*size);
    if (!bytes.ok()) return bytes.status().WithContext("flag --retention-size");
    c.db.retention_bytes = *bytes;
  }
  auto timeout = DurationFlag(flags, "query.timeout", c.engine.timeout_ms, false);
  if (!timeout.ok()) return timeout.status();
  c.engine.timeout_ms = *timeout;
  auto lookback = DurationFlag(flags, "query.lookback-delta", c.engine.lookback_delta_ms, false);
  if (!lookback.ok()) return lookback.status();
  c.engine.lookback_delta_ms = *lookback;
  auto samples = flags.GetInt("query.max-samples", c.engine.max_samples, 1, INT64_MAX);
  if (!samples.ok()) return samples.status();
  c.engine.max_samples = *samples;
  auto concurrency = flags.GetInt("query.max-concurrency", c.engine.max_concurrent, 1, 100000);
  if (!concurrency.ok()) return concurrency.status();
  c.engine.max_concurrent = static_cast<int>(*concurrency);

  auto ms = [](int64_t v) { return FormatDuration(std::chrono::milliseconds(v)); };
  c.effective_flags = {
      {"listen", c.listen},
      {"data", c.data},
      {"retention", ms(c.db.retention_ms)},
      {"retention-size", std::to_string(c.db.retention_bytes)},
      {"query.timeout", ms(c.engine.timeout_ms)},
      {"query.max-samples", std::to_string(c.engine.max_samples)},
      {"query.max-concurrency", std::to_string(c.engine.max_concurrent)},
      {"query.lookback-delta", ms(c.engine.lookback_delta_ms)},
  };
  return c;
}

// Prints WAL replay progress to stderr, one line per segment.
std::function<void(const tsdb::wal::ReplayProgress&)> ReplayPrinter() {
  auto last = std::make_shared<int>(-1);
  return [last](const tsdb::wal::ReplayProgress& p) {
    if (p.segment == *last) return;
    *last = p.segment;
    int pct = p.bytes_total > 0 ? static_cast<int>(p.bytes_done * 100 / p.bytes_total) : 100;
    // The segment being read; after the last one, segments_done == total.
    int current = std::min(p.segments_done + 1, p.segments_total);
    std::fprintf(stderr, "replaying WAL: segment %d/%d (%d%%)\n", current, p.segments_total, pct);
  };
}

std::string Cwd() {
  std::error_code ec;
  auto p = std::filesystem::current_path(ec);
  return ec ? "" : p.string();
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Stop() has no effect on a server that is not yet running, so the signal
// watcher repeats it until the main thread is past Run().
struct StopControl {
  std::mutex mu;
  bool done = false;  // main thread will not (or no longer) run the server
  std::atomic<bool> requested{false};
};

}  // namespace

int RunServer(const std::vector<std::string>& args) {
  auto flags = Flags::Parse(args, {{"listen", true},
                                   {"data", true},
                                   {"retention", true},
                                   {"retention-size", true},
                                   {"query.timeout", true},
                                   {"query.max-samples", true},
                                   {"query.max-concurrency", true},
                                   {"query.lookback-delta", true},
                                   {"config", true},
                                   {"help", false}});
  if (!flags.ok()) {
    std::cerr << "gpumon server: " << flags.status().message() << "\n" << kUsage;
    return 2;
  }
  if (flags->Has("help")) {
    std::cout << kUsage;
    return 0;
  }
  auto config = ParseConfig(*flags);
  if (!config.ok()) {
    std::cerr << "gpumon server: " << config.status().message() << "\n";
    return 2;
  }
  const int64_t start_ms = NowMs();
  // The scrape configuration is checked before anything starts.
  std::optional<scrape::Config> scrape_config;
  if (auto path = flags->Get("config")) {
    auto loaded = scrape::LoadConfig(*path);
    if (!loaded.ok()) {
      std::cerr << "gpumon server: " << loaded.status().message() << "\n";
      return 2;
    }
    scrape_config = std::move(*loaded);
  }
  // SIGHUP (reload) is taken by a watcher thread; block it before any
  // thread starts so no other thread receives it.
  sigset_t hup;
  sigemptyset(&hup);
  sigaddset(&hup, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &hup, nullptr);

  // Bind first so a port conflict fails fast, before a long WAL replay.
  web::HttpServer server({.threads = 8, .keep_alive_max_requests = 100});
  if (Status s = server.Bind(config->listen); !s.ok()) {
    std::cerr << "gpumon server: " << s.message() << "\n";
    return 1;
  }
  auto stop = std::make_shared<StopControl>();
  web::HttpServer* srv = &server;
  OnTerminationSignal([stop, srv] {
    stop->requested = true;
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(stop->mu);
        if (stop->done) return;
        srv->Stop();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  auto finish = [&stop] {
    std::lock_guard<std::mutex> lock(stop->mu);
    stop->done = true;
  };

  tsdb::db::DbOptions db_opts = config->db;
  db_opts.replay_progress = ReplayPrinter();
  LogInfo("opening TSDB in " + config->data);
  auto opened = tsdb::db::DB::Open(config->data, db_opts);
  if (!opened.ok()) {
    finish();
    std::cerr << "gpumon server: cannot open " << config->data << ": " << opened.status().message()
              << "\n";
    return 1;
  }
  std::unique_ptr<tsdb::db::DB> db = std::move(opened).value();
  if (stop->requested) {
    finish();
    return 0;
  }

  promql::Engine engine(config->engine);
  tsdb::db::DB* dbp = db.get();
  web::api::StorageBackend backend(
      [dbp](int64_t mint, int64_t maxt) { return dbp->NewQuerier(mint, maxt); }, engine,
      [dbp] {
        const auto& head = dbp->head();
        web::api::HeadSummary h;
        h.num_series = head.NumSeries();
        h.chunk_count = static_cast<int64_t>(head.Stats(0).chunks);
        h.min_time = head.MinTime();
        h.max_time = head.MaxTime();
        return h;
      });

  web::api::ServerInfo info;
  info.version = "3.0.0";
  info.revision = std::string("gpumon ") + GPUMON_VERSION;
  info.start_time_ms = start_ms;
  info.cwd = Cwd();
  info.hostname = LocalHostname();
  info.storage_retention = config->effective_flags["retention"];
  info.flags = config->effective_flags;
  if (scrape_config) {
    info.flags["config.file"] = scrape_config->file;
    info.config_yaml = scrape_config->yaml;
  }

  // Scraping: one manager appending into the DB's head; SIGHUP reloads
  // the file, keeping the running configuration when the new one is bad.
  std::unique_ptr<scrape::Manager> scraper;
  std::atomic<bool> reload_stop{false};
  std::thread reloader;
  if (scrape_config) {
    scraper = std::make_unique<scrape::Manager>(
        scrape::HeadAppenderFactory([dbp] { return dbp->Appender(); }));
    scraper->ApplyConfig(*scrape_config);
    LogInfo("scraping " + std::to_string(scrape_config->scrape_configs.size()) + " job(s) from " +
            scrape_config->file);
    reloader = std::thread([&reload_stop, &scraper, path = scrape_config->file, hup] {
      while (!reload_stop) {
        timespec wait{0, 200 * 1000 * 1000};
        if (sigtimedwait(&hup, nullptr, &wait) != SIGHUP) continue;
        auto next = scrape::LoadConfig(path);
        if (!next.ok()) {
          LogError("reloading " + path +
                   " failed, keeping the running configuration: " + next.status().message());
          continue;
        }
        scraper->ApplyConfig(*next);
        LogInfo("reloaded " + path);
      }
    });
    scrape::Manager* mgr = scraper.get();
    server.raw().Get("/api/v1/targets", [mgr](const httplib::Request& req, httplib::Response& res) {
      res.set_content(scrape::TargetsJson(mgr->Targets(), req.get_param_value("state"),
                                          req.get_param_value("scrapePool")),
                      "application/json");
    });
  }
  web::api::QueryApi query_api(backend, NowMs);
  web::api::SeriesApi series_api(backend);
  web::api::StatusApi status_api(backend, info, NowMs);
  web::api::RegisterApiRoutes(server.raw(), {.query = &query_api,
                                             .series = &series_api,
                                             .status = &status_api,
                                             .ready = [] { return true; }});

  LogInfo("serving the Prometheus API on " + config->listen + " (port " +
          std::to_string(server.port()) + ")");
  server.Run();
  finish();
  if (scraper) {
    reload_stop = true;
    if (reloader.joinable()) reloader.join();
    scraper->Stop();  // writes stale markers for every scraped series
  }
  LogInfo("server stopped");
  return 0;
}

}  // namespace gpumon::cli
