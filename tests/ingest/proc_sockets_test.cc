// ingest/proc_sockets.h: peer addresses, the kernel's socket tables (a fake
// tree, and this host's real /proc with real loopback sockets), and socket
// owners.
#include "ingest/proc_sockets.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bit>
#include <iostream>
#include <string>

#include "fake_proc.h"

namespace gpumon::ingest {
namespace {

using testing::FakeProc;

SocketAddress Addr(const char* text) {
  std::optional<SocketAddress> a = ParseSocketAddress(text);
  EXPECT_TRUE(a.has_value()) << text;
  return a.value_or(SocketAddress{});
}

TEST(ParseSocketAddress, AcceptsTheFormsPeersComeIn) {
  const SocketAddress v4 = Addr("127.0.0.1:54321");
  EXPECT_TRUE(v4.is_v4_mapped());
  EXPECT_EQ(v4.port, 54321);
  EXPECT_EQ(v4.ip[12], 127);
  EXPECT_EQ(v4.ip[15], 1);
  // v4-mapped IPv6, bracketed (as the HTTP server writes it) or not.
  EXPECT_EQ(Addr("[::ffff:127.0.0.1]:54321"), v4);
  EXPECT_EQ(Addr("::ffff:127.0.0.1:54321"), v4);
  const SocketAddress v6 = Addr("[2001:db8::5]:80");
  EXPECT_FALSE(v6.is_v4_mapped());
  EXPECT_EQ(v6.ip[0], 0x20);
  EXPECT_EQ(v6.ip[1], 0x01);
  EXPECT_EQ(v6.ip[15], 5);
  EXPECT_EQ(Addr("[fe80::1%eth0]:1"), Addr("[fe80::1]:1"));
  EXPECT_EQ(Addr("[::1]:0").port, 0);
  for (const char* bad : {"", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:x",
                          "[::1]80", "[::1]:", "[::1", "localhost:80", "1.2.3:80", "::1"}) {
    EXPECT_FALSE(ParseSocketAddress(bad).has_value()) << bad;
  }
}

class SocketTables : public ::testing::Test {
 protected:
  void SetUp() override {
    if constexpr (std::endian::native != std::endian::little) {
      GTEST_SKIP() << "the literal tables below are as a little-endian kernel writes them";
    }
  }
};

TEST_F(SocketTables, FindsTheEntryWhoseLocalAddressIsThePeer) {
  // 127.0.0.1:3306 listening; the agent side of a connection (remote =
  // peer); the pushing client (local = peer 127.0.0.1:54321); a TIME_WAIT
  // leftover (inode 0) with the same local address.
  const std::string tcp = std::string(FakeProc::kTcpHeader) +
                          FakeProc::Line(0, "0100007F:0CEA", "00000000:0000", "0A", 100) +
                          FakeProc::Line(1, "0100007F:0CEA", "0100007F:D431", "01", 200) +
                          FakeProc::Line(2, "0100007F:D431", "0100007F:0CEA", "06", 0) +
                          FakeProc::Line(3, "0100007F:D431", "0100007F:0CEA", "01", 4242) +
                          FakeProc::Line(4, "0500000A:9C40", "0100000A:1F90", "08", 77) +
                          FakeProc::Line(5, "0500000A:9C40", "0100000A:1F90", "01", 78);
  EXPECT_EQ(FindLocalSocketInode(tcp, false, Addr("127.0.0.1:54321")), 4242u);
  // 10.0.0.5:40000 has a CLOSE_WAIT and an ESTABLISHED entry: the latter wins.
  EXPECT_EQ(FindLocalSocketInode(tcp, false, Addr("10.0.0.5:40000")), 78u);
  // A listening socket is never a peer (127.0.0.1:3306 is the accepted
  // socket's local address as well: that one matches); nor is a remote
  // address.
  EXPECT_EQ(FindLocalSocketInode(tcp, false, Addr("127.0.0.1:3306")), 200u);
  const std::string listening = std::string(FakeProc::kTcpHeader) +
                                FakeProc::Line(0, "0100007F:0CEA", "00000000:0000", "0A", 100);
  EXPECT_FALSE(FindLocalSocketInode(listening, false, Addr("127.0.0.1:3306")).has_value());
  EXPECT_FALSE(FindLocalSocketInode(tcp, false, Addr("10.0.0.1:8080")).has_value());
  // Only IPv4 in an IPv4 table.
  EXPECT_FALSE(FindLocalSocketInode(tcp, false, Addr("[::1]:54321")).has_value());
  // Only-CLOSE_WAIT is still found.
  const std::string closing = std::string(FakeProc::kTcpHeader) +
                              FakeProc::Line(0, "0500000A:9C40", "0100000A:1F90", "08", 77);
  EXPECT_EQ(FindLocalSocketInode(closing, false, Addr("10.0.0.5:40000")), 77u);
  // Garbage lines are skipped.
  EXPECT_FALSE(FindLocalSocketInode("junk\n  0: zz:zz\n", false, Addr("1.2.3.4:1")).has_value());
}

TEST_F(SocketTables, ReadsIpv6AndV4MappedEntries) {
  FakeProc proc;
  proc.Write("net/tcp", FakeProc::kTcpHeader);
  proc.Write("net/tcp6", std::string(FakeProc::kTcp6Header) +
                             // [::1]:41394
                             FakeProc::Line(0, "00000000000000000000000001000000:A1B2",
                                            "00000000000000000000000001000000:1F90", "01", 6001) +
                             // [::ffff:127.0.0.1]:49152, a dual-stack socket
                             FakeProc::Line(1, "0000000000000000FFFF00000100007F:C000",
                                            "0000000000000000FFFF00000100007F:1F90", "01", 6002) +
                             // [2001:db8::5]:4660
                             FakeProc::Line(2, "B80D0120000000000000000005000000:1234",
                                            "B80D0120000000000000000001000000:1F90", "01", 6003));
  const std::string net = proc.root() + "/net";
  EXPECT_EQ(FindLocalSocketInodeIn(net, Addr("[::1]:41394")), 6001u);
  EXPECT_EQ(FindLocalSocketInodeIn(net, Addr("[2001:db8::5]:4660")), 6003u);
  // The IPv4 peer of a dual-stack socket, in either spelling.
  EXPECT_EQ(FindLocalSocketInodeIn(net, Addr("127.0.0.1:49152")), 6002u);
  EXPECT_EQ(FindLocalSocketInodeIn(net, Addr("[::ffff:127.0.0.1]:49152")), 6002u);
  EXPECT_FALSE(FindLocalSocketInodeIn(net, Addr("[::1]:8080")).has_value());
  // No tables at all (another kernel layout, no permission): nothing.
  EXPECT_FALSE(FindLocalSocketInodeIn(proc.root() + "/absent", Addr("[::1]:1")).has_value());
}

TEST(SocketOwner, ScansTheLikelyOwnersFirstThenEveryProcess) {
  FakeProc proc;
  proc.Fd(100, 0, "/dev/null");
  proc.Fd(100, 3, "socket:[4242]");
  proc.Fd(200, 5, "socket:[6001]");
  proc.Fd(200, 6, "pipe:[6002]");
  proc.Write("self/status", "not a pid\n");
  proc.Write("300/cgroup", "0::/\n");  // no fd directory
  EXPECT_EQ(FindSocketOwner(proc.root(), 4242, {}), 100);
  EXPECT_EQ(FindSocketOwner(proc.root(), 6001, {999, 300, 200}), 200);
  EXPECT_FALSE(FindSocketOwner(proc.root(), 6002, {200}).has_value());  // a pipe
  EXPECT_FALSE(FindSocketOwner(proc.root(), 42, {}).has_value());
  EXPECT_TRUE(OwnsSocket(proc.root(), 100, 4242));
  EXPECT_FALSE(OwnsSocket(proc.root(), 100, 424));
  std::vector<int> pids = ListPids(proc.root());
  std::sort(pids.begin(), pids.end());
  EXPECT_EQ(pids, (std::vector<int>{100, 200, 300}));
}

// A connected loopback pair; `client` is the pushing side.
struct Connection {
  int listener = -1;
  int client = -1;
  int server = -1;
  std::string client_address;  // as the server's HTTP layer would print it
  ~Connection() {
    for (int fd : {server, client, listener}) {
      if (fd >= 0) close(fd);
    }
  }
};

bool ConnectV4(Connection* c) {
  c->listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  if (bind(c->listener, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      listen(c->listener, 1) != 0 ||
      getsockname(c->listener, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    return false;
  }
  c->client = socket(AF_INET, SOCK_STREAM, 0);
  if (connect(c->client, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) return false;
  c->server = accept(c->listener, nullptr, nullptr);
  sockaddr_in local{};
  len = sizeof(local);
  getsockname(c->client, reinterpret_cast<sockaddr*>(&local), &len);
  char ip[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, &local.sin_addr, ip, sizeof(ip));
  c->client_address = std::string(ip) + ":" + std::to_string(ntohs(local.sin_port));
  return c->server >= 0;
}

// An AF_INET6 client to a dual-stack listener over ::ffff:127.0.0.1, or
// over ::1 when `mapped` is false.
bool ConnectV6(Connection* c, bool mapped) {
  c->listener = socket(AF_INET6, SOCK_STREAM, 0);
  if (c->listener < 0) return false;
  int off = 0;
  setsockopt(c->listener, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_addr = in6addr_any;
  socklen_t len = sizeof(a);
  if (bind(c->listener, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      listen(c->listener, 1) != 0 ||
      getsockname(c->listener, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    return false;
  }
  inet_pton(AF_INET6, mapped ? "::ffff:127.0.0.1" : "::1", &a.sin6_addr);
  c->client = socket(AF_INET6, SOCK_STREAM, 0);
  if (connect(c->client, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) return false;
  c->server = accept(c->listener, nullptr, nullptr);
  sockaddr_in6 local{};
  len = sizeof(local);
  getsockname(c->client, reinterpret_cast<sockaddr*>(&local), &len);
  char ip[INET6_ADDRSTRLEN];
  inet_ntop(AF_INET6, &local.sin6_addr, ip, sizeof(ip));
  c->client_address = "[" + std::string(ip) + "]:" + std::to_string(ntohs(local.sin6_port));
  return c->server >= 0;
}

// The netlink lookup agrees with the tables (when netlink is there).
void ExpectNetlinkAgrees(const std::string& peer) {
  const SocketAddress addr = Addr(peer.c_str());
  bool available = false;
  const std::optional<uint64_t> by_netlink = FindLocalSocketInodeNetlink(addr, &available);
  if (!available) {
    std::cerr << "sock_diag netlink unavailable here; only the tables were checked\n";
    return;
  }
  ASSERT_TRUE(by_netlink.has_value()) << peer;
  EXPECT_EQ(by_netlink, FindLocalSocketInodeIn("/proc/net", addr)) << peer;
}

std::optional<int> OwnerOfPeer(const std::string& peer) {
  std::optional<SocketAddress> addr = ParseSocketAddress(peer);
  if (!addr) return std::nullopt;
  std::optional<uint64_t> inode = FindLocalSocketInodeIn("/proc/net", *addr);
  if (!inode) return std::nullopt;
  return FindSocketOwner("/proc", *inode, {getpid()});
}

TEST(RealProc, FindsThisProcessAsTheOwnerOfItsLoopbackSocket) {
  Connection c;
  ASSERT_TRUE(ConnectV4(&c)) << "loopback TCP unavailable";
  EXPECT_EQ(OwnerOfPeer(c.client_address), getpid()) << c.client_address;
  ExpectNetlinkAgrees(c.client_address);
  // Not a socket here: neither way finds one.
  bool available = false;
  EXPECT_FALSE(FindLocalSocketInodeNetlink(Addr("192.0.2.1:1"), &available).has_value());
  // The listener's side is not a peer: the server's own accepted socket has
  // the peer as its REMOTE address and must not be taken for it.
  sockaddr_in server_local{};
  socklen_t len = sizeof(server_local);
  getsockname(c.server, reinterpret_cast<sockaddr*>(&server_local), &len);
  const std::string listen_address = "127.0.0.1:" + std::to_string(ntohs(server_local.sin_port));
  // That address is the listener (skipped) and the accepted socket, which
  // this process also owns; either way the client's inode is not returned.
  auto client_inode = FindLocalSocketInodeIn("/proc/net", Addr(c.client_address.c_str()));
  auto server_inode = FindLocalSocketInodeIn("/proc/net", Addr(listen_address.c_str()));
  ASSERT_TRUE(client_inode.has_value());
  EXPECT_NE(client_inode, server_inode);
}

TEST(RealProc, FindsDualStackAndIpv6Sockets) {
  Connection mapped;
  if (!ConnectV6(&mapped, true)) GTEST_SKIP() << "no dual-stack IPv6 here";
  EXPECT_EQ(OwnerOfPeer(mapped.client_address), getpid()) << mapped.client_address;
  // The same peer in plain IPv4 form, as an IPv4-only listener would see it.
  const std::string v4 = mapped.client_address.substr(std::string("[::ffff:").size());
  const std::string plain = v4.substr(0, v4.find(']')) + v4.substr(v4.find(']') + 1);
  EXPECT_EQ(OwnerOfPeer(plain), getpid()) << plain;
  ExpectNetlinkAgrees(mapped.client_address);
  ExpectNetlinkAgrees(plain);

  Connection v6;
  if (!ConnectV6(&v6, false)) GTEST_SKIP() << "no IPv6 loopback here";
  EXPECT_EQ(OwnerOfPeer(v6.client_address), getpid()) << v6.client_address;
  ExpectNetlinkAgrees(v6.client_address);
}

}  // namespace
}  // namespace gpumon::ingest
