// A fake /proc tree under a temporary directory, for the process-to-GPU
// join tests: socket tables, per-pid fd links, cgroup files and network
// namespace links, written as the kernel presents them.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace gpumon::ingest::testing {

class FakeProc {
 public:
  FakeProc() {
    static int counter = 0;
    root_ = std::filesystem::temp_directory_path() /
            ("gpumon-fake-proc-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(root_ / "net");
  }
  ~FakeProc() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  FakeProc(const FakeProc&) = delete;
  FakeProc& operator=(const FakeProc&) = delete;

  std::string root() const { return root_.string(); }

  // Writes <root>/<relative> (directories created).
  void Write(const std::string& relative, const std::string& text) const {
    const std::filesystem::path p = root_ / relative;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
  }
  // <root>/<pid>/fd/<fd> -> target (e.g. "socket:[123]", "/dev/null").
  void Fd(int pid, int fd, const std::string& target) const {
    const std::filesystem::path dir = root_ / std::to_string(pid) / "fd";
    std::filesystem::create_directories(dir);
    std::filesystem::create_symlink(target, dir / std::to_string(fd));
  }
  void Cgroup(int pid, const std::string& text) const {
    Write(std::to_string(pid) + "/cgroup", text);
  }
  // <root>/<pid>/ns/net -> "net:[ns]".
  void NetNs(int pid, const std::string& ns) const {
    const std::filesystem::path dir = root_ / std::to_string(pid) / "ns";
    std::filesystem::create_directories(dir);
    std::filesystem::create_symlink("net:[" + ns + "]", dir / "net");
  }

  static constexpr const char* kTcpHeader =
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
      "timeout inode\n";
  static constexpr const char* kTcp6Header =
      "  sl  local_address                         remote_address                        st "
      "tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n";
  // One table line, as the kernel formats it.
  static std::string Line(int sl, const std::string& local, const std::string& remote,
                          const std::string& state, unsigned long inode) {
    return "   " + std::to_string(sl) + ": " + local + " " + remote + " " + state +
           " 00000000:00000000 00:00000000 00000000  1000        0 " + std::to_string(inode) +
           " 1 0000000000000000 20 4 30 10 -1\n";
  }

 private:
  std::filesystem::path root_;
};

}  // namespace gpumon::ingest::testing
