#include "tsdb/db/db.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "common/log.h"
#include "tsdb/block/block_writer.h"
#include "tsdb/db/merge_querier.h"
#include "tsdb/record/record.h"
#include "tsdb/wal/checkpoint.h"
#include "tsdb/wal/repair.h"
#include "tsdb/wal/segment.h"

namespace gpumon::tsdb::db {
namespace fs = std::filesystem;

// Logs the head's commits to the WAL (the head's WalSink).
class DB::WalAdapter : public head::WalSink {
 public:
  explicit WalAdapter(wal::WalWriter* wal) : wal_(wal) {}
  Status LogSeries(std::span<const record::RefSeries> series) override {
    buf_.clear();
    record::EncodeSeries(series, &buf_);
    return wal_->Log(buf_);
  }
  Status LogSamples(std::span<const record::RefSample> samples) override {
    buf_.clear();
    record::EncodeSamples(samples, &buf_);
    return wal_->Log(buf_);
  }
  Status LogTombstones(std::span<const record::RefTombstone> tombstones) override {
    buf_.clear();
    record::EncodeTombstones(tombstones, &buf_);
    return wal_->Log(buf_);
  }

 private:
  wal::WalWriter* wal_;
  std::vector<uint8_t> buf_;  // calls are serialized by the head's commit lock
};

DB::DB(std::string dir, DbOptions options) : dir_(std::move(dir)), opts_(std::move(options)) {}

Result<std::unique_ptr<DB>> DB::Open(const std::string& dir, DbOptions options) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::Error("cannot create data directory " + dir + ": " + ec.message());
  std::unique_ptr<DB> db(new DB(dir, std::move(options)));
  db->lock_fd_ = ::open((dir + "/lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (db->lock_fd_ < 0 || flock(db->lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    return Status::Error("data directory " + dir + " is in use by another process (lock held)");
  }
  // Blocks whose creation was interrupted.
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() && name.ends_with(block::kTmpForCreationSuffix)) {
      fs::remove_all(entry.path(), ec);
    }
  }
  if (Status s = db->LoadBlocks(); !s.ok()) return s;
  head::HeadOptions ho;
  ho.chunk_range_ms = db->opts_.block_range_ms;
  ho.samples_per_chunk = db->opts_.samples_per_chunk;
  ho.ooo_window_ms = db->opts_.ooo_window_ms;
  db->head_ = std::make_unique<head::Head>(ho);
  int64_t min_valid = kMinTime;
  for (const auto& b : db->blocks_) {
    if (b->meta().downsample_resolution_ms == 0)
      min_valid = std::max(min_valid, b->meta().max_time);
  }
  db->head_->SetMinValidTime(min_valid);
  if (Status s = db->Replay(); !s.ok()) return s;
  auto writer = wal::WalWriter::Open(dir + "/wal", db->opts_.wal);
  if (!writer.ok()) return writer.status();
  db->wal_ = std::move(writer).value();
  db->wal_adapter_ = std::make_unique<WalAdapter>(db->wal_.get());
  db->head_->SetWalSink(db->wal_adapter_.get());
  if (db->opts_.maintain_interval_ms > 0) {
    db->loop_ = std::thread([d = db.get()] { d->MaintainLoop(); });
  }
  return db;
}

DB::~DB() {
  {
    std::lock_guard<std::mutex> lock(loop_mu_);
    stop_ = true;
  }
  loop_cv_.notify_all();
  if (loop_.joinable()) loop_.join();
  if (head_) head_->SetWalSink(nullptr);
  if (wal_) wal_->Close();
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

Status DB::LoadBlocks() {
  auto dirs = block::ListBlockDirs(dir_);
  if (!dirs.ok()) return dirs.status();
  std::vector<std::shared_ptr<block::Block>> blocks;
  for (const auto& d : *dirs) {
    auto b = block::Block::Open(d);
    if (!b.ok()) return b.status().WithContext("opening block");
    blocks.push_back(std::move(b).value());
  }
  std::sort(blocks.begin(), blocks.end(),
            [](const auto& a, const auto& b) { return a->meta().min_time < b->meta().min_time; });
  std::unique_lock<std::shared_mutex> lock(blocks_mu_);
  blocks_ = std::move(blocks);
  return Status::Ok();
}

Status DB::Replay() {
  const std::string wal_dir = dir_ + "/wal";
  if (!fs::exists(wal_dir)) return Status::Ok();
  auto cp = wal::LastCheckpoint(wal_dir);
  if (!cp.ok()) return cp.status();
  std::vector<record::RefSeries> series;
  std::vector<record::RefSample> samples;
  std::vector<record::RefTombstone> tombstones;
  // Replays one WAL directory; returns the corruption found, if any.
  auto replay = [&](const std::string& path,
                    wal::ReaderOptions ro) -> Result<std::optional<wal::Corruption>> {
    ro.progress = opts_.replay_progress;
    auto reader = wal::WalReader::Open(path, ro);
    if (!reader.ok()) return reader.status();
    wal::WalReader& r = **reader;
    while (r.Next()) {
      auto rec = r.record();
      Status s;
      switch (record::PeekType(rec)) {
        case record::RecordType::kSeries:
          s = record::DecodeSeries(rec, &series);
          for (size_t i = 0; s.ok() && i < series.size(); ++i) {
            s = head_->ReplaySeries(series[i].ref, series[i].labels);
          }
          break;
        case record::RecordType::kSamples:
          s = record::DecodeSamples(rec, &samples);
          if (s.ok()) s = head_->ReplaySamples(samples);
          break;
        case record::RecordType::kTombstones:
          s = record::DecodeTombstones(rec, &tombstones);
          if (s.ok()) s = head_->ReplayTombstones(tombstones);
          break;
        default:
          s = Status::Error("unknown record type");
      }
      ++replay_stats_.wal_replayed_records;
      if (!s.ok()) return std::optional<wal::Corruption>(r.CorruptionAtRecord(s.message()));
    }
    if (r.torn_tail()) LogWarn("WAL: dropped a torn last record: " + r.torn_tail()->ToString());
    return r.corruption();
  };
  wal::ReaderOptions ro;
  if (cp->has_value()) {
    auto c = replay((*cp)->dir, {});
    if (!c.ok()) return c.status();
    if (c->has_value()) {
      return Status::Error("WAL checkpoint " + (*cp)->dir + " is damaged: " + (*c)->ToString());
    }
    ro.first_segment = (*cp)->index + 1;
    auto segs = wal::ListSegments(wal_dir);
    if (!segs.ok()) return segs.status();
    bool any_after = false;
    for (const auto& s : *segs) any_after |= s.index > (*cp)->index;
    if (!any_after) return Status::Ok();
  }
  auto c = replay(wal_dir, ro);
  if (!c.ok()) return c.status();
  if (c->has_value()) {
    replay_stats_.wal_repair = (*c)->ToString();
    LogError("WAL: " + replay_stats_.wal_repair +
             "; keeping every record before it and truncating the rest");
    if (Status s = wal::Repair(wal_dir, **c); !s.ok()) return s;
  }
  return Status::Ok();
}

std::unique_ptr<tsdb::Querier> DB::NewQuerier(int64_t mint, int64_t maxt) const {
  std::vector<std::unique_ptr<tsdb::Querier>> qs;
  {
    std::shared_lock<std::shared_mutex> lock(blocks_mu_);
    for (const auto& b : blocks_) {
      const auto& m = b->meta();
      if (m.downsample_resolution_ms != 0) continue;
      if (m.max_time <= mint || m.min_time > maxt) continue;
      qs.push_back(b->NewQuerier(mint, maxt));
    }
  }
  qs.push_back(head_->Querier(mint, maxt));
  if (qs.size() == 1) return std::move(qs.front());
  return std::make_unique<MergeQuerier>(std::move(qs));
}

std::unique_ptr<tsdb::Querier> DB::NewQuerierAt(int64_t resolution_ms, int64_t mint,
                                                int64_t maxt) const {
  if (resolution_ms == 0) return NewQuerier(mint, maxt);
  std::vector<std::unique_ptr<tsdb::Querier>> qs;
  std::shared_lock<std::shared_mutex> lock(blocks_mu_);
  for (const auto& b : blocks_) {
    const auto& m = b->meta();
    if (m.downsample_resolution_ms != resolution_ms) continue;
    if (m.max_time <= mint || m.min_time > maxt) continue;
    qs.push_back(b->NewQuerier(mint, maxt));
  }
  return std::make_unique<MergeQuerier>(std::move(qs));
}

std::vector<int64_t> DB::Resolutions() const {
  std::vector<int64_t> out = {0};
  std::shared_lock<std::shared_mutex> lock(blocks_mu_);
  for (const auto& b : blocks_) {
    int64_t r = b->meta().downsample_resolution_ms;
    if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::shared_ptr<block::Block>> DB::blocks() const {
  std::shared_lock<std::shared_mutex> lock(blocks_mu_);
  return blocks_;
}

Status DB::Delete(std::span<const Matcher> matchers, int64_t mint, int64_t maxt) {
  for (const auto& b : blocks()) {
    const auto& m = b->meta();
    if (m.max_time <= mint || m.min_time > maxt) continue;
    if (Status s = b->Delete(matchers, mint, maxt); !s.ok()) return s;
  }
  return head_->Delete(matchers, mint, maxt);
}

Status DB::PersistHead(int64_t mint, int64_t maxt) {
  block::BlockWriterOptions bo;
  bo.min_time = mint;
  bo.max_time = maxt;
  auto writer = block::BlockWriter::Create(dir_, bo);
  if (!writer.ok()) return writer.status();
  std::vector<block::ChunkData> chunks;
  Status s = head_->ForEachSeriesInRange(
      mint, maxt,
      [&](uint64_t, const Labels& labels, std::span<const head::ChunkData> in) -> Status {
        chunks.clear();
        for (const auto& c : in) chunks.push_back(block::ChunkData{c.mint, c.maxt, c.bytes});
        return (*writer)->AddSeries(labels, chunks);
      });
  if (!s.ok()) return s;
  if ((*writer)->meta().stats.num_samples == 0 && head_->NumSeries() == 0) return Status::Ok();
  auto block_dir = (*writer)->Finish();
  if (!block_dir.ok()) return block_dir.status();
  auto b = block::Block::Open(*block_dir);
  if (!b.ok()) return b.status();
  {
    std::unique_lock<std::shared_mutex> lock(blocks_mu_);
    blocks_.push_back(std::move(b).value());
    std::sort(blocks_.begin(), blocks_.end(),
              [](const auto& x, const auto& y) { return x->meta().min_time < y->meta().min_time; });
  }
  if (Status t = head_->Truncate(maxt); !t.ok()) return t;
  return TruncateWal(maxt);
}

Status DB::TruncateWal(int64_t mint) {
  const std::string wal_dir = dir_ + "/wal";
  if (Status s = wal_->Cut(); !s.ok()) return s;
  int last = wal_->CurrentSegment() - 1;
  auto segs = wal::ListSegments(wal_dir);
  if (!segs.ok()) return segs.status();
  if (segs->empty() || segs->front().index > last) return Status::Ok();
  int first = segs->front().index;
  auto stats = wal::Checkpoint(
      wal_dir, first, last, [this](uint64_t ref) { return head_->HasSeries(ref); }, mint);
  if (!stats.ok()) return stats.status().WithContext("WAL checkpoint");
  if (Status s = wal_->TruncateBefore(last + 1); !s.ok()) return s;
  return wal::DeleteCheckpoints(wal_dir, last);
}

Status DB::FlushHead() {
  std::lock_guard<std::mutex> lock(maintain_mu_);
  const int64_t range = opts_.block_range_ms;
  while (head_->NumSeries() > 0 && head_->MinTime() <= head_->MaxTime()) {
    int64_t mint = head_->MinTime();
    int64_t start = mint - (((mint % range) + range) % range);
    if (Status s = PersistHead(start, start + range); !s.ok()) return s;
    if (head_->MinTime() < start + range) break;  // nothing moved: avoid looping
  }
  return Status::Ok();
}

Status DB::Maintain() {
  std::lock_guard<std::mutex> lock(maintain_mu_);
  const int64_t range = opts_.block_range_ms;
  // Persist while the head spans more than 1.5 block ranges, keeping the
  // newest half range writable for late samples, as Prometheus does.
  while (head_->NumSeries() > 0 && head_->MinTime() <= head_->MaxTime() &&
         head_->MaxTime() - head_->MinTime() > range * 3 / 2) {
    int64_t mint = head_->MinTime();
    int64_t start = mint - (((mint % range) + range) % range);
    if (Status s = PersistHead(start, start + range); !s.ok()) {
      maintain_failures_.fetch_add(1, std::memory_order_relaxed);
      return s;
    }
    head_blocks_written_.fetch_add(1, std::memory_order_relaxed);
  }
  Status s = CompactBlocks();
  if (s.ok() && opts_.downsample) s = DownsampleBlocks();
  if (s.ok()) s = ApplyRetention();
  if (!s.ok()) maintain_failures_.fetch_add(1, std::memory_order_relaxed);
  return s;
}

void DB::MaintainLoop() {
  std::unique_lock<std::mutex> lock(loop_mu_);
  while (!loop_cv_.wait_for(lock, std::chrono::milliseconds(opts_.maintain_interval_ms),
                            [this] { return stop_; })) {
    lock.unlock();
    if (Status s = Maintain(); !s.ok()) LogError("tsdb maintenance: " + s.message());
    lock.lock();
  }
}

Status DB::ApplyRetention() {
  std::vector<std::shared_ptr<block::Block>> doomed;
  {
    std::unique_lock<std::shared_mutex> lock(blocks_mu_);
    int64_t newest = head_->MaxTime();
    for (const auto& b : blocks_) newest = std::max(newest, b->meta().max_time);
    auto expired = [&](const block::BlockMeta& m) {
      int64_t keep = m.downsample_resolution_ms == 0        ? opts_.retention_ms
                     : m.downsample_resolution_ms == 300000 ? opts_.retention_5m_ms
                                                            : opts_.retention_1h_ms;
      return keep > 0 && m.max_time < newest - keep;
    };
    std::vector<std::shared_ptr<block::Block>> kept;
    for (auto& b : blocks_) (expired(b->meta()) ? doomed : kept).push_back(b);
    if (opts_.retention_bytes > 0) {
      uint64_t total = 0;
      for (const auto& b : kept) total += b->SizeBytes();
      // Oldest first (kept is sorted by min_time).
      while (total > opts_.retention_bytes && !kept.empty()) {
        total -= kept.front()->SizeBytes();
        doomed.push_back(kept.front());
        kept.erase(kept.begin());
      }
    }
    blocks_ = std::move(kept);
  }
  for (const auto& b : doomed) {
    std::error_code ec;
    // Queriers holding the block keep its mappings valid after unlinking.
    fs::remove_all(b->dir(), ec);
    if (ec) return Status::Error("retention: cannot delete " + b->dir() + ": " + ec.message());
    LogInfo("retention: deleted block " + b->dir());
  }
  return Status::Ok();
}

DbStats DB::Stats() const {
  DbStats s = replay_stats_;
  s.head = head_->Stats();
  for (const auto& b : blocks()) {
    ++s.blocks;
    s.block_bytes += b->SizeBytes();
    s.block_samples += b->meta().stats.num_samples;
    s.block_series += b->meta().stats.num_series;
  }
  return s;
}

Status DB::Snapshot(const std::string& dir, bool with_head) {
  namespace fs = std::filesystem;
  // Maintenance replaces and deletes blocks; hold it off while linking.
  std::lock_guard<std::mutex> lock(maintain_mu_);
  std::error_code ec;
  for (const auto& b : blocks()) {
    const fs::path src(b->dir());
    const fs::path dst = fs::path(dir) / src.filename();
    fs::create_directories(dst, ec);
    if (ec) return Status::Error("snapshot: create " + dst.string() + ": " + ec.message());
    for (auto it = fs::recursive_directory_iterator(src, ec); !ec && it != fs::end(it);
         it.increment(ec)) {
      const fs::path to = dst / fs::relative(it->path(), src);
      if (it->is_directory()) {
        fs::create_directories(to, ec);
      } else {
        fs::create_hard_link(it->path(), to, ec);
      }
      if (ec) return Status::Error("snapshot: link " + it->path().string() + ": " + ec.message());
    }
    if (ec) return Status::Error("snapshot: read " + src.string() + ": " + ec.message());
  }
  if (!with_head) return Status::Ok();
  const int64_t mint = head_->MinTime(), maxt = head_->MaxTime();
  if (head_->NumSeries() == 0 || mint > maxt) return Status::Ok();
  // One block over the head's whole time range (maxt is exclusive).
  block::BlockWriterOptions bo;
  bo.min_time = mint;
  bo.max_time = maxt + 1;
  auto writer = block::BlockWriter::Create(dir, bo);
  if (!writer.ok()) return writer.status().WithContext("snapshot: head block");
  std::vector<block::ChunkData> chunks;
  Status st = head_->ForEachSeriesInRange(
      bo.min_time, bo.max_time,
      [&](uint64_t, const Labels& labels, std::span<const head::ChunkData> in) -> Status {
        chunks.clear();
        for (const auto& c : in) chunks.push_back(block::ChunkData{c.mint, c.maxt, c.bytes});
        return (*writer)->AddSeries(labels, chunks);
      });
  if (!st.ok()) return st.WithContext("snapshot: head block");
  auto done = (*writer)->Finish();
  if (!done.ok()) return done.status().WithContext("snapshot: head block");
  return Status::Ok();
}

}  // namespace gpumon::tsdb::db
