// The discovery mechanisms against real protocol peers on loopback: a DNS
// server answering RFC 1035 messages, and HTTP servers answering the JSON
// documents of http_sd, Consul's and Kubernetes' APIs as documented.
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <thread>

#include "dns_test_server.h"
#include "scrape/discovery/consul.h"
#include "scrape/discovery/dns.h"
#include "scrape/discovery/http.h"
#include "scrape/discovery/kubernetes.h"

namespace gpumon::scrape::discovery {
namespace {

// An httplib server on a free loopback port, run on its own thread.
class TestHttpServer {
 public:
  TestHttpServer() {
    port_ = server.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server.listen_after_bind(); });
    while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ~TestHttpServer() {
    server.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string host_port() const { return "127.0.0.1:" + std::to_string(port_); }
  httplib::Server server;

 private:
  int port_ = 0;
  std::thread thread_;
};

// The target of each group, with the group's labels, sorted by address.
struct Found {
  std::string address;
  Labels labels;
};
std::vector<Found> Flatten(const std::vector<TargetGroup>& groups) {
  std::vector<Found> out;
  for (const auto& g : groups) {
    for (const auto& t : g.targets) out.push_back({t, g.labels});
  }
  std::sort(out.begin(), out.end(),
            [](const Found& a, const Found& b) { return a.address < b.address; });
  return out;
}

// --- DNS -------------------------------------------------------------------

DnsSdConfig Dns(std::vector<std::string> names, std::string type, int port = 0) {
  DnsSdConfig c;
  c.names = std::move(names);
  c.type = std::move(type);
  c.port = port;
  return c;
}

TEST(DnsDiscoveryTest, SrvRecordsGiveTargetAndPort) {
  testing::DnsTestServer dns;
  dns.AddSRV("_node._tcp.gpu.test", 10, 5, 9100, "node1.gpu.test");
  dns.AddSRV("_node._tcp.gpu.test", 10, 5, 9101, "node2.gpu.test");
  DnsDiscoverer d(Dns({"_node._tcp.gpu.test"}, "SRV"), "dns", dns.address());
  auto groups = d.Refresh();
  ASSERT_TRUE(groups.ok()) << groups.status().message();
  auto found = Flatten(*groups);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].address, "node1.gpu.test:9100");
  EXPECT_EQ(found[0].labels.Get("__meta_dns_name"), "_node._tcp.gpu.test");
  EXPECT_EQ(found[0].labels.Get("__meta_dns_srv_record_target"), "node1.gpu.test.");
  EXPECT_EQ(found[0].labels.Get("__meta_dns_srv_record_port"), "9100");
  EXPECT_FALSE(found[0].labels.Has("__meta_dns_mx_record_target"));
  EXPECT_EQ(found[1].address, "node2.gpu.test:9101");
}

TEST(DnsDiscoveryTest, AddressRecordsUseTheConfiguredPort) {
  testing::DnsTestServer dns;
  dns.AddA("nodes.gpu.test", "10.0.0.1");
  dns.AddA("nodes.gpu.test", "10.0.0.2");
  dns.AddAAAA("nodes.gpu.test", "fd00::1");
  DnsDiscoverer a(Dns({"nodes.gpu.test"}, "A", 9400), "dns", dns.address());
  auto groups = a.Refresh();
  ASSERT_TRUE(groups.ok()) << groups.status().message();
  auto found = Flatten(*groups);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].address, "10.0.0.1:9400");
  EXPECT_EQ(found[1].address, "10.0.0.2:9400");
  EXPECT_EQ(found[0].labels.Get("__meta_dns_name"), "nodes.gpu.test");
  EXPECT_FALSE(found[0].labels.Has("__meta_dns_srv_record_target"));

  DnsDiscoverer aaaa(Dns({"nodes.gpu.test"}, "AAAA", 9400), "dns", dns.address());
  groups = aaaa.Refresh();
  ASSERT_TRUE(groups.ok()) << groups.status().message();
  found = Flatten(*groups);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].address, "[fd00::1]:9400");
}

TEST(DnsDiscoveryTest, MxAndNsRecords) {
  testing::DnsTestServer dns;
  dns.AddMX("mail.gpu.test", 10, "mx1.gpu.test");
  dns.AddNS("zone.gpu.test", "ns1.gpu.test");
  DnsDiscoverer mx(Dns({"mail.gpu.test"}, "MX", 25), "dns", dns.address());
  auto groups = mx.Refresh();
  ASSERT_TRUE(groups.ok()) << groups.status().message();
  auto found = Flatten(*groups);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].address, "mx1.gpu.test:25");
  EXPECT_EQ(found[0].labels.Get("__meta_dns_mx_record_target"), "mx1.gpu.test.");

  DnsDiscoverer ns(Dns({"zone.gpu.test"}, "NS", 53), "dns", dns.address());
  groups = ns.Refresh();
  ASSERT_TRUE(groups.ok()) << groups.status().message();
  found = Flatten(*groups);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].address, "ns1.gpu.test:53");
  EXPECT_EQ(found[0].labels.Get("__meta_dns_ns_record_target"), "ns1.gpu.test.");
}

TEST(DnsDiscoveryTest, MissingNameIsEmptyAndFailingNameKeepsItsTargets) {
  testing::DnsTestServer dns;
  dns.AddA("a.gpu.test", "10.0.0.1");
  dns.AddA("b.gpu.test", "10.0.0.2");
  DnsDiscoverer d(Dns({"a.gpu.test", "b.gpu.test", "nothing.gpu.test"}, "A", 80), "dns",
                  dns.address());
  auto groups = d.Refresh();
  ASSERT_TRUE(groups.ok()) << groups.status().message();
  EXPECT_EQ(Flatten(*groups).size(), 2u);

  // b's server fails and a's record changes: b keeps what it had.
  dns.SetFailing("b.gpu.test", true);
  dns.Clear("a.gpu.test");
  dns.AddA("a.gpu.test", "10.0.0.9");
  groups = d.Refresh();
  ASSERT_TRUE(groups.ok()) << groups.status().message();
  auto found = Flatten(*groups);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].address, "10.0.0.2:80");
  EXPECT_EQ(found[1].address, "10.0.0.9:80");

  // Every name failing fails the refresh.
  DnsDiscoverer only_b(Dns({"b.gpu.test"}, "A", 80), "dns", dns.address());
  EXPECT_FALSE(only_b.Refresh().ok());
}

TEST(DnsDiscoveryTest, CnameInAnswerIsSkipped) {
  testing::DnsTestServer dns;
  dns.AddCNAME("alias.gpu.test", "real.gpu.test");
  dns.AddA("alias.gpu.test", "10.1.1.1");
  DnsDiscoverer d(Dns({"alias.gpu.test"}, "A", 80), "dns", dns.address());
  auto groups = d.Refresh();
  ASSERT_TRUE(groups.ok()) << groups.status().message();
  auto found = Flatten(*groups);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].address, "10.1.1.1:80");
}

// --- HTTP SD ---------------------------------------------------------------

TEST(HttpDiscoveryTest, TargetGroupsGetMetaUrl) {
  TestHttpServer srv;
  std::atomic<int> status{200};
  std::string type = "application/json; charset=utf-8";
  srv.server.Get("/sd", [&](const httplib::Request&, httplib::Response& res) {
    res.status = status;
    res.set_content(R"([{"targets": ["a:1", "b:1"], "labels": {"env": "prod", "empty": ""}},
                        {"targets": ["c:2"]}])",
                    type);
  });
  HttpSdConfig c;
  c.url = srv.url() + "/sd";
  HttpDiscoverer d(c, "http");
  auto groups = d.Refresh();
  ASSERT_TRUE(groups.ok()) << groups.status().message();
  ASSERT_EQ(groups->size(), 2u);
  EXPECT_EQ((*groups)[0].targets, (std::vector<std::string>{"a:1", "b:1"}));
  EXPECT_EQ((*groups)[0].labels.Get("env"), "prod");
  EXPECT_FALSE((*groups)[0].labels.Has("empty"));
  EXPECT_EQ((*groups)[0].labels.Get("__meta_url"), c.url);
  EXPECT_EQ((*groups)[1].labels.Get("__meta_url"), c.url);

  status = 500;
  auto failed = d.Refresh();
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().message(), "server returned HTTP status 500 Internal Server Error");
}

TEST(HttpDiscoveryTest, RejectsWrongContentTypeAndBadDocuments) {
  TestHttpServer srv;
  std::string body = "[]", type = "text/plain";
  srv.server.Get(
      "/sd", [&](const httplib::Request&, httplib::Response& res) { res.set_content(body, type); });
  HttpSdConfig c;
  c.url = srv.url() + "/sd";
  HttpDiscoverer d(c, "http");
  auto r = d.Refresh();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "unsupported content type \"text/plain\"");
  type = "application/json";
  for (const char* bad : {"[null]", "{}", "[{\"labels\": {\"1x\": \"y\"}}]", "[{\"targets\": [1]}]",
                          "[{\"targets\": "}) {
    body = bad;
    EXPECT_FALSE(d.Refresh().ok()) << bad;
  }
  body = "[]";
  auto empty = d.Refresh();
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

// --- Consul ----------------------------------------------------------------

// Responses shaped as Consul's API documentation shows them.
void ServeConsul(httplib::Server& s, std::vector<std::string>* queries,
                 std::vector<std::string>* tokens) {
  s.Get("/v1/agent/self", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"Config": {"Datacenter": "dc1", "NodeName": "agent"}})",
                    "application/json");
  });
  s.Get("/v1/catalog/services", [=](const httplib::Request& req, httplib::Response& res) {
    queries->push_back("services?" + req.params.begin()->first);
    tokens->push_back(req.get_header_value("Authorization"));
    res.set_content(R"({"consul": [], "web": ["prod", "v2"], "db": ["prod"]})", "application/json");
  });
  s.Get(R"(/v1/health/service/(\w+))", [=](const httplib::Request& req, httplib::Response& res) {
    std::string q = req.matches[1].str() + ":";
    for (const auto& [k, v] : req.params) q += k + "=" + v + ";";
    queries->push_back(q);
    if (req.matches[1] == "db") {
      res.status = 500;
      return;
    }
    res.set_content(R"([
  {
    "Node": {"ID": "40e4a748", "Node": "foobar", "Address": "10.1.10.12", "Datacenter": "dc1",
             "TaggedAddresses": {"lan": "10.1.10.12", "wan": "10.1.10.12"},
             "Meta": {"instance-type": "t2.medium"}},
    "Service": {"ID": "web1", "Service": "web", "Tags": ["prod", "v2"], "Address": "",
                "Meta": {"version": "1.0"}, "Port": 8000, "Namespace": "", "Partition": ""},
    "Checks": [{"Node": "foobar", "CheckID": "serfHealth", "Status": "passing"},
               {"Node": "foobar", "CheckID": "service:web1", "Status": "warning"}]
  },
  {
    "Node": {"ID": "50e4a748", "Node": "baz", "Address": "10.1.10.13", "Datacenter": "dc1",
             "TaggedAddresses": null, "Meta": null},
    "Service": {"ID": "web2", "Service": "web", "Tags": ["prod", "v2"],
                "Address": "192.168.0.5", "Meta": null, "Port": 8001},
    "Checks": [{"Node": "baz", "CheckID": "serfHealth", "Status": "critical"}]
  }
])",
                    "application/json");
  });
}

TEST(ConsulDiscoveryTest, ServicesAndInstancesWithPrometheusLabels) {
  TestHttpServer srv;
  std::vector<std::string> queries, tokens;
  ServeConsul(srv.server, &queries, &tokens);
  ConsulSdConfig c;
  c.server = srv.host_port();
  c.tags = {"v2"};
  c.token = "secret";
  ConsulDiscoverer d(c, "consul");
  auto groups = d.Refresh();
  ASSERT_TRUE(groups.ok()) << groups.status().message();
  auto found = Flatten(*groups);
  ASSERT_EQ(found.size(), 2u);  // only web has tag v2
  const Labels& a = found[0].labels;
  EXPECT_EQ(found[0].address, "10.1.10.12:8000");  // node address: service has none
  EXPECT_EQ(a.Get("__meta_consul_service"), "web");
  EXPECT_EQ(a.Get("__meta_consul_dc"), "dc1");
  EXPECT_EQ(a.Get("__meta_consul_node"), "foobar");
  EXPECT_EQ(a.Get("__meta_consul_address"), "10.1.10.12");
  EXPECT_EQ(a.Get("__meta_consul_service_id"), "web1");
  EXPECT_EQ(a.Get("__meta_consul_service_port"), "8000");
  EXPECT_EQ(a.Get("__meta_consul_tags"), ",prod,v2,");
  EXPECT_EQ(a.Get("__meta_consul_health"), "warning");
  EXPECT_EQ(a.Get("__meta_consul_metadata_instance_type"), "t2.medium");
  EXPECT_EQ(a.Get("__meta_consul_service_metadata_version"), "1.0");
  EXPECT_EQ(a.Get("__meta_consul_tagged_address_wan"), "10.1.10.12");
  EXPECT_FALSE(a.Has("__meta_consul_service_address"));
  EXPECT_FALSE(a.Has("__meta_consul_namespace"));
  EXPECT_EQ(found[1].address, "192.168.0.5:8001");
  EXPECT_EQ(found[1].labels.Get("__meta_consul_service_address"), "192.168.0.5");
  EXPECT_EQ(found[1].labels.Get("__meta_consul_health"), "critical");
  // The instance query carries dc, stale and the tag filter.
  ASSERT_FALSE(queries.empty());
  EXPECT_EQ(queries.back(), "web:dc=dc1;stale=;tag=v2;");
  EXPECT_EQ(tokens.back(), "Bearer secret");
}

TEST(ConsulDiscoveryTest, FailingServiceKeepsItsInstances) {
  TestHttpServer srv;
  std::vector<std::string> queries, tokens;
  ServeConsul(srv.server, &queries, &tokens);
  ConsulSdConfig c;
  c.server = srv.host_port();
  c.datacenter = "east";
  c.services = {"web", "db"};  // fixed list: no catalog query
  ConsulDiscoverer d(c, "consul");
  auto groups = d.Refresh();
  ASSERT_TRUE(groups.ok()) << groups.status().message();
  EXPECT_EQ(Flatten(*groups).size(), 2u);  // db fails and had nothing
  EXPECT_EQ(Flatten(*groups)[0].labels.Get("__meta_consul_dc"), "east");
  for (const auto& q : queries) EXPECT_FALSE(q.starts_with("services")) << q;

  srv.server.stop();  // everything fails now: the refresh keeps web's instances
  auto again = d.Refresh();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(Flatten(*again).size(), 2u);
}

// --- Kubernetes ------------------------------------------------------------

constexpr char kPodList[] = R"({
  "kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "1"},
  "items": [
    {
      "metadata": {"name": "dcgm-abc", "namespace": "gpu", "uid": "u-1",
                   "labels": {"app.kubernetes.io/name": "dcgm"},
                   "annotations": {"prometheus.io/scrape": "true"},
                   "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet",
                                        "name": "dcgm", "uid": "d-1", "controller": true}]},
      "spec": {"nodeName": "n1",
               "containers": [{"name": "exporter", "image": "dcgm:3",
                               "ports": [{"name": "metrics", "containerPort": 9400,
                                          "protocol": "TCP"},
                                         {"containerPort": 9401, "protocol": "UDP"}]},
                              {"name": "sidecar", "image": "busybox"}],
               "initContainers": [{"name": "init", "image": "busybox"}]},
      "status": {"phase": "Running", "hostIP": "10.0.0.1", "podIP": "172.16.0.5",
                 "conditions": [{"type": "Ready", "status": "True"}],
                 "containerStatuses": [{"name": "exporter", "containerID": "containerd://e1"}]}
    },
    {
      "metadata": {"name": "pending", "namespace": "gpu", "uid": "u-2"},
      "spec": {"containers": [{"name": "c", "image": "x"}]},
      "status": {"phase": "Pending"}
    }
  ]
})";

constexpr char kNodeList[] = R"({
  "kind": "NodeList", "apiVersion": "v1", "metadata": {},
  "items": [
    {
      "metadata": {"name": "gpu-node-1", "labels": {"nvidia.com/gpu.present": "true"},
                   "annotations": {}},
      "spec": {"providerID": "aws:///us-east-1a/i-1"},
      "status": {"conditions": [{"type": "Ready", "status": "True"},
                                {"type": "MemoryPressure", "status": "False"}],
                 "addresses": [{"type": "Hostname", "address": "gpu-node-1"},
                               {"type": "ExternalIP", "address": "3.3.3.3"},
                               {"type": "InternalIP", "address": "10.0.0.7"}],
                 "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}}}
    },
    {
      "metadata": {"name": "bare"},
      "status": {"addresses": [{"type": "Hostname", "address": "bare.local"}],
                 "daemonEndpoints": {"kubeletEndpoint": {"Port": 10255}}}
    }
  ]
})";

TEST(KubernetesDiscoveryTest, PodRoleOneTargetPerPortOrContainer) {
  TestHttpServer srv;
  std::string path, auth, selector;
  srv.server.Get(R"(/api/v1/.*)", [&](const httplib::Request& req, httplib::Response& res) {
    path = req.path;
    auth = req.get_header_value("Authorization");
    selector = req.get_param_value("labelSelector");
    res.set_content(kPodList, "application/json");
  });
  KubernetesSdConfig c;
  c.role = "pod";
  c.api_server = srv.url();
  c.namespaces = {"gpu"};
  c.selectors = {{"pod", "app=dcgm", ""}};
  c.http.authorization_type = "Bearer";
  c.http.authorization_credentials = "tok";
  KubernetesDiscoverer d(c, "k8s", 1000);
  auto groups = d.Refresh();
  ASSERT_TRUE(groups.ok()) << groups.status().message();
  EXPECT_EQ(path, "/api/v1/namespaces/gpu/pods");
  EXPECT_EQ(auth, "Bearer tok");
  EXPECT_EQ(selector, "app=dcgm");
  auto found = Flatten(*groups);
  // exporter: 2 ports; sidecar and init: no ports; the pending pod has no IP.
  ASSERT_EQ(found.size(), 4u);
  std::map<std::string, Labels> by_key;
  for (const auto& f : found) {
    by_key[f.address + "/" + std::string(f.labels.Get("__meta_kubernetes_pod_container_name"))] =
        f.labels;
  }
  ASSERT_TRUE(by_key.count("172.16.0.5:9400/exporter"));
  ASSERT_TRUE(by_key.count("172.16.0.5:9401/exporter"));
  ASSERT_TRUE(by_key.count("172.16.0.5/sidecar"));
  ASSERT_TRUE(by_key.count("172.16.0.5/init"));
  const Labels& e = by_key["172.16.0.5:9400/exporter"];
  EXPECT_EQ(e.Get("__meta_kubernetes_namespace"), "gpu");
  EXPECT_EQ(e.Get("__meta_kubernetes_pod_name"), "dcgm-abc");
  EXPECT_EQ(e.Get("__meta_kubernetes_pod_ip"), "172.16.0.5");
  EXPECT_EQ(e.Get("__meta_kubernetes_pod_label_app_kubernetes_io_name"), "dcgm");
  EXPECT_EQ(e.Get("__meta_kubernetes_pod_labelpresent_app_kubernetes_io_name"), "true");
  EXPECT_EQ(e.Get("__meta_kubernetes_pod_annotation_prometheus_io_scrape"), "true");
  EXPECT_EQ(e.Get("__meta_kubernetes_pod_annotationpresent_prometheus_io_scrape"), "true");
  EXPECT_EQ(e.Get("__meta_kubernetes_pod_container_port_name"), "metrics");
  EXPECT_EQ(e.Get("__meta_kubernetes_pod_container_port_number"), "9400");
  EXPECT_EQ(e.Get("__meta_kubernetes_pod_container_port_protocol"), "TCP");
  EXPECT_EQ(e.Get("__meta_kubernetes_pod_container_image"), "dcgm:3");
  EXPECT_EQ(e.Get("__meta_kubernetes_pod_container_id"), "containerd://e1");
  EXPECT_EQ(e.Get("__meta_kubernetes_pod_container_init"), "false");
  EXPECT_EQ(e.Get("__meta_kubernetes_pod_ready"), "true");
  EXPECT_EQ(e.Get("__meta_kubernetes_pod_phase"), "Running");
  EXPECT_EQ(e.Get("__meta_kubernetes_pod_node_name"), "n1");
  EXPECT_EQ(e.Get("__meta_kubernetes_pod_host_ip"), "10.0.0.1");
  EXPECT_EQ(e.Get("__meta_kubernetes_pod_uid"), "u-1");
  EXPECT_EQ(e.Get("__meta_kubernetes_pod_controller_kind"), "DaemonSet");
  EXPECT_EQ(e.Get("__meta_kubernetes_pod_controller_name"), "dcgm");
  EXPECT_FALSE(by_key["172.16.0.5:9401/exporter"].Has("__meta_kubernetes_pod_container_port_name"));
  EXPECT_EQ(by_key["172.16.0.5/init"].Get("__meta_kubernetes_pod_container_init"), "true");
  EXPECT_FALSE(by_key["172.16.0.5/sidecar"].Has("__meta_kubernetes_pod_container_port_number"));
}

TEST(KubernetesDiscoveryTest, NodeRoleUsesPreferredAddressAndKubeletPort) {
  TestHttpServer srv;
  std::string path;
  srv.server.Get("/api/v1/nodes", [&](const httplib::Request& req, httplib::Response& res) {
    path = req.path;
    res.set_content(kNodeList, "application/json");
  });
  KubernetesSdConfig c;
  c.role = "node";
  c.api_server = srv.url() + "/";
  KubernetesDiscoverer d(c, "k8s", 1000);
  auto groups = d.Refresh();
  ASSERT_TRUE(groups.ok()) << groups.status().message();
  auto found = Flatten(*groups);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].address, "10.0.0.7:10250");  // InternalIP before ExternalIP, Hostname
  const Labels& n = found[0].labels;
  EXPECT_EQ(n.Get("instance"), "gpu-node-1");
  EXPECT_EQ(n.Get("__meta_kubernetes_node_name"), "gpu-node-1");
  EXPECT_EQ(n.Get("__meta_kubernetes_node_provider_id"), "aws:///us-east-1a/i-1");
  EXPECT_EQ(n.Get("__meta_kubernetes_node_label_nvidia_com_gpu_present"), "true");
  EXPECT_EQ(n.Get("__meta_kubernetes_node_labelpresent_nvidia_com_gpu_present"), "true");
  EXPECT_EQ(n.Get("__meta_kubernetes_node_condition_ready"), "true");
  EXPECT_EQ(n.Get("__meta_kubernetes_node_condition_memorypressure"), "false");
  EXPECT_EQ(n.Get("__meta_kubernetes_node_address_InternalIP"), "10.0.0.7");
  EXPECT_EQ(n.Get("__meta_kubernetes_node_address_ExternalIP"), "3.3.3.3");
  EXPECT_EQ(n.Get("__meta_kubernetes_node_address_Hostname"), "gpu-node-1");
  EXPECT_EQ(found[1].address, "bare.local:10255");
}

TEST(KubernetesDiscoveryTest, ApiErrorFailsTheRefresh) {
  TestHttpServer srv;
  srv.server.Get("/api/v1/pods", [](const httplib::Request&, httplib::Response& res) {
    res.status = 403;
    res.set_content(R"({"kind": "Status", "reason": "Forbidden"})", "application/json");
  });
  KubernetesSdConfig c;
  c.role = "pod";
  c.api_server = srv.url();
  KubernetesDiscoverer d(c, "k8s", 1000);
  auto r = d.Refresh();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "server returned HTTP status 403 Forbidden");
}

}  // namespace
}  // namespace gpumon::scrape::discovery
