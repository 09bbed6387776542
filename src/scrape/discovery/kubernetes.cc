#include "scrape/discovery/kubernetes.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "scrape/discovery/json_get.h"
#include "scrape/discovery/target_groups.h"

namespace gpumon::scrape::discovery {
namespace {

constexpr int64_t kTimeoutMs = 30 * 1000;
constexpr char kServiceAccountDir[] = "/var/run/secrets/kubernetes.io/serviceaccount/";
constexpr char kPrefix[] = "__meta_kubernetes_";

using Value = rapidjson::Value;

const Value* Member(const Value* obj, const char* key) {
  if (!obj || !obj->IsObject()) return nullptr;
  auto it = obj->FindMember(key);
  return it == obj->MemberEnd() ? nullptr : &it->value;
}

std::string Str(const Value* obj, const char* key) {
  const Value* v = Member(obj, key);
  return v && v->IsString() ? std::string(v->GetString(), v->GetStringLength()) : "";
}

const Value* List(const Value* obj, const char* key) {
  const Value* v = Member(obj, key);
  return v && v->IsArray() ? v : nullptr;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// <prefix><role>_name and the label/annotation families of an object's
// metadata.
void ObjectMetaLabels(const Value* meta, const std::string& role, std::vector<Label>& out) {
  const std::string p = kPrefix + role;
  out.push_back({p + "_name", Str(meta, "name")});
  for (const char* kind : {"label", "annotation"}) {
    const Value* m = Member(meta, kind == std::string("label") ? "labels" : "annotations");
    if (!m || !m->IsObject()) continue;
    for (auto it = m->MemberBegin(); it != m->MemberEnd(); ++it) {
      const std::string ln = SanitizeLabelName(it->name.GetString());
      if (it->value.IsString()) out.push_back({p + "_" + kind + "_" + ln, it->value.GetString()});
      out.push_back({p + "_" + kind + "present_" + ln, "true"});
    }
  }
}

// Group labels of a pod, shared by its targets.
std::vector<Label> PodLabels(const Value& pod) {
  const Value* meta = Member(&pod, "metadata");
  const Value* spec = Member(&pod, "spec");
  const Value* status = Member(&pod, "status");
  std::vector<Label> ls;
  ls.push_back({std::string(kPrefix) + "namespace", Str(meta, "namespace")});
  ls.push_back({std::string(kPrefix) + "pod_ip", Str(status, "podIP")});
  std::string ready = "unknown";
  if (const Value* conds = List(status, "conditions")) {
    for (const auto& c : conds->GetArray()) {
      if (Str(&c, "type") == "Ready") ready = Lower(Str(&c, "status"));
    }
  }
  ls.push_back({std::string(kPrefix) + "pod_ready", ready});
  ls.push_back({std::string(kPrefix) + "pod_phase", Str(status, "phase")});
  ls.push_back({std::string(kPrefix) + "pod_node_name", Str(spec, "nodeName")});
  ls.push_back({std::string(kPrefix) + "pod_host_ip", Str(status, "hostIP")});
  ls.push_back({std::string(kPrefix) + "pod_uid", Str(meta, "uid")});
  ObjectMetaLabels(meta, "pod", ls);
  if (const Value* owners = List(meta, "ownerReferences")) {
    for (const auto& o : owners->GetArray()) {
      const Value* controller = Member(&o, "controller");
      if (!controller || !controller->IsBool() || !controller->GetBool()) continue;
      ls.push_back({std::string(kPrefix) + "pod_controller_kind", Str(&o, "kind")});
      ls.push_back({std::string(kPrefix) + "pod_controller_name", Str(&o, "name")});
      break;
    }
  }
  return ls;
}

std::string ContainerId(const Value* statuses, const std::string& name) {
  if (!statuses) return "";
  for (const auto& s : statuses->GetArray()) {
    if (Str(&s, "name") == name) return Str(&s, "containerID");
  }
  return "";
}

void PodTargets(const Value& pod, std::vector<TargetGroup>& out) {
  const Value* meta = Member(&pod, "metadata");
  const Value* status = Member(&pod, "status");
  const std::string ip = Str(status, "podIP");
  if (ip.empty()) return;
  const std::string source = "pod/" + Str(meta, "namespace") + "/" + Str(meta, "name");
  const std::vector<Label> common = PodLabels(pod);
  const std::string p = std::string(kPrefix) + "pod_container_";
  for (const bool init : {false, true}) {
    const Value* containers = List(Member(&pod, "spec"), init ? "initContainers" : "containers");
    if (!containers) continue;
    const Value* statuses = List(status, init ? "initContainerStatuses" : "containerStatuses");
    for (const auto& c : containers->GetArray()) {
      const std::string cname = Str(&c, "name");
      std::vector<Label> base = common;
      base.push_back({p + "name", cname});
      base.push_back({p + "id", ContainerId(statuses, cname)});
      base.push_back({p + "image", Str(&c, "image")});
      base.push_back({p + "init", init ? "true" : "false"});
      const Value* ports = List(&c, "ports");
      if (!ports || ports->Empty()) {
        out.push_back(SingleTarget(ip, base, source));
        continue;
      }
      for (const auto& port : ports->GetArray()) {
        const Value* num = Member(&port, "containerPort");
        const std::string number = num && num->IsInt() ? std::to_string(num->GetInt()) : "0";
        std::vector<Label> ls = base;
        ls.push_back({p + "port_number", number});
        ls.push_back({p + "port_name", Str(&port, "name")});
        ls.push_back({p + "port_protocol", Str(&port, "protocol")});
        out.push_back(SingleTarget(JoinHostPort(ip, number), std::move(ls), source));
      }
    }
  }
}

void NodeTarget(const Value& node, std::vector<TargetGroup>& out) {
  const Value* meta = Member(&node, "metadata");
  const Value* status = Member(&node, "status");
  std::vector<Label> ls;
  ls.push_back(
      {std::string(kPrefix) + "node_provider_id", Str(Member(&node, "spec"), "providerID")});
  if (const Value* conds = List(status, "conditions")) {
    for (const auto& c : conds->GetArray()) {
      ls.push_back(
          {std::string(kPrefix) + "node_condition_" + SanitizeLabelName(Lower(Str(&c, "type"))),
           Lower(Str(&c, "status"))});
    }
  }
  ObjectMetaLabels(meta, "node", ls);
  // The first address of each type, and the preferred one as the target.
  std::vector<std::pair<std::string, std::string>> first;
  if (const Value* addrs = List(status, "addresses")) {
    for (const auto& a : addrs->GetArray()) {
      const std::string type = Str(&a, "type");
      bool seen = false;
      for (const auto& f : first) seen = seen || f.first == type;
      if (!seen) first.push_back({type, Str(&a, "address")});
    }
  }
  std::string address;
  for (const char* type :
       {"InternalIP", "InternalDNS", "ExternalIP", "ExternalDNS", "LegacyHostIP", "Hostname"}) {
    for (const auto& f : first) {
      if (address.empty() && f.first == type) address = f.second;
    }
  }
  if (address.empty()) return;  // "host address unknown": Prometheus skips the node
  for (const auto& [type, a] : first) {
    ls.push_back({SanitizeLabelName(std::string(kPrefix) + "node_address_" + type), a});
  }
  const Value* port = Member(Member(Member(status, "daemonEndpoints"), "kubeletEndpoint"), "Port");
  const std::string name = Str(meta, "name");
  ls.push_back({"instance", name});
  out.push_back(SingleTarget(
      JoinHostPort(address, std::to_string(port && port->IsInt() ? port->GetInt() : 0)),
      std::move(ls), "node/" + name));
}

std::string ReadTrimmed(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  s.erase(s.find_last_not_of(" \t\r\n") + 1);
  return s;
}

}  // namespace

Result<std::vector<TargetGroup>> KubernetesDiscoverer::Refresh() {
  std::string base = config_.api_server;
  HttpClientConfig http = config_.http;
  if (base.empty()) {
    const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
    const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
    if (!host || !port || !*host || !*port) {
      return Status::Error(
          "unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and "
          "KUBERNETES_SERVICE_PORT must be defined");
    }
    base = "https://" + JoinHostPort(host, port);
    http.tls_ca_file = std::string(kServiceAccountDir) + "ca.crt";
    http.authorization_type = "Bearer";
    http.authorization_credentials_file = std::string(kServiceAccountDir) + "token";
  }
  while (!base.empty() && base.back() == '/') base.pop_back();
  std::vector<std::string> namespaces = config_.namespaces;
  if (config_.own_namespace) {
    const std::string own = ReadTrimmed(std::string(kServiceAccountDir) + "namespace");
    if (own.empty()) return Status::Error("cannot read the service account's namespace");
    namespaces.push_back(own);
  }
  std::string query;
  for (const auto& sel : config_.selectors) {
    if (sel.role != config_.role) continue;  // other roles select attached metadata
    if (!sel.label.empty())
      query += (query.empty() ? "?" : "&") + ("labelSelector=" + QueryEscape(sel.label));
    if (!sel.field.empty())
      query += (query.empty() ? "?" : "&") + ("fieldSelector=" + QueryEscape(sel.field));
  }
  const bool pods = config_.role == "pod";
  std::vector<std::string> urls;
  if (!pods || namespaces.empty()) {
    urls.push_back(base + (pods ? "/api/v1/pods" : "/api/v1/nodes") + query);
  } else {
    for (const auto& ns : namespaces) {
      urls.push_back(base + "/api/v1/namespaces/" + QueryEscape(ns) + "/pods" + query);
    }
  }
  std::vector<TargetGroup> out;
  for (const auto& url : urls) {
    rapidjson::Document doc;
    if (Status s = GetJson(url, http, kTimeoutMs, false, &doc); !s.ok()) return s;
    const Value* items = List(&doc, "items");
    if (!items) return Status::Error(url + ": expected a " + (pods ? "PodList" : "NodeList"));
    for (const auto& item : items->GetArray()) {
      if (pods) {
        PodTargets(item, out);
      } else {
        NodeTarget(item, out);
      }
    }
  }
  return out;
}

}  // namespace gpumon::scrape::discovery
