// Discoverer: one service-discovery mechanism of a scrape job (one entry of
// static_configs, file_sd_configs, dns_sd_configs, http_sd_configs,
// consul_sd_configs or kubernetes_sd_configs), polled by the scrape
// manager's discovery thread.
//
// Contract:
// - Refresh() returns the mechanism's complete current list of target
//   groups (each target of a group gets the group's labels; mechanisms
//   whose targets carry their own labels return one group per target). An
//   error means "nothing known changed": the manager keeps the previous
//   list and logs the reason. A mechanism that can fail for one part (one
//   DNS name, one Consul service) keeps that part's previous groups itself.
// - Refresh() may block on the network (bounded by the mechanism's
//   timeout); it is called from one thread at a time, without the
//   manager's lock held.
// - Label values that are empty are left out, as Prometheus treats an
//   empty label as absent; meta label names (__meta_*) are Prometheus's.
// - Local() mechanisms (static, file) read only local state and are
//   refreshed synchronously when a configuration is applied.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "scrape/config.h"

namespace gpumon::scrape::discovery {

class Discoverer {
 public:
  virtual ~Discoverer() = default;
  // "dns_sd_configs[0]" etc., for log messages.
  virtual std::string Name() const = 0;
  virtual int64_t RefreshIntervalMs() const = 0;
  virtual bool Local() const { return false; }
  virtual Result<std::vector<TargetGroup>> Refresh() = 0;
};

// Settings that are not part of the configuration file.
struct Options {
  // "host:port" of the DNS server to ask instead of resolv.conf's (tests).
  std::string dns_server;
  // How often kubernetes_sd re-lists (it has no refresh_interval field).
  int64_t kubernetes_relist_ms = 15 * 1000;
};

// One discoverer per SD config entry of the job, in configuration order.
std::vector<std::unique_ptr<Discoverer>> NewDiscoverers(const ScrapeConfig& config,
                                                        const Options& options);

}  // namespace gpumon::scrape::discovery
