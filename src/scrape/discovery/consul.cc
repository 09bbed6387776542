#include "scrape/discovery/consul.h"

#include <algorithm>
#include <set>

#include "common/log.h"
#include "scrape/discovery/json_get.h"
#include "scrape/discovery/target_groups.h"

namespace gpumon::scrape::discovery {
namespace {

constexpr int64_t kTimeoutMs = 30 * 1000;

std::string Str(const rapidjson::Value& obj, const char* key) {
  if (!obj.IsObject()) return "";
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd() || !it->value.IsString()) return "";
  return std::string(it->value.GetString(), it->value.GetStringLength());
}

const rapidjson::Value* Member(const rapidjson::Value& obj, const char* key) {
  if (!obj.IsObject()) return nullptr;
  auto it = obj.FindMember(key);
  return it == obj.MemberEnd() ? nullptr : &it->value;
}

// Adds prefix<sanitized key> = value for each string member of a map.
void MapLabels(const rapidjson::Value* map, const std::string& prefix, std::vector<Label>& out) {
  if (!map || !map->IsObject()) return;
  for (auto m = map->MemberBegin(); m != map->MemberEnd(); ++m) {
    if (!m->value.IsString()) continue;
    out.push_back({prefix + SanitizeLabelName(m->name.GetString()), m->value.GetString()});
  }
}

// Consul's aggregated status of a list of checks: maintenance over
// critical over warning over passing; no checks is passing.
std::string AggregatedStatus(const rapidjson::Value* checks) {
  bool warning = false, critical = false, maintenance = false;
  if (checks && checks->IsArray()) {
    for (const auto& c : checks->GetArray()) {
      const std::string id = Str(c, "CheckID");
      const std::string status = Str(c, "Status");
      if (id == "_node_maintenance" || id.starts_with("_service_maintenance:")) {
        maintenance = true;
      } else if (status == "critical") {
        critical = true;
      } else if (status == "warning") {
        warning = true;
      } else if (status != "passing") {
        return "";  // unknown status: Consul's client reports none either
      }
    }
  }
  if (maintenance) return "maintenance";
  if (critical) return "critical";
  if (warning) return "warning";
  return "passing";
}

}  // namespace

ConsulDiscoverer::ConsulDiscoverer(ConsulSdConfig config, std::string name)
    : config_(std::move(config)), name_(std::move(name)), datacenter_(config_.datacenter) {
  if (!config_.token.empty()) {
    config_.http.authorization_type = "Bearer";
    config_.http.authorization_credentials = config_.token;
    config_.http.authorization_credentials_file.clear();
  }
}

std::string ConsulDiscoverer::Url(const std::string& path,
                                  const std::vector<std::string>& query) const {
  std::string prefix = config_.path_prefix;
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  if (!prefix.empty() && prefix[0] != '/') prefix = "/" + prefix;
  std::string url = config_.scheme + "://" + config_.server + prefix + path;
  char sep = '?';
  for (const auto& q : query) {
    url += sep + q;
    sep = '&';
  }
  return url;
}

Result<std::vector<std::string>> ConsulDiscoverer::Services() {
  const bool fixed = !config_.services.empty() && config_.tags.empty() && config_.filter.empty();
  if (fixed) return config_.services;
  std::vector<std::string> query = {"dc=" + QueryEscape(datacenter_)};
  if (config_.allow_stale) query.push_back("stale");
  for (const auto& [k, v] : config_.node_meta)
    query.push_back("node-meta=" + QueryEscape(k + ":" + v));
  if (!config_.filter.empty()) query.push_back("filter=" + QueryEscape(config_.filter));
  if (!config_.namespace_.empty()) query.push_back("ns=" + QueryEscape(config_.namespace_));
  if (!config_.partition.empty()) query.push_back("partition=" + QueryEscape(config_.partition));
  rapidjson::Document doc;
  if (Status s = GetJson(Url("/v1/catalog/services", query), config_.http, kTimeoutMs, false, &doc);
      !s.ok()) {
    return s;
  }
  if (!doc.IsObject()) return Status::Error("consul: service list is not a JSON object");
  std::vector<std::string> out;
  for (auto m = doc.MemberBegin(); m != doc.MemberEnd(); ++m) {
    const std::string service = m->name.GetString();
    if (!config_.services.empty() && std::find(config_.services.begin(), config_.services.end(),
                                               service) == config_.services.end()) {
      continue;
    }
    std::set<std::string> tags;
    if (m->value.IsArray()) {
      for (const auto& t : m->value.GetArray()) {
        if (t.IsString()) tags.insert(t.GetString());
      }
    }
    if (!std::all_of(config_.tags.begin(), config_.tags.end(),
                     [&](const std::string& t) { return tags.count(t) > 0; })) {
      continue;
    }
    out.push_back(service);
  }
  return out;
}

Result<std::vector<TargetGroup>> ConsulDiscoverer::Instances(const std::string& service) {
  std::vector<std::string> query = {"dc=" + QueryEscape(datacenter_)};
  if (config_.allow_stale) query.push_back("stale");
  for (const auto& t : config_.tags) query.push_back("tag=" + QueryEscape(t));
  for (const auto& [k, v] : config_.node_meta)
    query.push_back("node-meta=" + QueryEscape(k + ":" + v));
  if (!config_.health_filter.empty()) {
    query.push_back("filter=" + QueryEscape(config_.health_filter));
  }
  if (!config_.namespace_.empty()) query.push_back("ns=" + QueryEscape(config_.namespace_));
  if (!config_.partition.empty()) query.push_back("partition=" + QueryEscape(config_.partition));
  rapidjson::Document doc;
  if (Status s = GetJson(Url("/v1/health/service/" + QueryEscape(service), query), config_.http,
                         kTimeoutMs, false, &doc);
      !s.ok()) {
    return s;
  }
  if (!doc.IsArray()) return Status::Error("consul: instances of " + service + " not a JSON list");
  std::vector<TargetGroup> out;
  for (const auto& entry : doc.GetArray()) {
    const rapidjson::Value* node = Member(entry, "Node");
    const rapidjson::Value* svc = Member(entry, "Service");
    if (!node || !svc) continue;
    const std::string node_addr = Str(*node, "Address");
    const std::string svc_addr = Str(*svc, "Address");
    const rapidjson::Value* port_v = Member(*svc, "Port");
    const std::string port = port_v && port_v->IsInt() ? std::to_string(port_v->GetInt()) : "0";
    std::string tags = config_.tag_separator;
    if (const rapidjson::Value* t = Member(*svc, "Tags"); t && t->IsArray()) {
      bool first = true;
      for (const auto& tag : t->GetArray()) {
        if (!tag.IsString()) continue;
        if (!first) tags += config_.tag_separator;
        tags += tag.GetString();
        first = false;
      }
    }
    tags += config_.tag_separator;
    std::vector<Label> labels = {
        {"__meta_consul_service", service},
        {"__meta_consul_dc", datacenter_},
        {"__meta_consul_address", node_addr},
        {"__meta_consul_node", Str(*node, "Node")},
        {"__meta_consul_namespace", Str(*svc, "Namespace")},
        {"__meta_consul_partition", Str(*svc, "Partition")},
        {"__meta_consul_tags", tags},
        {"__meta_consul_service_address", svc_addr},
        {"__meta_consul_service_port", port},
        {"__meta_consul_service_id", Str(*svc, "ID")},
        {"__meta_consul_health", AggregatedStatus(Member(entry, "Checks"))},
    };
    MapLabels(Member(*node, "Meta"), "__meta_consul_metadata_", labels);
    MapLabels(Member(*svc, "Meta"), "__meta_consul_service_metadata_", labels);
    MapLabels(Member(*node, "TaggedAddresses"), "__meta_consul_tagged_address_", labels);
    out.push_back(
        SingleTarget(JoinHostPort(svc_addr.empty() ? node_addr : svc_addr, port), labels, service));
  }
  return out;
}

Result<std::vector<TargetGroup>> ConsulDiscoverer::Refresh() {
  if (datacenter_.empty()) {
    rapidjson::Document self;
    if (Status s = GetJson(Url("/v1/agent/self", {}), config_.http, kTimeoutMs, false, &self);
        !s.ok()) {
      return Status::Error("error retrieving datacenter name: " + s.message());
    }
    const rapidjson::Value* cfg = Member(self, "Config");
    datacenter_ = cfg ? Str(*cfg, "Datacenter") : "";
    if (datacenter_.empty()) {
      return Status::Error("error retrieving datacenter name: invalid value for Config.Datacenter");
    }
  }
  auto services = Services();
  if (!services.ok())
    return Status::Error("error refreshing service list: " + services.status().message());
  std::map<std::string, std::vector<TargetGroup>> next;
  for (const auto& service : *services) {
    auto groups = Instances(service);
    if (!groups.ok()) {
      LogWarn(name_ + ": error refreshing service \"" + service +
              "\": " + groups.status().message());
      auto old = by_service_.find(service);
      if (old != by_service_.end()) next[service] = std::move(old->second);
      continue;
    }
    next[service] = std::move(*groups);
  }
  by_service_ = std::move(next);
  std::vector<TargetGroup> out;
  for (const auto& [service, groups] : by_service_)
    out.insert(out.end(), groups.begin(), groups.end());
  return out;
}

}  // namespace gpumon::scrape::discovery
