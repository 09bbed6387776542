#include "tsdb/wal/wal_writer.h"

#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <system_error>
#include <utility>

#include "common/mmap_file.h"
#include "tsdb/wal/frame.h"
#include "tsdb/wal/segment.h"

namespace gpumon::tsdb::wal {
namespace {

constexpr uint64_t kAll = std::numeric_limits<uint64_t>::max();

Status Errno(const std::string& what, const std::string& path) {
  return Status::Error("wal: " + what + " " + path + ": " + std::strerror(errno));
}

Status TruncateTo(const std::string& path, uint64_t size) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return Errno("cannot open", path);
  Status s;
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0 || ::fdatasync(fd) != 0) {
    s = Errno("cannot truncate torn tail of", path);
  }
  ::close(fd);
  return s;
}

// What Open() finds at the end of the newest segment.
struct TailCheck {
  bool reuse = false;  // no records left: rewrite it instead of starting a new one
  std::optional<TornTail> torn;
};

Result<TailCheck> CheckNewestSegment(const SegmentFile& seg) {
  TailCheck check;
  if (seg.size < kSegmentHeaderSize) {
    check.reuse = true;  // created by a crash before its header was written
    return check;
  }
  Result<MmapFile> file = MmapFile::Open(seg.path);
  if (!file.ok()) return Status::Error("wal: " + file.status().message());
  SegmentDecoder decoder(file->bytes(), /*last=*/true);
  FrameResult r;
  bool any = false;
  while ((r = decoder.Next()) == FrameResult::kRecord) any = true;
  if (r == FrameResult::kCorrupt) {
    return Status::Error(
        Corruption{seg.index, seg.path, decoder.offset(), decoder.reason()}.ToString() +
        " (repair the WAL before appending)");
  }
  if (r == FrameResult::kTorn) {
    check.torn = TornTail{seg.index, seg.path, decoder.offset(), seg.size - decoder.offset(),
                          decoder.reason()};
  }
  check.reuse = !any;
  return check;
}

}  // namespace

struct WalWriter::File {
  explicit File(int f) : fd(f) {}
  ~File() { ::close(fd); }
  int fd;
};

WalWriter::WalWriter(std::string dir, WalOptions options)
    : dir_(std::move(dir)), options_(options) {}

WalWriter::~WalWriter() { (void)Close(); }

Result<std::unique_ptr<WalWriter>> WalWriter::Open(const std::string& dir, WalOptions options) {
  if (options.segment_size < kSegmentHeaderSize + kFrameHeaderSize) {
    return Status::Error("wal: segment size " + std::to_string(options.segment_size) +
                         " is too small");
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::Error("wal: cannot create " + dir + ": " + ec.message());
  Result<std::vector<SegmentFile>> segments = ListSegments(dir);
  if (!segments.ok()) return segments.status();

  std::unique_ptr<WalWriter> w(new WalWriter(dir, options));
  int next = 0;
  bool reuse = false;
  if (!segments->empty()) {
    const SegmentFile& newest = segments->back();
    Result<TailCheck> check = CheckNewestSegment(newest);
    if (!check.ok()) return check.status();
    if (check->torn && !check->reuse) {
      // Never append behind a torn record: it would turn into corruption in
      // the middle of the log.
      if (Status s = TruncateTo(newest.path, check->torn->offset); !s.ok()) return s;
    }
    w->repaired_tail_ = check->torn;
    reuse = check->reuse;
    next = reuse ? newest.index : newest.index + 1;
  }
  if (next > kMaxSegmentIndex) return Status::Error("wal: segment index space exhausted");
  {
    std::lock_guard<std::mutex> lock(w->mu_);
    if (Status s = w->OpenNext(next, reuse); !s.ok()) return s;
  }
  if (options.sync_policy == SyncPolicy::kBatch) {
    w->sync_thread_ = std::thread([p = w.get()] { p->SyncLoop(); });
  }
  return w;
}

Status WalWriter::OpenNext(int index, bool reuse_existing) {
  std::string path = SegmentPath(dir_, index);
  int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (reuse_existing ? O_TRUNC : O_EXCL);
  int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) return Errno("cannot create segment", path);
  auto file = std::make_shared<File>(fd);
  // A segment that could not be set up (typically ENOSPC) is removed again,
  // so the next attempt can create it: a full disk must not break the log
  // for good once space is freed.
  auto discard = [&](Status s) {
    if (!reuse_existing) ::unlink(path.c_str());
    return s;
  };
  uint8_t header[kSegmentHeaderSize];
  WriteSegmentHeader(header);
  if (ssize_t w = ::pwrite(fd, header, sizeof header, 0);
      w != static_cast<ssize_t>(sizeof header)) {
    if (w >= 0) errno = ENOSPC;  // a short write: the disk is full
    return discard(Errno("cannot write header of", path));
  }
  // The new name must survive power loss, or its records would vanish with
  // it even after fdatasync.
  if (Status s = SyncDir(dir_); !s.ok()) return discard(s);
  file_ = std::move(file);
  segment_ = index;
  segment_bytes_ = kSegmentHeaderSize;
  written_ += kSegmentHeaderSize;
  ++stats_.segments_created;
  return Status::Ok();
}

Status WalWriter::CutLocked() {
  if (segment_ >= kMaxSegmentIndex) return Status::Error("wal: segment index space exhausted");
  // Finished segments are always durable, so only the newest can be torn.
  if (::fdatasync(file_->fd) != 0) {
    broken_ = Errno("fdatasync failed on", SegmentPath(dir_, segment_));
    return broken_;
  }
  ++stats_.syncs;
  // If the next segment cannot be created the current one stays current
  // (complete and durable), and the next write tries the cut again.
  return OpenNext(segment_ + 1, false);
}

Status WalWriter::WriteLocked(uint64_t bytes) {
  // pwritev may write less than asked; walk the vector forward.
  std::vector<struct iovec>& iov = iov_;
  const int count = static_cast<int>(iov.size());
  uint64_t start = segment_bytes_;
  uint64_t done = 0;
  int first = 0;
  while (done < bytes) {
    int n = std::min(count - first, IOV_MAX);
    ssize_t w = ::pwritev(file_->fd, &iov[first], n, static_cast<off_t>(start + done));
    if (w < 0) {
      if (errno == EINTR) continue;
      Status err = Errno("write failed on", SegmentPath(dir_, segment_));
      // Take back the part that made it, so the segment ends on a frame.
      if (::ftruncate(file_->fd, static_cast<off_t>(start)) != 0) broken_ = err;
      return err;
    }
    done += static_cast<uint64_t>(w);
    size_t left = static_cast<size_t>(w);
    while (first < count && left >= iov[first].iov_len) {
      left -= iov[first].iov_len;
      ++first;
    }
    if (first < count && left > 0) {
      iov[first].iov_base = static_cast<uint8_t*>(iov[first].iov_base) + left;
      iov[first].iov_len -= left;
    }
  }
  segment_bytes_ += bytes;
  written_ += bytes;
  return Status::Ok();
}

Status WalWriter::Log(std::span<const uint8_t> record) {
  std::span<const uint8_t> one[1] = {record};
  return Log(std::span<const std::span<const uint8_t>>(one));
}

Status WalWriter::Log(std::span<const std::span<const uint8_t>> records) {
  for (const auto& r : records) {
    if (r.size() > kMaxRecordSize) {
      return Status::Error("wal: record of " + std::to_string(r.size()) +
                           " bytes exceeds the maximum of " + std::to_string(kMaxRecordSize));
    }
  }
  // Checksums are computed before taking the lock so concurrent committers
  // only serialize on the write itself.
  thread_local std::vector<uint8_t> headers;
  headers.resize(records.size() * kFrameHeaderSize);
  for (size_t i = 0; i < records.size(); ++i) {
    EncodeFrameHeader(records[i], &headers[i * kFrameHeaderSize]);
  }

  uint64_t end;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return Status::Error("wal: writer is closed");
    if (!broken_.ok()) return broken_;
    iov_.clear();
    uint64_t pending = 0;
    auto flush = [&]() -> Status {
      if (pending == 0) return Status::Ok();
      Status s = WriteLocked(pending);
      if (s.ok()) stats_.bytes += pending;
      iov_.clear();
      pending = 0;
      return s;
    };
    for (size_t i = 0; i < records.size(); ++i) {
      const uint64_t frame = kFrameHeaderSize + records[i].size();
      const uint64_t used = segment_bytes_ + pending;
      if (used + frame > options_.segment_size && used > kSegmentHeaderSize) {
        if (Status s = flush(); !s.ok()) return s;
        if (Status s = CutLocked(); !s.ok()) return s;
      }
      iov_.push_back({&headers[i * kFrameHeaderSize], kFrameHeaderSize});
      if (!records[i].empty()) {
        iov_.push_back({const_cast<uint8_t*>(records[i].data()), records[i].size()});
      }
      pending += frame;
    }
    if (Status s = flush(); !s.ok()) return s;
    stats_.records += records.size();
    end = written_;
  }
  if (options_.sync_policy == SyncPolicy::kAlways) return SyncTo(end);
  return Status::Ok();
}

Status WalWriter::SyncTo(uint64_t target) {
  std::lock_guard<std::mutex> sync_lock(sync_mu_);
  if (synced_ >= target) return Status::Ok();  // someone else's fdatasync covered us
  std::shared_ptr<File> file;
  uint64_t end;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!broken_.ok()) return broken_;
    if (!file_) return Status::Error("wal: writer is closed");
    file = file_;
    end = written_;
  }
  if (end <= synced_) return Status::Ok();
  // Earlier segments were fdatasynced when cut, so syncing the current file
  // makes everything up to `end` durable.
  if (::fdatasync(file->fd) != 0) {
    std::lock_guard<std::mutex> lock(mu_);
    broken_ = Errno("fdatasync failed in", dir_);
    return broken_;
  }
  synced_ = end;
  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.syncs;
  return Status::Ok();
}

Status WalWriter::Sync() { return SyncTo(kAll); }

void WalWriter::SyncLoop() {
  std::unique_lock<std::mutex> lock(loop_mu_);
  while (!stop_) {
    loop_cv_.wait_for(lock, options_.sync_interval, [this] { return stop_; });
    if (stop_) break;
    lock.unlock();
    (void)SyncTo(kAll);  // a failure breaks the writer; Log() reports it
    lock.lock();
  }
}

Status WalWriter::Cut() {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return Status::Error("wal: writer is closed");
  if (!broken_.ok()) return broken_;
  return CutLocked();
}

Status WalWriter::TruncateBefore(int segment) {
  std::lock_guard<std::mutex> lock(mu_);
  if (segment > segment_) {
    return Status::Error("wal: cannot truncate before segment " + std::to_string(segment) +
                         ": the current segment is " + std::to_string(segment_));
  }
  Result<std::vector<SegmentFile>> segments = ListSegments(dir_);
  if (!segments.ok()) return segments.status();
  // Oldest first, so a crash midway leaves a contiguous sequence.
  for (const SegmentFile& s : *segments) {
    if (s.index >= segment) break;
    if (::unlink(s.path.c_str()) != 0 && errno != ENOENT) return Errno("cannot delete", s.path);
  }
  return SyncDir(dir_);
}

Status WalWriter::Close() {
  {
    std::lock_guard<std::mutex> lock(loop_mu_);
    stop_ = true;
  }
  loop_cv_.notify_all();
  if (sync_thread_.joinable()) sync_thread_.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return Status::Ok();
  }
  Status s = SyncTo(kAll);
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  file_.reset();
  return s;
}

int WalWriter::CurrentSegment() const {
  std::lock_guard<std::mutex> lock(mu_);
  return segment_;
}

WalWriterStats WalWriter::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace gpumon::tsdb::wal
