#include "remote/queue/disk_queue.h"

#include <fcntl.h>
#include <snappy.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>

#include "common/log.h"
#include "tsdb/wal/frame.h"

namespace gpumon::remote {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[4] = {'G', 'R', 'W', 'Q'};
constexpr uint8_t kVersion = 1;
constexpr uint64_t kSegmentHeaderSize = 8;
constexpr uint64_t kFrameHeaderSize = 8;  // u32 length, u32 crc32(payload)
constexpr uint32_t kMaxRecordBytes = 256u << 20;
constexpr char kCursorFile[] = "cursor";
constexpr size_t kCursorSize = 20;  // u64 segment, u64 offset, u32 crc

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

void PutU32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
void PutU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
void PutUvarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
void PutString(std::string& out, std::string_view s) {
  PutUvarint(out, s.size());
  out.append(s);
}
uint32_t GetU32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}
uint64_t GetU64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}
uint32_t Checksum(std::string_view bytes) {
  return tsdb::wal::Crc32(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
}

// Cursor over a decoded record payload; any overrun marks it failed.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  bool failed() const { return failed_; }
  bool done() const { return pos_ == data_.size(); }
  uint64_t Uvarint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= data_.size()) break;
      uint8_t b = static_cast<uint8_t>(data_[pos_++]);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    failed_ = true;
    return 0;
  }
  std::string_view Bytes(uint64_t n) {
    if (failed_ || n > data_.size() - pos_) {
      failed_ = true;
      return {};
    }
    std::string_view out = data_.substr(pos_, n);
    pos_ += n;
    return out;
  }
  uint64_t U64() {
    std::string_view b = Bytes(8);
    return failed_ ? 0 : GetU64(b.data());
  }

 private:
  std::string_view data_;
  size_t pos_ = 0;
  bool failed_ = false;
};

// Payload (before snappy): uvarint count, then per sample uvarint label
// count, (name, value) strings, u64 timestamp, u64 value bits.
std::string EncodeRecord(std::span<const QueuedSample> samples) {
  std::string raw;
  PutUvarint(raw, samples.size());
  for (const QueuedSample& s : samples) {
    PutUvarint(raw, s.labels.size());
    for (const Label& l : s.labels) {
      PutString(raw, l.name);
      PutString(raw, l.value);
    }
    PutU64(raw, static_cast<uint64_t>(s.t));
    PutU64(raw, std::bit_cast<uint64_t>(s.v));
  }
  std::string payload;
  snappy::Compress(raw.data(), raw.size(), &payload);
  std::string frame;
  frame.reserve(kFrameHeaderSize + payload.size());
  PutU32(frame, static_cast<uint32_t>(payload.size()));
  PutU32(frame, Checksum(payload));
  frame += payload;
  return frame;
}

bool DecodeRecord(std::string_view payload, std::vector<QueuedSample>* out) {
  std::string raw;
  if (!snappy::Uncompress(payload.data(), payload.size(), &raw)) return false;
  Reader r(raw);
  uint64_t n = r.Uvarint();
  // Each sample takes at least 17 bytes; bounds a hostile count.
  if (r.failed() || n > raw.size() / 17) return false;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t nl = r.Uvarint();
    if (r.failed() || nl > raw.size()) return false;
    std::vector<Label> labels;
    labels.reserve(nl);
    for (uint64_t j = 0; j < nl; ++j) {
      std::string_view name = r.Bytes(r.Uvarint());
      std::string_view value = r.Bytes(r.Uvarint());
      if (r.failed()) return false;
      labels.push_back({std::string(name), std::string(value)});
    }
    QueuedSample s;
    s.t = static_cast<int64_t>(r.U64());
    s.v = std::bit_cast<double>(r.U64());
    if (r.failed()) return false;
    // Written sorted; re-sorting guards against a damaged-but-matching
    // record breaking the Labels invariant.
    s.labels = Labels::FromUnsorted(std::move(labels));
    out->push_back(std::move(s));
  }
  return r.done();
}

Status WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::Error(Errno("write"));
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

// Reads exactly n bytes at offset; false on a short read.
bool ReadAt(int fd, uint64_t offset, size_t n, std::string* out) {
  out->resize(n);
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::pread(fd, out->data() + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    done += static_cast<size_t>(r);
  }
  return true;
}

// Outcome of reading the record at an offset of an open segment.
enum class FrameResult { kOk, kEnd, kDamaged };

FrameResult ReadFrame(int fd, uint64_t offset, uint64_t file_size, std::vector<QueuedSample>* out,
                      uint64_t* next, std::string* why) {
  if (offset >= file_size) return FrameResult::kEnd;
  std::string header;
  if (file_size - offset < kFrameHeaderSize || !ReadAt(fd, offset, kFrameHeaderSize, &header)) {
    *why = "record header cut short";
    return FrameResult::kDamaged;
  }
  uint32_t len = GetU32(header.data());
  uint32_t crc = GetU32(header.data() + 4);
  if (len > kMaxRecordBytes || len > file_size - offset - kFrameHeaderSize) {
    *why = "record length " + std::to_string(len) + " runs past the end of the file";
    return FrameResult::kDamaged;
  }
  std::string payload;
  if (!ReadAt(fd, offset + kFrameHeaderSize, len, &payload)) {
    *why = "record cut short";
    return FrameResult::kDamaged;
  }
  if (Checksum(payload) != crc) {
    *why = "checksum mismatch";
    return FrameResult::kDamaged;
  }
  size_t before = out->size();
  if (!DecodeRecord(payload, out)) {
    out->resize(before);
    *why = "undecodable record";
    return FrameResult::kDamaged;
  }
  *next = offset + kFrameHeaderSize + len;
  return FrameResult::kOk;
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

bool IsSegmentName(const std::string& name) {
  return name.size() == 8 &&
         std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

DiskQueue::DiskQueue(std::string dir, DiskQueueOptions options)
    : dir_(std::move(dir)), options_(std::move(options)) {}

DiskQueue::~DiskQueue() {
  if (head_fd_ >= 0) ::close(head_fd_);
}

std::string DiskQueue::SegmentPath(uint64_t index) const {
  char name[32];
  std::snprintf(name, sizeof name, "%08llu", static_cast<unsigned long long>(index));
  return dir_ + "/" + name;
}

int64_t DiskQueue::Now() const {
  if (options_.now_ms) return options_.now_ms();
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Result<std::unique_ptr<DiskQueue>> DiskQueue::Open(const std::string& dir,
                                                   DiskQueueOptions options) {
  std::unique_ptr<DiskQueue> q(new DiskQueue(dir, std::move(options)));
  Status s = q->Recover();
  if (!s.ok()) return s.WithContext("remote-write queue " + dir);
  return q;
}

Status DiskQueue::Recover() {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return Status::Error("cannot create directory: " + ec.message());

  // The cursor; missing or damaged means "start from the oldest segment".
  std::optional<QueuePosition> cursor;
  {
    Fd fd(::open((dir_ + "/" + kCursorFile).c_str(), O_RDONLY | O_CLOEXEC));
    std::string buf;
    if (fd.get() >= 0) {
      if (ReadAt(fd.get(), 0, kCursorSize, &buf) &&
          Checksum(std::string_view(buf).substr(0, 16)) == GetU32(buf.data() + 16)) {
        cursor = QueuePosition{GetU64(buf.data()), GetU64(buf.data() + 8)};
      } else {
        std::string w =
            dir_ + "/" + kCursorFile + ": damaged cursor; resending from the oldest segment";
        LogWarn("remote-write queue: " + w);
        warnings_.push_back(w);
      }
    }
  }

  std::vector<uint64_t> indexes;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    std::string name = entry.path().filename().string();
    if (IsSegmentName(name)) indexes.push_back(std::stoull(name));
  }
  if (ec) return Status::Error("cannot list directory: " + ec.message());
  std::sort(indexes.begin(), indexes.end());

  for (uint64_t index : indexes) {
    // Segments before the cursor were delivered; only a crash between the
    // cursor write and the unlink leaves them.
    if (cursor && index < cursor->segment) {
      ::unlink(SegmentPath(index).c_str());
      continue;
    }
    Segment seg;
    seg.index = index;
    Status s = ScanSegment(seg, cursor.value_or(QueuePosition{}));
    if (!s.ok()) return s;
    if (seg.bytes == 0) continue;  // removed as unusable
    // A cursor beyond a truncated tail falls back to the new end.
    if (cursor && cursor->segment == index) cursor->offset = std::min(cursor->offset, seg.bytes);
    segments_.push_back(seg);
  }
  uint64_t head =
      segments_.empty() ? (cursor ? cursor->segment + 1 : 0) : segments_.back().index + 1;
  Status s = StartHead(head);
  if (!s.ok()) return s;
  if (!cursor || cursor->segment < segments_.front().index) {
    cursor = QueuePosition{segments_.front().index, kSegmentHeaderSize};
  }
  cursor_ = *cursor;
  stats_.bytes = 0;
  for (Segment& seg : segments_) {
    if (seg.index != cursor_.segment) seg.acked = 0;
    seg.read = seg.acked;
    stats_.bytes += seg.bytes;
  }
  read_ = cursor_;
  stats_.segments = segments_.size();
  return Status::Ok();
}

// Reads every record of one segment, truncating at the first damaged one.
// seg.acked counts the samples in records ending at or before `cursor`.
Status DiskQueue::ScanSegment(Segment& seg, QueuePosition cursor) {
  const std::string path = SegmentPath(seg.index);
  Fd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  if (fd.get() < 0) return Status::Error(Errno("open " + path));
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Status::Error(Errno("stat " + path));
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  std::string header;
  if (size < kSegmentHeaderSize || !ReadAt(fd.get(), 0, kSegmentHeaderSize, &header) ||
      std::memcmp(header.data(), kMagic, 4) != 0 || static_cast<uint8_t>(header[4]) != kVersion) {
    std::string w = path + ": bad segment header; removed (" + std::to_string(size) + " bytes)";
    LogWarn("remote-write queue: " + w);
    warnings_.push_back(w);
    ++stats_.corrupt_segments;
    stats_.bytes_truncated += size;
    ::unlink(path.c_str());
    seg.bytes = 0;
    return Status::Ok();
  }
  uint64_t offset = kSegmentHeaderSize;
  std::vector<QueuedSample> samples;
  while (true) {
    samples.clear();
    uint64_t next = 0;
    std::string why;
    FrameResult r = ReadFrame(fd.get(), offset, size, &samples, &next, &why);
    if (r == FrameResult::kEnd) break;
    if (r == FrameResult::kDamaged) {
      std::string w = path + ": " + why + " at offset " + std::to_string(offset) + "; truncated " +
                      std::to_string(size - offset) + " bytes";
      LogWarn("remote-write queue: " + w);
      warnings_.push_back(w);
      ++stats_.corrupt_segments;
      stats_.bytes_truncated += size - offset;
      if (::ftruncate(fd.get(), static_cast<off_t>(offset)) != 0) {
        return Status::Error(Errno("truncate " + path));
      }
      break;
    }
    seg.samples += samples.size();
    for (const QueuedSample& s : samples) seg.max_t = std::max(seg.max_t, s.t);
    if (cursor.segment == seg.index && next <= cursor.offset) {
      seg.acked += samples.size();
    }
    offset = next;
  }
  seg.bytes = offset;
  return Status::Ok();
}

// Opens a fresh head segment after the newest one.
Status DiskQueue::StartHead(uint64_t index) {
  const std::string path = SegmentPath(index);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return Status::Error(Errno("create " + path));
  std::string header(kMagic, 4);
  header.push_back(static_cast<char>(kVersion));
  header.append(3, '\0');
  Status s = WriteAll(fd, header);
  if (!s.ok()) {
    ::close(fd);
    return s.WithContext(path);
  }
  if (head_fd_ >= 0) {
    // The finished segment is made durable once, not per record.
    ::fdatasync(head_fd_);
    ::close(head_fd_);
  }
  head_fd_ = fd;
  Segment seg;
  seg.index = index;
  seg.bytes = kSegmentHeaderSize;
  segments_.push_back(seg);
  stats_.bytes += kSegmentHeaderSize;
  stats_.segments = segments_.size();
  return Status::Ok();
}

Status DiskQueue::Append(std::span<const QueuedSample> samples) {
  if (samples.empty()) return Status::Ok();
  std::string frame = EncodeRecord(samples);
  if (frame.size() - kFrameHeaderSize > kMaxRecordBytes) {
    return Status::Error("remote-write queue " + dir_ + ": commit of " +
                         std::to_string(samples.size()) + " samples exceeds the record size limit");
  }
  std::lock_guard<std::mutex> lock(mu_);
  Segment* head = &segments_.back();
  if (head->samples > 0 && head->bytes + frame.size() > options_.segment_bytes) {
    Status s = StartHead(head->index + 1);
    if (!s.ok()) return s.WithContext("remote-write queue " + dir_);
    head = &segments_.back();
  }
  Status s = WriteAll(head_fd_, frame);
  if (!s.ok()) {
    // Keep the log well-formed: drop whatever part of the record landed.
    if (::ftruncate(head_fd_, static_cast<off_t>(head->bytes)) != 0) {
      LogError("remote-write queue " + dir_ + ": cannot truncate after failed write");
    }
    return s.WithContext("remote-write queue " + SegmentPath(head->index));
  }
  head->bytes += frame.size();
  head->samples += samples.size();
  stats_.bytes += frame.size();
  stats_.samples_appended += samples.size();
  for (const QueuedSample& q : samples) {
    head->max_t = std::max(head->max_t, q.t);
    stats_.highest_appended_ms = std::max(stats_.highest_appended_ms, q.t);
  }
  if (options_.max_bytes > 0) {
    while (stats_.bytes > options_.max_bytes && segments_.size() > 1) {
      DropFrontLocked(&stats_.samples_dropped_size);
    }
  }
  if (options_.sample_age_limit_ms > 0) {
    const int64_t limit = Now() - options_.sample_age_limit_ms;
    while (segments_.size() > 1 && segments_.front().max_t < limit) {
      DropFrontLocked(&stats_.samples_dropped_age);
    }
  }
  return Status::Ok();
}

void DiskQueue::EnforceAgeLimit() {
  if (options_.sample_age_limit_ms <= 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t limit = Now() - options_.sample_age_limit_ms;
  while (segments_.size() > 1 && segments_.front().max_t < limit) {
    DropFrontLocked(&stats_.samples_dropped_age);
  }
}

// Deletes the oldest segment, counting its unread samples in *counter;
// readers and the cursor move on to the next segment.
void DiskQueue::DropFrontLocked(uint64_t* counter) {
  const Segment seg = segments_.front();
  *counter += seg.samples - seg.read;
  ::unlink(SegmentPath(seg.index).c_str());
  segments_.pop_front();
  stats_.bytes -= seg.bytes;
  stats_.segments = segments_.size();
  while (!in_flight_.empty() && in_flight_.front().end.segment <= seg.index) {
    in_flight_.pop_front();
  }
  const QueuePosition next{segments_.front().index, kSegmentHeaderSize};
  if (read_ < next) read_ = next;
  if (cursor_ < next) cursor_ = next;
}

void DiskQueue::NormalizeReadLocked() {
  for (const Segment& seg : segments_) {
    if (seg.index < read_.segment) continue;
    if (seg.index > read_.segment) read_ = {seg.index, kSegmentHeaderSize};
    if (read_.offset < seg.bytes || &seg == &segments_.back()) return;
  }
}

Result<DiskQueue::Batch> DiskQueue::Read(size_t max_samples) {
  Batch batch;
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t age_limit =
      options_.sample_age_limit_ms > 0 ? Now() - options_.sample_age_limit_ms : INT64_MIN;
  std::vector<QueuedSample> record;
  while (batch.samples.size() < max_samples) {
    NormalizeReadLocked();
    auto it = std::find_if(segments_.begin(), segments_.end(),
                           [&](const Segment& s) { return s.index == read_.segment; });
    if (it == segments_.end() || read_.offset >= it->bytes) break;  // nothing unread
    const std::string path = SegmentPath(it->index);
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) return Status::Error(Errno("remote-write queue: open " + path));
    while (batch.samples.size() < max_samples && read_.offset < it->bytes) {
      record.clear();
      uint64_t next = 0;
      std::string why;
      FrameResult r = ReadFrame(fd.get(), read_.offset, it->bytes, &record, &next, &why);
      if (r != FrameResult::kOk) {
        // Damaged after Open verified it: the disk is failing under us.
        return Status::Error("remote-write queue: " + path + ": " + why + " at offset " +
                             std::to_string(read_.offset));
      }
      read_.offset = next;
      it->read += record.size();
      in_flight_.push_back({read_, record.size()});
      ++batch.records;
      for (QueuedSample& s : record) {
        if (s.t < age_limit) {
          ++stats_.samples_dropped_age;
        } else {
          batch.samples.push_back(std::move(s));
        }
      }
    }
  }
  batch.end = read_;
  return batch;
}

Status DiskQueue::Ack(QueuePosition upto) {
  std::lock_guard<std::mutex> lock(mu_);
  if (upto > read_) return Status::Error("remote-write queue: ack beyond the read position");
  if (upto <= cursor_) return Status::Ok();  // old, or in a deleted segment
  while (!in_flight_.empty() && in_flight_.front().end <= upto) {
    const InFlight f = in_flight_.front();
    in_flight_.pop_front();
    for (Segment& seg : segments_) {
      if (seg.index == f.end.segment) seg.acked += f.samples;
    }
  }
  Status s = WriteCursorLocked(upto);
  if (!s.ok()) return s;
  cursor_ = upto;
  DeleteAckedLocked();
  return Status::Ok();
}

void DiskQueue::DeleteAckedLocked() {
  while (segments_.size() > 1) {
    const Segment& front = segments_.front();
    bool done = front.index < cursor_.segment ||
                (front.index == cursor_.segment && cursor_.offset >= front.bytes);
    if (!done) break;
    ::unlink(SegmentPath(front.index).c_str());
    stats_.bytes -= front.bytes;
    segments_.pop_front();
  }
  stats_.segments = segments_.size();
}

// Written to a temporary file and renamed, so a crash leaves the old or
// the new cursor, never a mix.
Status DiskQueue::WriteCursorLocked(QueuePosition pos) {
  std::string buf;
  PutU64(buf, pos.segment);
  PutU64(buf, pos.offset);
  PutU32(buf, Checksum(buf));
  const std::string tmp = dir_ + "/" + kCursorFile + ".tmp";
  const std::string path = dir_ + "/" + kCursorFile;
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::Error(Errno("remote-write queue: create " + tmp));
  Status s = WriteAll(fd, buf);
  if (s.ok() && ::fdatasync(fd) != 0) s = Status::Error(Errno("fdatasync"));
  ::close(fd);
  if (s.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) s = Status::Error(Errno("rename"));
  return s.WithContext("remote-write queue " + path);
}

void DiskQueue::Rewind() {
  std::lock_guard<std::mutex> lock(mu_);
  read_ = cursor_;
  in_flight_.clear();
  for (Segment& seg : segments_) seg.read = seg.acked;
}

bool DiskQueue::HasUnread() const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Segment& seg : segments_) {
    if (seg.index > read_.segment && seg.bytes > kSegmentHeaderSize) return true;
    if (seg.index == read_.segment && read_.offset < seg.bytes) return true;
  }
  return false;
}

DiskQueueStats DiskQueue::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  DiskQueueStats out = stats_;
  out.samples_pending = 0;
  for (const Segment& seg : segments_) out.samples_pending += seg.samples - seg.acked;
  return out;
}

std::vector<std::string> DiskQueue::warnings() const {
  std::lock_guard<std::mutex> lock(mu_);
  return warnings_;
}

}  // namespace gpumon::remote
