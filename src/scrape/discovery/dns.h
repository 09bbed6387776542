// dns_sd_configs[i] as a discoverer: SRV, A, AAAA, MX or NS lookups of the
// configured names through glibc's resolver (libresolv).
//
// Contract (Prometheus's DNS SD):
// - Each name is looked up with the resolver's search rules (resolv.conf
//   search domains and ndots, as res_nsearch applies them); a truncated UDP
//   answer is retried over TCP by the resolver.
// - SRV: one target per record at <target>:<port>, with
//   __meta_dns_srv_record_target (as answered, with its trailing dot) and
//   __meta_dns_srv_record_port. A/AAAA: <address>:<port>. MX and NS:
//   <host>:<port> with __meta_dns_mx_record_target /
//   __meta_dns_ns_record_target. Every target has __meta_dns_name (the
//   name as configured). CNAME records in the answer are skipped.
// - A name that does not exist or has no records of the type gives no
//   targets; a name whose lookup fails (server failure, no answer) keeps
//   its previous targets and the failure is logged. Refresh fails only
//   when every name failed.
// - `server` ("host:port", numeric) replaces resolv.conf's nameservers;
//   tests point it at a DNS server on loopback.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "scrape/discovery/discoverer.h"

namespace gpumon::scrape::discovery {

class DnsDiscoverer : public Discoverer {
 public:
  DnsDiscoverer(DnsSdConfig config, std::string name, std::string server = "")
      : config_(std::move(config)), name_(std::move(name)), server_(std::move(server)) {}
  std::string Name() const override { return name_; }
  int64_t RefreshIntervalMs() const override { return config_.refresh_interval_ms; }
  Result<std::vector<TargetGroup>> Refresh() override;

 private:
  // The groups (one per record) for one name; an empty list when the name
  // has no records of the type.
  Result<std::vector<TargetGroup>> Lookup(const std::string& name);

  DnsSdConfig config_;
  std::string name_;
  std::string server_;
  std::map<std::string, std::vector<TargetGroup>> by_name_;
};

}  // namespace gpumon::scrape::discovery
