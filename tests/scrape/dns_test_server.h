// A minimal authoritative DNS server on UDP loopback for discovery tests:
// answers queries from a table of canned records, encoded per RFC 1035
// (and RFC 2782 for SRV, RFC 3596 for AAAA).
//
// Names not in the table get NXDOMAIN; a name with records of other types
// only gets an empty NOERROR answer; names marked failing get SERVFAIL.
// Records can be replaced while the server runs.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace gpumon::scrape::testing {

class DnsTestServer {
 public:
  static constexpr uint16_t kA = 1, kNS = 2, kCNAME = 5, kMX = 15, kAAAA = 28, kSRV = 33;

  DnsTestServer() {
    fd_ = ::socket(AF_INET, SOCK_DGRAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~DnsTestServer() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }

  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  int queries() const { return queries_; }

  void Clear(const std::string& name) {
    std::lock_guard<std::mutex> l(mu_);
    records_.erase(Lower(name));
  }
  void SetFailing(const std::string& name, bool failing) {
    std::lock_guard<std::mutex> l(mu_);
    if (failing) {
      failing_.insert(Lower(name));
    } else {
      failing_.erase(Lower(name));
    }
  }
  void AddA(const std::string& name, const std::string& ip) {
    std::vector<uint8_t> rd(4);
    inet_pton(AF_INET, ip.c_str(), rd.data());
    Add(name, kA, rd);
  }
  void AddAAAA(const std::string& name, const std::string& ip) {
    std::vector<uint8_t> rd(16);
    inet_pton(AF_INET6, ip.c_str(), rd.data());
    Add(name, kAAAA, rd);
  }
  void AddSRV(const std::string& name, uint16_t priority, uint16_t weight, uint16_t port,
              const std::string& target) {
    std::vector<uint8_t> rd;
    Put16(rd, priority);
    Put16(rd, weight);
    Put16(rd, port);
    PutName(rd, target);
    Add(name, kSRV, rd);
  }
  void AddMX(const std::string& name, uint16_t preference, const std::string& host) {
    std::vector<uint8_t> rd;
    Put16(rd, preference);
    PutName(rd, host);
    Add(name, kMX, rd);
  }
  void AddNS(const std::string& name, const std::string& host) {
    std::vector<uint8_t> rd;
    PutName(rd, host);
    Add(name, kNS, rd);
  }
  void AddCNAME(const std::string& name, const std::string& target) {
    std::vector<uint8_t> rd;
    PutName(rd, target);
    Add(name, kCNAME, rd);
  }

 private:
  struct Record {
    uint16_t type;
    std::vector<uint8_t> rdata;
  };

  static std::string Lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    while (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }
  static void Put16(std::vector<uint8_t>& b, uint16_t v) {
    b.push_back(static_cast<uint8_t>(v >> 8));
    b.push_back(static_cast<uint8_t>(v & 0xff));
  }
  static void PutName(std::vector<uint8_t>& b, const std::string& name) {
    size_t start = 0;
    const std::string n = Lower(name);
    while (start < n.size()) {
      size_t dot = n.find('.', start);
      if (dot == std::string::npos) dot = n.size();
      b.push_back(static_cast<uint8_t>(dot - start));
      b.insert(b.end(), n.begin() + start, n.begin() + dot);
      start = dot + 1;
    }
    b.push_back(0);
  }
  void Add(const std::string& name, uint16_t type, std::vector<uint8_t> rdata) {
    std::lock_guard<std::mutex> l(mu_);
    records_[Lower(name)].push_back({type, std::move(rdata)});
  }

  void Serve() {
    std::vector<uint8_t> buf(4096);
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      sockaddr_in from{};
      socklen_t flen = sizeof from;
      const ssize_t n =
          ::recvfrom(fd_, buf.data(), buf.size(), 0, reinterpret_cast<sockaddr*>(&from), &flen);
      if (n < 12) continue;
      ++queries_;
      std::vector<uint8_t> reply = Answer(buf.data(), static_cast<size_t>(n));
      if (reply.empty()) continue;
      ::sendto(fd_, reply.data(), reply.size(), 0, reinterpret_cast<sockaddr*>(&from), flen);
    }
  }

  std::vector<uint8_t> Answer(const uint8_t* q, size_t n) {
    // The question: labels up to the root, then type and class.
    size_t pos = 12;
    std::string name;
    while (pos < n && q[pos] != 0) {
      const size_t len = q[pos];
      if (pos + 1 + len > n) return {};
      if (!name.empty()) name += '.';
      name.append(reinterpret_cast<const char*>(q + pos + 1), len);
      pos += 1 + len;
    }
    if (pos + 5 > n) return {};
    const size_t question_end = pos + 5;
    const uint16_t qtype = static_cast<uint16_t>((q[pos + 1] << 8) | q[pos + 2]);
    std::vector<Record> answers;
    int rcode = 0;
    {
      std::lock_guard<std::mutex> l(mu_);
      const std::string key = Lower(name);
      auto it = records_.find(key);
      if (failing_.count(key)) {
        rcode = 2;  // SERVFAIL
      } else if (it == records_.end()) {
        rcode = 3;  // NXDOMAIN
      } else {
        for (const auto& r : it->second) {
          if (r.type == qtype || r.type == kCNAME) answers.push_back(r);
        }
      }
    }
    std::vector<uint8_t> out(q, q + 2);                          // the query's id
    Put16(out, static_cast<uint16_t>(0x8400 | 0x0100 | rcode));  // QR, AA, RD
    Put16(out, 1);
    Put16(out, static_cast<uint16_t>(answers.size()));
    Put16(out, 0);
    Put16(out, 0);
    out.insert(out.end(), q + 12, q + question_end);
    for (const auto& r : answers) {
      Put16(out, 0xC00C);  // the question's name
      Put16(out, r.type);
      Put16(out, 1);  // IN
      Put16(out, 0);
      Put16(out, 60);  // TTL
      Put16(out, static_cast<uint16_t>(r.rdata.size()));
      out.insert(out.end(), r.rdata.begin(), r.rdata.end());
    }
    return out;
  }

  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> queries_{0};
  std::mutex mu_;
  std::map<std::string, std::vector<Record>> records_;
  std::set<std::string> failing_;
  std::thread thread_;
};

}  // namespace gpumon::scrape::testing
