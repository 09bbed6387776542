#include "cli/tsdb_import.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <unordered_map>
#include <utility>

#include "common/labels.h"
#include "common/mmap_file.h"
#include "exposition/parser.h"
#include "tsdb/block/block_writer.h"
#include "tsdb/chunkenc/chunk.h"
#include "tsdb/sample.h"

namespace gpumon::cli {
namespace {

namespace fs = std::filesystem;
using tsdb::Sample;

// Holds <dir>/lock exclusively, as DB::Open does, for the import's duration.
class DirLock {
 public:
  ~DirLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  Status Acquire(const std::string& dir) {
    fd_ = ::open((dir + "/lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) return Status::Error("cannot create " + dir + "/lock: " + std::strerror(errno));
    if (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      return Status::Error("data directory " + dir + " is in use by another process (lock held)");
    }
    return Status::Ok();
  }

 private:
  int fd_ = -1;
};

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

// A closed chunk of one series in one window; bytes live in the window's
// arena so that a chunk costs no allocation of its own.
struct ChunkRef {
  uint32_t series = 0;
  uint32_t len = 0;
  uint64_t offset = 0;
  int64_t mint = 0;
  int64_t maxt = 0;
};

// The data of one output block: the chunks of every series in one aligned
// max_block_range_ms range (or one block_range_ms window).
struct Window {
  std::vector<uint8_t> bytes;
  std::vector<ChunkRef> chunks;
  int64_t first_window = 0;  // block_range_ms windows holding data
  int64_t last_window = 0;
};

struct SeriesState {
  int64_t window = 0;
  int64_t last_t = 0;
  bool has_samples = false;
  std::vector<Sample> open;  // samples of the chunk being filled
};

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

class Importer {
 public:
  Importer(const std::string& data_dir, const ImportOptions& options)
      : data_dir_(data_dir), opts_(options) {}

  ~Importer() {
    if (!committed_) {
      std::error_code ec;
      for (const auto& d : written_) fs::remove_all(d, ec);
    }
  }

  // Called now and then with how many input bytes are done with, so that a
  // mapped file's pages can be dropped.
  std::function<void(uint64_t)> release;

  Status Parse(std::string_view input) {
    if (input.empty()) return Status::Ok();
    exposition::Parser parser(input, exposition::Format::kOpenMetrics1);
    exposition::Entry e;
    uint64_t next_report = 0;
    for (;;) {
      if (Status s = parser.Next(e); !s.ok()) return s;
      if (e.kind == exposition::EntryKind::kEof) break;
      if (e.kind != exposition::EntryKind::kSample) continue;
      if (!e.timestamp_ms) {
        return Status::Error("line " + std::to_string(e.line) +
                             ": sample without a timestamp (import needs one on every sample)");
      }
      uint32_t id = SeriesId(e);
      if (Status s = Append(id, *e.timestamp_ms, e.value, e.line); !s.ok()) return s;
      if (samples_ >= next_report) {
        next_report = samples_ + 65536;
        const char* p = e.name.data();
        uint64_t pos = (p >= input.data() && p < input.data() + input.size())
                           ? static_cast<uint64_t>(p - input.data())
                           : 0;
        if (opts_.progress) opts_.progress(pos, input.size(), samples_);
        if (release && pos > 0) release(pos);
      }
    }
    if (opts_.progress) opts_.progress(input.size(), input.size(), samples_);
    for (uint32_t id = 0; id < states_.size(); ++id) CloseChunk(id);
    return Status::Ok();
  }

  Status WriteBlocks() {
    // Label order of all series, computed once for every window.
    std::vector<uint32_t> order(labels_.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](uint32_t a, uint32_t b) { return labels_[a] < labels_[b]; });
    std::vector<uint32_t> rank(order.size());
    for (uint32_t i = 0; i < order.size(); ++i) rank[order[i]] = i;

    std::vector<tsdb::block::ChunkData> chunks;
    while (!windows_.empty()) {
      auto node = windows_.extract(windows_.begin());
      Window& w = node.mapped();
      // Stable: a series' chunks were appended in time order.
      std::stable_sort(w.chunks.begin(), w.chunks.end(), [&](const ChunkRef& a, const ChunkRef& b) {
        return rank[a.series] < rank[b.series];
      });
      tsdb::block::BlockWriterOptions bo;
      bo.min_time = w.first_window * opts_.block_range_ms;
      bo.max_time = (w.last_window + 1) * opts_.block_range_ms;
      // What compacting the per-window blocks would have produced.
      bo.compaction_level = w.first_window == w.last_window ? 1 : 2;
      auto writer = tsdb::block::BlockWriter::Create(data_dir_, bo);
      if (!writer.ok()) return writer.status();
      for (size_t i = 0; i < w.chunks.size();) {
        uint32_t sid = w.chunks[i].series;
        chunks.clear();
        for (; i < w.chunks.size() && w.chunks[i].series == sid; ++i) {
          const ChunkRef& c = w.chunks[i];
          chunks.push_back({c.mint, c.maxt, {w.bytes.data() + c.offset, c.len}});
        }
        if (Status s = (*writer)->AddSeries(labels_[sid], chunks); !s.ok()) {
          return s.WithContext("writing series " + labels_[sid].ToString());
        }
      }
      auto dir = (*writer)->Finish();
      if (!dir.ok()) return dir.status();
      written_.push_back(*dir);
      metas_.push_back((*writer)->meta());
    }
    return Status::Ok();
  }

  void Finish(ImportStats* stats) {
    committed_ = true;
    stats->series = labels_.size();
    stats->samples = samples_;
    stats->blocks = metas_.size();
    for (const auto& m : metas_) stats->bytes += m.stats.num_bytes;
    stats->block_dirs = written_;
  }

 private:
  // The series of a sample: its labels in canonical (sorted) order are the
  // lookup key; consecutive samples of one series skip the hash lookup.
  uint32_t SeriesId(const exposition::Entry& e) {
    sorted_.assign(e.labels.begin(), e.labels.end());
    std::sort(sorted_.begin(), sorted_.end(),
              [](const auto& a, const auto& b) { return a.name < b.name; });
    key_.clear();
    AppendKeyPart(e.name);
    for (const auto& l : sorted_) {
      if (l.value.empty() || l.name == "__name__") continue;  // as Prometheus
      AppendKeyPart(l.name);
      AppendKeyPart(l.value);
    }
    if (have_last_ && key_ == last_key_) return last_id_;
    uint32_t id;
    if (auto it = ids_.find(std::string_view(key_)); it != ids_.end()) {
      id = it->second;
    } else {
      id = static_cast<uint32_t>(labels_.size());
      ids_.emplace(key_, id);
      std::vector<Label> ls;
      ls.reserve(sorted_.size() + 1);
      ls.push_back({"__name__", std::string(e.name)});
      for (const auto& l : sorted_) {
        if (l.value.empty() || l.name == "__name__") continue;
        ls.push_back({std::string(l.name), std::string(l.value)});
      }
      labels_.push_back(Labels::FromUnsorted(std::move(ls)));
      states_.emplace_back();
    }
    std::swap(key_, last_key_);
    last_id_ = id;
    have_last_ = true;
    return id;
  }

  void AppendKeyPart(std::string_view s) {
    uint32_t n = static_cast<uint32_t>(s.size());
    key_.append(reinterpret_cast<const char*>(&n), sizeof n);
    key_.append(s);
  }

  Status Append(uint32_t id, int64_t t, double v, size_t line) {
    SeriesState& s = states_[id];
    if (s.has_samples && t <= s.last_t) {
      return Status::Error("line " + std::to_string(line) + ": sample of " +
                           labels_[id].ToString() + " at " + std::to_string(t) +
                           " ms is not after the previous one at " + std::to_string(s.last_t) +
                           " ms (samples of a series must be in increasing time order)");
    }
    int64_t w = FloorDiv(t, opts_.block_range_ms);
    if (s.has_samples && w != s.window) CloseChunk(id);
    s.window = w;
    s.last_t = t;
    s.has_samples = true;
    s.open.push_back({t, v});
    ++samples_;
    if (static_cast<int>(s.open.size()) >= opts_.samples_per_chunk) CloseChunk(id);
    return Status::Ok();
  }

  void CloseChunk(uint32_t id) {
    SeriesState& s = states_[id];
    if (s.open.empty()) return;
    std::vector<uint8_t> bytes = tsdb::chunkenc::EncodeBest(s.open);
    int64_t key = s.window;
    if (opts_.max_block_range_ms > opts_.block_range_ms) {
      key = FloorDiv(s.window * opts_.block_range_ms, opts_.max_block_range_ms);
    }
    auto [it, fresh] = windows_.try_emplace(key);
    Window& w = it->second;
    if (fresh) {
      w.first_window = w.last_window = s.window;
    } else {
      w.first_window = std::min(w.first_window, s.window);
      w.last_window = std::max(w.last_window, s.window);
    }
    ChunkRef c;
    c.series = id;
    c.len = static_cast<uint32_t>(bytes.size());
    c.offset = w.bytes.size();
    c.mint = s.open.front().t;
    c.maxt = s.open.back().t;
    w.bytes.insert(w.bytes.end(), bytes.begin(), bytes.end());
    w.chunks.push_back(c);
    s.open.clear();
  }

  std::string data_dir_;
  ImportOptions opts_;
  std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>> ids_;
  std::vector<Labels> labels_;
  std::vector<SeriesState> states_;
  std::map<int64_t, Window> windows_;
  uint64_t samples_ = 0;

  std::vector<exposition::LabelView> sorted_;
  std::string key_, last_key_;
  uint32_t last_id_ = 0;
  bool have_last_ = false;

  std::vector<tsdb::block::BlockMeta> metas_;
  std::vector<std::string> written_;  // removed unless the import succeeds
  bool committed_ = false;
};

Result<ImportStats> Import(std::string_view input, const std::string& data_dir,
                           const ImportOptions& options, std::function<void(uint64_t)> release) {
  auto start = std::chrono::steady_clock::now();
  if (options.block_range_ms <= 0 || options.samples_per_chunk < 1 ||
      options.samples_per_chunk > tsdb::chunkenc::kMaxSamples ||
      (options.max_block_range_ms > options.block_range_ms &&
       options.max_block_range_ms % options.block_range_ms != 0)) {
    return Status::Error("invalid import options");
  }
  std::error_code ec;
  fs::create_directories(data_dir, ec);
  if (ec) return Status::Error("creating " + data_dir + ": " + ec.message());
  DirLock lock;
  if (Status s = lock.Acquire(data_dir); !s.ok()) return s;

  Importer importer(data_dir, options);
  importer.release = std::move(release);
  if (Status s = importer.Parse(input); !s.ok()) return s;
  if (Status s = importer.WriteBlocks(); !s.ok()) return s;
  ImportStats stats;
  importer.Finish(&stats);
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return stats;
}

}  // namespace

Result<ImportStats> ImportOpenMetrics(std::string_view input, const std::string& data_dir,
                                      const ImportOptions& options) {
  return Import(input, data_dir, options, nullptr);
}

Result<ImportStats> ImportOpenMetricsFile(const std::string& path, const std::string& data_dir,
                                          const ImportOptions& options) {
  auto file = MmapFile::Open(path);
  if (!file.ok()) return file.status();
  // madvise takes a mutable pointer; the mapping itself stays read-only.
  auto* data = const_cast<uint8_t*>(file->bytes().data());
  const size_t size = file->bytes().size();
  if (size > 0) madvise(data, size, MADV_SEQUENTIAL);
  // Parsed pages are dropped as the parser moves on (they are clean and
  // file-backed: touching one again just reads it back), so resident memory
  // is that of the imported data rather than of the whole file.
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  uint64_t dropped = 0;
  auto release = [&](uint64_t pos) {
    constexpr uint64_t kKeep = uint64_t{8} << 20;  // well past the current line
    if (pos < dropped + 2 * kKeep) return;
    uint64_t end = (pos - kKeep) / page * page;
    madvise(data + dropped, end - dropped, MADV_DONTNEED);
    dropped = end;
  };
  auto result = Import(std::string_view(reinterpret_cast<const char*>(data), size), data_dir,
                       options, release);
  if (!result.ok()) return result.status().WithContext(path);
  return result;
}

}  // namespace gpumon::cli
