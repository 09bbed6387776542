// kubernetes_sd_configs[i] (roles pod and node) as a discoverer: the pods
// or nodes listed from the API server's REST API.
//
// Contract (Prometheus's Kubernetes SD, listing periodically instead of
// watching):
// - pod: GET /api/v1/pods, or /api/v1/namespaces/<ns>/pods per configured
//   namespace (own_namespace adds the service account's). One target per
//   container port at <podIP>:<port>, one per container without ports at
//   <podIP>; pods without an IP give none. Labels: __meta_kubernetes_
//   namespace, pod_name, pod_ip, pod_label_<k>, pod_labelpresent_<k>,
//   pod_annotation_<k>, pod_annotationpresent_<k>, pod_container_name,
//   _id, _image, _init, _port_name, _port_number, _port_protocol,
//   pod_ready, pod_phase, pod_node_name, pod_host_ip, pod_uid,
//   pod_controller_kind, pod_controller_name.
// - node: GET /api/v1/nodes; one target per node at its address chosen by
//   Prometheus's preference (InternalIP, InternalDNS, ExternalIP,
//   ExternalDNS, LegacyHostIP, Hostname) and the kubelet port, with
//   instance = node name and __meta_kubernetes_node_name, _provider_id,
//   _label_*, _labelpresent_*, _annotation_*, _annotationpresent_*,
//   _condition_<type>, _address_<type>.
// - selectors of the config's own role are passed as labelSelector /
//   fieldSelector. Without api_server the in-cluster service account is
//   used (KUBERNETES_SERVICE_HOST/PORT, its token and CA). A failing list
//   fails the refresh (previous targets stay).
#pragma once

#include <string>
#include <vector>

#include "scrape/discovery/discoverer.h"

namespace gpumon::scrape::discovery {

class KubernetesDiscoverer : public Discoverer {
 public:
  KubernetesDiscoverer(KubernetesSdConfig config, std::string name, int64_t relist_ms)
      : config_(std::move(config)), name_(std::move(name)), relist_ms_(relist_ms) {}
  std::string Name() const override { return name_; }
  int64_t RefreshIntervalMs() const override { return relist_ms_; }
  Result<std::vector<TargetGroup>> Refresh() override;

 private:
  KubernetesSdConfig config_;
  std::string name_;
  int64_t relist_ms_;
};

}  // namespace gpumon::scrape::discovery
