// From a TCP peer address to the local process that owns the socket, through
// /proc: the socket tables (<proc>/net/tcp, tcp6) give the inode of the
// socket whose LOCAL address is the peer's, and the fd links of the
// processes (<proc>/<pid>/fd/* -> "socket:[inode]") give its owner.
//
// Contract:
// - ParseSocketAddress accepts "a.b.c.d:port", "[v6]:port" (as
//   http::HttpRequest::remote_address writes it) and an unbracketed
//   "v6:port" (the port is after the last colon). IPv4 is held as its
//   v4-mapped IPv6 form (::ffff:a.b.c.d), so "1.2.3.4:5" and
//   "[::ffff:1.2.3.4]:5" are the same address.
// - The tables are read as the kernel writes them: each address is hex of
//   32-bit words in host byte order (little-endian on x86 and arm64:
//   127.0.0.1 is 0100007F), the port is hex in natural order. A v4-mapped
//   address matches its entry in tcp (an AF_INET socket) and in tcp6 (a
//   dual-stack AF_INET6 socket). Listening sockets and entries with inode 0
//   (TIME_WAIT) never match; an ESTABLISHED entry wins over others.
// - FindSocketOwner scans the fd links of `first` (the processes most
//   likely to own it, e.g. the GPU processes) before all numeric entries of
//   the proc root. Processes that vanish or that this process may not
//   inspect are skipped silently. Nothing here throws or keeps state.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpumon::ingest {

struct SocketAddress {
  std::array<uint8_t, 16> ip{};  // IPv6, network byte order; IPv4 as ::ffff:a.b.c.d
  uint16_t port = 0;
  bool is_v4_mapped() const;
  bool operator==(const SocketAddress&) const = default;
};

std::optional<SocketAddress> ParseSocketAddress(std::string_view text);

// The inode of the socket whose local address is `addr` in the text of one
// socket table; `v6` tells tcp6 from tcp.
std::optional<uint64_t> FindLocalSocketInode(std::string_view table, bool v6,
                                             const SocketAddress& addr);

// As above, over <net_dir>/tcp and <net_dir>/tcp6 (net_dir is <proc>/net,
// or <proc>/<pid>/net for another network namespace).
std::optional<uint64_t> FindLocalSocketInodeIn(const std::string& net_dir,
                                               const SocketAddress& addr);

// The same lookup through the kernel's sock_diag netlink interface
// (NETLINK_SOCK_DIAG, one dump of the non-listening TCP sockets per address
// family), over this process's network namespace: what <proc>/net/tcp{,6}
// show, at a fraction of the cost (reading the text tables walks the whole
// established hash once per page; on large-memory hosts that is
// milliseconds per read). Same matching rules. *available is set false when
// the interface cannot be used (no netlink, refused), so the caller can
// fall back to the tables.
std::optional<uint64_t> FindLocalSocketInodeNetlink(const SocketAddress& addr, bool* available);

// Whether `path` is a mounted procfs (so netlink sees what its net/ shows).
bool IsProcfs(const std::string& path);

// The numeric entries of proc_root (the pids), in no particular order.
std::vector<int> ListPids(const std::string& proc_root);

// Whether <proc_root>/<pid>/fd holds a link to "socket:[inode]".
bool OwnsSocket(const std::string& proc_root, int pid, uint64_t inode);

// The pid owning socket `inode` (see above), or nullopt.
std::optional<int> FindSocketOwner(const std::string& proc_root, uint64_t inode,
                                   const std::vector<int>& first);

}  // namespace gpumon::ingest
