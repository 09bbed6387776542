#include "ingest/proc_sockets.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <linux/inet_diag.h>
#include <linux/magic.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

namespace gpumon::ingest {
namespace {

constexpr std::string_view kListen = "0A";
constexpr std::string_view kEstablished = "01";

std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

bool ParseHex32(std::string_view s, uint32_t* v) {
  if (s.size() != 8) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *v, 16);
  return ec == std::errc() && end == s.data() + s.size();
}

// "HEXADDR:HEXPORT" of a table into an address (IPv4 made v4-mapped).
bool ParseTableAddress(std::string_view text, bool v6, SocketAddress* out) {
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) return false;
  const std::string_view hex = text.substr(0, colon);
  const std::string_view port = text.substr(colon + 1);
  unsigned int p = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p, 16);
  if (ec != std::errc() || end != port.data() + port.size() || p > 0xFFFF) return false;
  out->port = static_cast<uint16_t>(p);
  out->ip = {};
  if (!v6) {
    uint32_t word = 0;
    if (!ParseHex32(hex, &word)) return false;
    out->ip[10] = 0xFF;
    out->ip[11] = 0xFF;
    // The kernel prints the address's memory as a host-order word.
    std::memcpy(out->ip.data() + 12, &word, 4);
    return true;
  }
  if (hex.size() != 32) return false;
  for (int i = 0; i < 4; ++i) {
    uint32_t word = 0;
    if (!ParseHex32(hex.substr(static_cast<size_t>(i) * 8, 8), &word)) return false;
    std::memcpy(out->ip.data() + i * 4, &word, 4);
  }
  return true;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool IsNumber(const char* s) {
  if (*s == '\0') return false;
  for (; *s != '\0'; ++s) {
    if (*s < '0' || *s > '9') return false;
  }
  return true;
}

}  // namespace

bool SocketAddress::is_v4_mapped() const {
  for (int i = 0; i < 10; ++i) {
    if (ip[static_cast<size_t>(i)] != 0) return false;
  }
  return ip[10] == 0xFF && ip[11] == 0xFF;
}

std::optional<SocketAddress> ParseSocketAddress(std::string_view text) {
  std::string_view host;
  std::string_view port;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return std::nullopt;
    }
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return std::nullopt;
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  unsigned int p = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || p > 0xFFFF) {
    return std::nullopt;
  }
  // Strip a zone ("fe80::1%eth0"): the tables do not carry it.
  if (const size_t pct = host.find('%'); pct != std::string_view::npos) host = host.substr(0, pct);
  const std::string h(host);
  SocketAddress addr;
  addr.port = static_cast<uint16_t>(p);
  in_addr v4{};
  in6_addr v6{};
  if (h.find(':') == std::string::npos && inet_pton(AF_INET, h.c_str(), &v4) == 1) {
    addr.ip[10] = 0xFF;
    addr.ip[11] = 0xFF;
    std::memcpy(addr.ip.data() + 12, &v4, 4);
    return addr;
  }
  if (inet_pton(AF_INET6, h.c_str(), &v6) == 1) {
    std::memcpy(addr.ip.data(), &v6, 16);
    return addr;
  }
  return std::nullopt;
}

std::optional<uint64_t> FindLocalSocketInode(std::string_view table, bool v6,
                                             const SocketAddress& addr) {
  // An AF_INET table holds only IPv4 addresses.
  if (!v6 && !addr.is_v4_mapped()) return std::nullopt;
  std::optional<uint64_t> other;
  while (!table.empty()) {
    const size_t nl = table.find('\n');
    const std::string_view line = table.substr(0, nl);
    table = nl == std::string_view::npos ? std::string_view() : table.substr(nl + 1);
    // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
    const std::vector<std::string_view> f = Fields(line);
    if (f.size() < 10 || f[0].empty() || f[0].back() != ':') continue;  // the header
    SocketAddress local;
    if (!ParseTableAddress(f[1], v6, &local) || !(local == addr)) continue;
    if (f[3] == kListen) continue;
    uint64_t inode = 0;
    const auto [end, ec] = std::from_chars(f[9].data(), f[9].data() + f[9].size(), inode);
    if (ec != std::errc() || end != f[9].data() + f[9].size() || inode == 0) continue;
    if (f[3] == kEstablished) return inode;
    if (!other) other = inode;
  }
  return other;
}

std::optional<uint64_t> FindLocalSocketInodeIn(const std::string& net_dir,
                                               const SocketAddress& addr) {
  if (addr.is_v4_mapped()) {
    if (auto inode = FindLocalSocketInode(ReadFile(net_dir + "/tcp"), false, addr)) return inode;
  }
  return FindLocalSocketInode(ReadFile(net_dir + "/tcp6"), true, addr);
}

namespace {

constexpr unsigned int kTcpEstablished = 1;
constexpr unsigned int kTcpTimeWait = 6;
constexpr unsigned int kTcpListen = 10;

// One dump of `family`'s TCP sockets. Returns false when the interface is
// unusable; *found/*other as in FindLocalSocketInode.
bool DiagDump(int family, const SocketAddress& addr, std::optional<uint64_t>* established,
              std::optional<uint64_t>* other) {
  const int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (fd < 0) return false;
  struct {
    nlmsghdr nlh;
    inet_diag_req_v2 req;
  } msg{};
  msg.nlh.nlmsg_len = sizeof(msg);
  msg.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  msg.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  msg.req.sdiag_family = static_cast<uint8_t>(family);
  msg.req.sdiag_protocol = IPPROTO_TCP;
  // Every state but LISTEN and TIME_WAIT (whose entries own no socket).
  msg.req.idiag_states = 0xFFFu & ~(1u << kTcpListen) & ~(1u << kTcpTimeWait);
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (sendto(fd, &msg, sizeof(msg), 0, reinterpret_cast<sockaddr*>(&kernel), sizeof(kernel)) < 0) {
    close(fd);
    return false;
  }
  const uint16_t port = htons(addr.port);
  alignas(nlmsghdr) char buf[32768];
  bool ok = true;
  bool done = false;
  while (!done) {
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = false;
      break;
    }
    for (auto* h = reinterpret_cast<nlmsghdr*>(buf); NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
      if (h->nlmsg_type == NLMSG_DONE) {
        done = true;
        break;
      }
      if (h->nlmsg_type == NLMSG_ERROR) {
        ok = false;
        done = true;
        break;
      }
      if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
          h->nlmsg_len < NLMSG_LENGTH(sizeof(inet_diag_msg))) {
        continue;
      }
      const auto* m = static_cast<const inet_diag_msg*>(NLMSG_DATA(h));
      if (m->id.idiag_sport != port || m->idiag_inode == 0) continue;
      const bool same = family == AF_INET
                            ? std::memcmp(m->id.idiag_src, addr.ip.data() + 12, 4) == 0
                            : std::memcmp(m->id.idiag_src, addr.ip.data(), 16) == 0;
      if (!same) continue;
      if (m->idiag_state == kTcpEstablished) {
        if (!*established) *established = m->idiag_inode;
      } else if (!*other) {
        *other = m->idiag_inode;
      }
    }
  }
  close(fd);
  return ok;
}

}  // namespace

std::optional<uint64_t> FindLocalSocketInodeNetlink(const SocketAddress& addr, bool* available) {
  *available = true;
  std::optional<uint64_t> established;
  std::optional<uint64_t> other;
  if (addr.is_v4_mapped()) {
    if (!DiagDump(AF_INET, addr, &established, &other)) {
      *available = false;
      return std::nullopt;
    }
    if (established) return established;
  }
  if (!DiagDump(AF_INET6, addr, &established, &other)) {
    // A kernel without IPv6 still answered for IPv4.
    if (!addr.is_v4_mapped()) *available = false;
    return established ? established : other;
  }
  return established ? established : other;
}

bool IsProcfs(const std::string& path) {
  struct statfs st {};
  return statfs(path.c_str(), &st) == 0 && st.f_type == PROC_SUPER_MAGIC;
}

std::vector<int> ListPids(const std::string& proc_root) {
  std::vector<int> pids;
  DIR* dir = opendir(proc_root.c_str());
  if (dir == nullptr) return pids;
  while (const dirent* e = readdir(dir)) {
    if (!IsNumber(e->d_name)) continue;
    int pid = 0;
    const std::string_view name(e->d_name);
    const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), pid);
    if (ec == std::errc() && end == name.data() + name.size() && pid > 0) pids.push_back(pid);
  }
  closedir(dir);
  return pids;
}

bool OwnsSocket(const std::string& proc_root, int pid, uint64_t inode) {
  const std::string fd_dir = proc_root + "/" + std::to_string(pid) + "/fd";
  const std::string want = "socket:[" + std::to_string(inode) + "]";
  DIR* dir = opendir(fd_dir.c_str());
  if (dir == nullptr) return false;
  bool found = false;
  char target[64];
  while (!found) {
    const dirent* e = readdir(dir);
    if (e == nullptr) break;
    if (e->d_name[0] == '.') continue;
    const std::string link = fd_dir + "/" + e->d_name;
    const ssize_t n = readlink(link.c_str(), target, sizeof(target));
    if (n <= 0 || static_cast<size_t>(n) >= sizeof(target)) continue;
    found = std::string_view(target, static_cast<size_t>(n)) == want;
  }
  closedir(dir);
  return found;
}

std::optional<int> FindSocketOwner(const std::string& proc_root, uint64_t inode,
                                   const std::vector<int>& first) {
  std::set<int> tried;
  for (int pid : first) {
    if (!tried.insert(pid).second) continue;
    if (OwnsSocket(proc_root, pid, inode)) return pid;
  }
  for (int pid : ListPids(proc_root)) {
    if (tried.count(pid) != 0) continue;
    if (OwnsSocket(proc_root, pid, inode)) return pid;
  }
  return std::nullopt;
}

}  // namespace gpumon::ingest
