#include "scrape/discovery/dns.h"

#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <netdb.h>
#include <netinet/in.h>
#include <resolv.h>

#include <cstdlib>
#include <cstring>

#include "common/log.h"
#include "scrape/discovery/target_groups.h"

namespace gpumon::scrape::discovery {
namespace {

int QueryType(const std::string& type) {
  if (type == "A") return ns_t_a;
  if (type == "AAAA") return ns_t_aaaa;
  if (type == "MX") return ns_t_mx;
  if (type == "NS") return ns_t_ns;
  return ns_t_srv;
}

// A resolver state using resolv.conf, or only `server` when given.
class Resolver {
 public:
  explicit Resolver(const std::string& server) {
    std::memset(&state_, 0, sizeof state_);
    ok_ = res_ninit(&state_) == 0;
    if (!ok_) return;
    state_.options |= RES_USE_EDNS0;
    if (server.empty()) return;
    const size_t colon = server.rfind(':');
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(std::atoi(server.c_str() + colon + 1)));
    if (colon == std::string::npos ||
        inet_pton(AF_INET, server.substr(0, colon).c_str(), &addr.sin_addr) != 1) {
      ok_ = false;
      return;
    }
    // IPv6 nameservers from resolv.conf live in _ext.nsaddrs and take
    // precedence over nsaddr_list: drop them so the override applies.
    for (auto*& v6 : state_._u._ext.nsaddrs) {
      std::free(v6);
      v6 = nullptr;
    }
    state_.nsaddr_list[0] = addr;
    state_.nscount = 1;
    state_.retry = 2;
  }
  ~Resolver() {
    if (ok_) res_nclose(&state_);
  }
  Resolver(const Resolver&) = delete;
  Resolver& operator=(const Resolver&) = delete;
  bool ok() const { return ok_; }
  res_state get() { return &state_; }

 private:
  struct __res_state state_;
  bool ok_ = false;
};

// The uncompressed domain name at `p` inside the message, without its
// trailing dot ("" for the root).
Result<std::string> NameAt(const ns_msg& msg, const unsigned char* p) {
  char buf[NS_MAXDNAME];
  if (ns_name_uncompress(ns_msg_base(msg), ns_msg_end(msg), p, buf, sizeof buf) < 0) {
    return Status::Error("malformed name in DNS answer");
  }
  std::string s(buf);
  if (s == ".") s.clear();
  return s;
}

}  // namespace

Result<std::vector<TargetGroup>> DnsDiscoverer::Lookup(const std::string& name) {
  Resolver resolver(server_);
  if (!resolver.ok()) return Status::Error("could not load resolver configuration");
  std::vector<unsigned char> answer(65536);
  const int type = QueryType(config_.type);
  const int n = res_nsearch(resolver.get(), name.c_str(), ns_c_in, type, answer.data(),
                            static_cast<int>(answer.size()));
  if (n < 0) {
    const int err = resolver.get()->res_h_errno;
    // The name does not exist or has no such records: no targets.
    if (err == HOST_NOT_FOUND || err == NO_DATA) return std::vector<TargetGroup>();
    return Status::Error("could not resolve \"" + name + "\": " + hstrerror(err));
  }
  ns_msg msg;
  if (ns_initparse(answer.data(), n, &msg) < 0) {
    return Status::Error("could not resolve \"" + name + "\": malformed DNS answer");
  }
  const std::string port = std::to_string(config_.port);
  std::vector<TargetGroup> out;
  for (int i = 0; i < ns_msg_count(msg, ns_s_an); ++i) {
    ns_rr rr;
    if (ns_parserr(&msg, ns_s_an, i, &rr) < 0) {
      return Status::Error("could not resolve \"" + name + "\": malformed DNS record");
    }
    const unsigned char* rd = ns_rr_rdata(rr);
    const int len = ns_rr_rdlen(rr);
    std::vector<Label> labels = {{"__meta_dns_name", name}};
    std::string address;
    switch (ns_rr_type(rr)) {
      case ns_t_srv: {
        if (len < 7) return Status::Error("malformed SRV record for \"" + name + "\"");
        const int srv_port = (rd[4] << 8) | rd[5];
        auto target = NameAt(msg, rd + 6);
        if (!target.ok()) return target.status();
        labels.push_back({"__meta_dns_srv_record_target", *target + "."});
        labels.push_back({"__meta_dns_srv_record_port", std::to_string(srv_port)});
        address = JoinHostPort(*target, std::to_string(srv_port));
        break;
      }
      case ns_t_mx:
      case ns_t_ns: {
        const bool mx = ns_rr_type(rr) == ns_t_mx;
        if (mx && len < 3) return Status::Error("malformed MX record for \"" + name + "\"");
        auto target = NameAt(msg, mx ? rd + 2 : rd);
        if (!target.ok()) return target.status();
        labels.push_back(
            {mx ? "__meta_dns_mx_record_target" : "__meta_dns_ns_record_target", *target + "."});
        address = JoinHostPort(*target, port);
        break;
      }
      case ns_t_a:
      case ns_t_aaaa: {
        const bool v4 = ns_rr_type(rr) == ns_t_a;
        if (len != (v4 ? 4 : 16)) return Status::Error("malformed address record");
        char buf[INET6_ADDRSTRLEN];
        inet_ntop(v4 ? AF_INET : AF_INET6, rd, buf, sizeof buf);
        address = JoinHostPort(buf, port);
        break;
      }
      case ns_t_cname:
        continue;
      default:
        LogWarn("dns discovery: invalid record of type " + std::to_string(ns_rr_type(rr)) +
                " for \"" + name + "\"");
        continue;
    }
    out.push_back(SingleTarget(address, std::move(labels), name));
  }
  return out;
}

Result<std::vector<TargetGroup>> DnsDiscoverer::Refresh() {
  size_t failed = 0;
  std::string last_error;
  for (const auto& name : config_.names) {
    auto groups = Lookup(name);
    if (!groups.ok()) {
      ++failed;
      last_error = groups.status().message();
      LogWarn(name_ + ": error refreshing DNS targets: " + last_error);
      continue;  // keep what the name gave before
    }
    by_name_[name] = std::move(*groups);
  }
  if (failed == config_.names.size()) return Status::Error(last_error);
  std::vector<TargetGroup> out;
  for (const auto& name : config_.names) {
    auto it = by_name_.find(name);
    if (it != by_name_.end()) out.insert(out.end(), it->second.begin(), it->second.end());
  }
  return out;
}

}  // namespace gpumon::scrape::discovery
