#include "tsdb/wal/checkpoint.h"

#include <cstdio>
#include <filesystem>
#include <system_error>
#include <vector>

#include "tsdb/record/record.h"
#include "tsdb/wal/segment.h"
#include "tsdb/wal/wal_reader.h"
#include "tsdb/wal/wal_writer.h"

namespace gpumon::tsdb::wal {
namespace {

namespace fs = std::filesystem;
constexpr std::string_view kPrefix = "checkpoint.";
constexpr std::string_view kTmpSuffix = ".tmp";

// Checkpoint directory name → index; nullopt for anything else (including
// unfinished .tmp directories).
std::optional<int> ParseCheckpointName(std::string_view name) {
  if (name.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  return ParseSegmentName(name.substr(kPrefix.size()));
}

// Filters one record into `out` (already encoded); false if nothing is left.
class Filter {
 public:
  Filter(const std::function<bool(uint64_t)>& keep, int64_t mint, CheckpointStats* stats)
      : keep_(keep), mint_(mint), stats_(stats) {}

  Result<bool> Apply(std::span<const uint8_t> rec, std::vector<uint8_t>* out) {
    switch (record::PeekType(rec)) {
      case record::RecordType::kSeries: {
        if (Status s = record::DecodeSeries(rec, &series_); !s.ok()) return s;
        size_t n = 0;
        for (size_t i = 0; i < series_.size(); ++i) {
          if (!keep_(series_[i].ref)) continue;
          // Self-move-assignment would empty the labels.
          if (i != n) series_[n] = std::move(series_[i]);
          ++n;
        }
        stats_->series_kept += n;
        stats_->series_dropped += series_.size() - n;
        series_.resize(n);
        if (n == 0) return false;
        record::EncodeSeries(series_, out);
        return true;
      }
      case record::RecordType::kSamples: {
        if (Status s = record::DecodeSamples(rec, &samples_); !s.ok()) return s;
        size_t n = 0;
        for (const auto& s : samples_) {
          if (s.t >= mint_ && keep_(s.ref)) samples_[n++] = s;
        }
        stats_->samples_kept += n;
        stats_->samples_dropped += samples_.size() - n;
        samples_.resize(n);
        if (n == 0) return false;
        record::EncodeSamples(samples_, out);
        return true;
      }
      case record::RecordType::kTombstones: {
        if (Status s = record::DecodeTombstones(rec, &stones_); !s.ok()) return s;
        size_t n = 0;
        for (const auto& s : stones_) {
          if (s.maxt >= mint_ && keep_(s.ref)) stones_[n++] = s;
        }
        stats_->tombstones_kept += n;
        stats_->tombstones_dropped += stones_.size() - n;
        stones_.resize(n);
        if (n == 0) return false;
        record::EncodeTombstones(stones_, out);
        return true;
      }
      case record::RecordType::kInvalid:
        break;
    }
    return Status::Error("unknown record type " + std::to_string(rec.empty() ? -1 : rec[0]));
  }

 private:
  const std::function<bool(uint64_t)>& keep_;
  int64_t mint_;
  CheckpointStats* stats_;
  std::vector<record::RefSeries> series_;
  std::vector<record::RefSample> samples_;
  std::vector<record::RefTombstone> stones_;
};

// Copies the filtered records of one WAL (or checkpoint) into `w`.
Status CopyFiltered(const std::string& dir, ReaderOptions options, Filter& filter, WalWriter& w) {
  Result<std::unique_ptr<WalReader>> reader = WalReader::Open(dir, std::move(options));
  if (!reader.ok()) return reader.status();
  std::vector<uint8_t> out;
  while ((*reader)->Next()) {
    Result<bool> kept = filter.Apply((*reader)->record(), &out);
    if (!kept.ok()) return (*reader)->CorruptionAtRecord(kept.status().message()).ToStatus();
    if (*kept) {
      if (Status s = w.Log(out); !s.ok()) return s;
    }
  }
  return (*reader)->status();
}

}  // namespace

std::string CheckpointName(int index) { return std::string(kPrefix) + SegmentName(index); }

Result<std::optional<CheckpointRef>> LastCheckpoint(const std::string& wal_dir) {
  std::optional<CheckpointRef> best;
  std::error_code ec;
  if (!fs::exists(wal_dir, ec)) return best;
  fs::directory_iterator it(wal_dir, ec);
  if (ec) return Status::Error("wal: cannot list " + wal_dir + ": " + ec.message());
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    std::optional<int> index = ParseCheckpointName(it->path().filename().string());
    if (!index || !it->is_directory(ec)) continue;
    if (!best || *index > best->index) best = CheckpointRef{*index, it->path().string()};
  }
  if (ec) return Status::Error("wal: cannot list " + wal_dir + ": " + ec.message());
  return best;
}

Status DeleteCheckpoints(const std::string& wal_dir, int index) {
  std::error_code ec;
  fs::directory_iterator it(wal_dir, ec);
  if (ec) return Status::Error("wal: cannot list " + wal_dir + ": " + ec.message());
  std::vector<fs::path> doomed;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.substr(0, kPrefix.size()) != kPrefix) continue;
    bool tmp = name.size() > kTmpSuffix.size() &&
               name.compare(name.size() - kTmpSuffix.size(), kTmpSuffix.size(), kTmpSuffix) == 0;
    std::optional<int> i = ParseCheckpointName(name);
    if (tmp || (i && *i < index)) doomed.push_back(it->path());
  }
  for (const auto& p : doomed) {
    fs::remove_all(p, ec);
    if (ec) return Status::Error("wal: cannot delete " + p.string() + ": " + ec.message());
  }
  return SyncDir(wal_dir);
}

Result<CheckpointStats> Checkpoint(const std::string& wal_dir, int first, int last,
                                   const std::function<bool(uint64_t ref)>& keep, int64_t mint) {
  if (last < 0 || last > kMaxSegmentIndex) {
    return Status::Error("wal checkpoint: bad last segment " + std::to_string(last));
  }
  CheckpointStats stats;
  Filter filter(keep, mint, &stats);
  Result<std::optional<CheckpointRef>> previous = LastCheckpoint(wal_dir);
  if (!previous.ok()) return previous.status();
  if (*previous && (*previous)->index >= last) {
    return Status::Error("wal checkpoint: " + (*previous)->dir + " already covers segment " +
                         std::to_string(last));
  }

  const std::string final_dir = wal_dir + "/" + CheckpointName(last);
  const std::string tmp_dir = final_dir + std::string(kTmpSuffix);
  std::error_code ec;
  fs::remove_all(tmp_dir, ec);
  if (ec) return Status::Error("wal checkpoint: cannot clear " + tmp_dir + ": " + ec.message());
  {
    WalOptions options;
    options.sync_policy = SyncPolicy::kNever;  // Close() syncs once at the end
    Result<std::unique_ptr<WalWriter>> w = WalWriter::Open(tmp_dir, options);
    if (!w.ok()) return w.status();
    Status s;
    if (*previous) s = CopyFiltered((*previous)->dir, {}, filter, **w);
    if (s.ok()) {
      ReaderOptions from;
      // Segments the previous checkpoint covers are in it already.
      from.first_segment = *previous ? std::max(first, (*previous)->index + 1) : first;
      from.last_segment = last;
      s = CopyFiltered(wal_dir, from, filter, **w);
    }
    if (s.ok()) s = (*w)->Close();
    if (!s.ok()) {
      w->reset();
      fs::remove_all(tmp_dir, ec);
      return s.WithContext("wal checkpoint");
    }
  }
  if (Status s = SyncDir(tmp_dir); !s.ok()) return s;
  fs::rename(tmp_dir, final_dir, ec);
  if (ec) return Status::Error("wal checkpoint: cannot rename " + tmp_dir + ": " + ec.message());
  if (Status s = SyncDir(wal_dir); !s.ok()) return s;
  return stats;
}

}  // namespace gpumon::tsdb::wal
