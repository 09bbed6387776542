// consul_sd_configs[i] as a discoverer: services and their instances from
// a Consul agent's HTTP API, polled every refresh_interval.
//
// Contract (Prometheus's Consul SD, with polling instead of blocking
// queries):
// - The datacenter is the configured one, else the agent's own
//   (GET /v1/agent/self, Config.Datacenter).
// - Services: the configured `services` when given without tags or filter,
//   else GET /v1/catalog/services (with node-meta and filter), keeping
//   those named in `services` (when given) that carry every tag in `tags`.
// - Instances: GET /v1/health/service/<name> (with dc, tag per tag,
//   node-meta, filter=health_filter, ns, partition, stale when
//   allow_stale), one target per instance at Service.Address (Node.Address
//   when empty):Service.Port, labelled __meta_consul_address, _dc,
//   _health (aggregated check status), _namespace, _node, _partition,
//   _service, _service_address, _service_id, _service_port, _tags
//   (separator-joined, with leading and trailing separator),
//   _metadata_<key>, _service_metadata_<key>, _tagged_address_<key>.
// - token is sent as "Authorization: Bearer <token>" (Consul accepts it
//   like X-Consul-Token). A failing service keeps its previous instances;
//   a failing service list or datacenter lookup fails the refresh.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "scrape/discovery/discoverer.h"

namespace gpumon::scrape::discovery {

class ConsulDiscoverer : public Discoverer {
 public:
  ConsulDiscoverer(ConsulSdConfig config, std::string name);
  std::string Name() const override { return name_; }
  int64_t RefreshIntervalMs() const override { return config_.refresh_interval_ms; }
  Result<std::vector<TargetGroup>> Refresh() override;

 private:
  std::string Url(const std::string& path, const std::vector<std::string>& query) const;
  Result<std::vector<std::string>> Services();
  Result<std::vector<TargetGroup>> Instances(const std::string& service);

  ConsulSdConfig config_;
  std::string name_;
  std::string datacenter_;
  std::map<std::string, std::vector<TargetGroup>> by_service_;
};

}  // namespace gpumon::scrape::discovery
