#include "scrape/discovery/discoverer.h"

#include "scrape/discovery/consul.h"
#include "scrape/discovery/dns.h"
#include "scrape/discovery/file.h"
#include "scrape/discovery/http.h"
#include "scrape/discovery/kubernetes.h"
#include "scrape/discovery/static.h"

namespace gpumon::scrape::discovery {
namespace {

std::string Nth(const char* field, size_t i) {
  return std::string(field) + "[" + std::to_string(i) + "]";
}

}  // namespace

std::vector<std::unique_ptr<Discoverer>> NewDiscoverers(const ScrapeConfig& config,
                                                        const Options& options) {
  std::vector<std::unique_ptr<Discoverer>> out;
  const std::string job = "job \"" + config.job_name + "\" ";
  if (!config.static_configs.empty()) {
    out.push_back(std::make_unique<StaticDiscoverer>(config.static_configs));
  }
  for (size_t i = 0; i < config.file_sd_configs.size(); ++i) {
    out.push_back(std::make_unique<FileDiscoverer>(config.file_sd_configs[i],
                                                   job + Nth("file_sd_configs", i)));
  }
  for (size_t i = 0; i < config.dns_sd_configs.size(); ++i) {
    out.push_back(std::make_unique<DnsDiscoverer>(
        config.dns_sd_configs[i], job + Nth("dns_sd_configs", i), options.dns_server));
  }
  for (size_t i = 0; i < config.http_sd_configs.size(); ++i) {
    out.push_back(std::make_unique<HttpDiscoverer>(config.http_sd_configs[i],
                                                   job + Nth("http_sd_configs", i)));
  }
  for (size_t i = 0; i < config.consul_sd_configs.size(); ++i) {
    out.push_back(std::make_unique<ConsulDiscoverer>(config.consul_sd_configs[i],
                                                     job + Nth("consul_sd_configs", i)));
  }
  for (size_t i = 0; i < config.kubernetes_sd_configs.size(); ++i) {
    out.push_back(std::make_unique<KubernetesDiscoverer>(config.kubernetes_sd_configs[i],
                                                         job + Nth("kubernetes_sd_configs", i),
                                                         options.kubernetes_relist_ms));
  }
  return out;
}

}  // namespace gpumon::scrape::discovery
