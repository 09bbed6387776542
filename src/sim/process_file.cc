#include "sim/process_file.h"

#include <sys/stat.h>

#include <charconv>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

namespace gpumon::sim {
namespace {

constexpr uint64_t kMaxPid = 0x7FFFFFFF;

std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) fields.push_back(line.substr(start, i - start));
  }
  return fields;
}

bool ParseUnsigned(std::string_view s, uint64_t* v) {
  if (s.empty()) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && end == s.data() + s.size();
}

}  // namespace

Result<std::vector<SimProcess>> ParseProcessFile(std::string_view text, int gpus,
                                                 std::string_view origin) {
  std::vector<SimProcess> out;
  std::set<std::pair<unsigned int, int>> seen;
  size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (const size_t hash = line.find('#'); hash != std::string_view::npos) {
      line = line.substr(0, hash);
    }
    const std::vector<std::string_view> f = Fields(line);
    if (f.empty()) continue;
    const std::string where = std::string(origin) + ":" + std::to_string(line_no) + ": ";
    if (f.size() < 3 || f.size() > 4) {
      return Status::Error(where + "expected \"pid gpu_index used_bytes [kind]\", got " +
                           std::to_string(f.size()) + " fields");
    }
    uint64_t pid = 0, gpu = 0, used = 0;
    if (!ParseUnsigned(f[0], &pid) || pid < 1 || pid > kMaxPid) {
      return Status::Error(where + "pid \"" + std::string(f[0]) + "\" must be an integer in 1.." +
                           std::to_string(kMaxPid));
    }
    if (!ParseUnsigned(f[1], &gpu) || gpu >= static_cast<uint64_t>(gpus)) {
      return Status::Error(where + "gpu_index \"" + std::string(f[1]) +
                           "\" must be an integer in 0.." + std::to_string(gpus - 1));
    }
    if (!ParseUnsigned(f[2], &used) || used == ~uint64_t{0}) {
      return Status::Error(where + "used_bytes \"" + std::string(f[2]) +
                           "\" must be an unsigned integer below 2^64-1");
    }
    SimProcess p;
    p.pid = static_cast<unsigned int>(pid);
    p.gpu = static_cast<int>(gpu);
    p.used_bytes = used;
    if (f.size() == 4) {
      if (f[3] == "compute") {
        p.compute = true;
        p.graphics = false;
      } else if (f[3] == "graphics") {
        p.compute = false;
        p.graphics = true;
      } else if (f[3] == "both") {
        p.compute = true;
        p.graphics = true;
      } else {
        return Status::Error(where + "kind \"" + std::string(f[3]) +
                             "\" must be compute, graphics or both");
      }
    }
    if (!seen.insert({p.pid, p.gpu}).second) {
      return Status::Error(where + "pid " + std::to_string(p.pid) + " is listed twice on GPU " +
                           std::to_string(p.gpu));
    }
    out.push_back(p);
  }
  return out;
}

ProcessFile::ProcessFile(std::string path, int gpus) : path_(std::move(path)), gpus_(gpus) {}

Result<std::vector<SimProcess>> ProcessFile::Current() {
  if (path_.empty()) return std::vector<SimProcess>{};
  std::lock_guard<std::mutex> lock(mu_);
  Key key;
  struct stat st {};
  if (::stat(path_.c_str(), &st) == 0) {
    key.exists = true;
    key.dev = static_cast<uint64_t>(st.st_dev);
    key.ino = static_cast<uint64_t>(st.st_ino);
    key.size = static_cast<uint64_t>(st.st_size);
    key.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  }
  if (loaded_ && key == key_) return current_;
  loaded_ = true;
  key_ = key;
  if (!key.exists) {
    current_ = std::vector<SimProcess>{};
    return current_;
  }
  std::ifstream in(path_, std::ios::binary);
  if (!in) {
    // Vanished between stat and open: read again next time.
    loaded_ = false;
    return std::vector<SimProcess>{};
  }
  std::ostringstream text;
  text << in.rdbuf();
  current_ = ParseProcessFile(text.str(), gpus_, path_);
  return current_;
}

}  // namespace gpumon::sim
