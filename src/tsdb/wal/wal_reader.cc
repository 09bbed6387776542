#include "tsdb/wal/wal_reader.h"

#include <utility>

namespace gpumon::tsdb::wal {
namespace {
constexpr uint64_t kProgressEvery = 16u << 20;
}  // namespace

Result<std::unique_ptr<WalReader>> WalReader::Open(const std::string& dir, ReaderOptions options) {
  Result<std::vector<SegmentFile>> all = ListSegments(dir);
  if (!all.ok()) return all.status();
  int newest = all->empty() ? -1 : all->back().index;
  std::vector<SegmentFile> chosen;
  for (SegmentFile& s : *all) {
    if (options.first_segment && s.index < *options.first_segment) continue;
    if (options.last_segment && s.index > *options.last_segment) continue;
    chosen.push_back(std::move(s));
  }
  return std::unique_ptr<WalReader>(
      new WalReader(dir, std::move(chosen), newest, std::move(options)));
}

WalReader::WalReader(std::string dir, std::vector<SegmentFile> segments, int newest,
                     ReaderOptions options)
    : dir_(std::move(dir)),
      segments_(std::move(segments)),
      newest_(newest),
      options_(std::move(options)) {
  for (const SegmentFile& s : segments_) bytes_total_ += s.size;
}

void WalReader::Report(bool force) {
  if (!options_.progress) return;
  uint64_t done = bytes_before_segment_ + (decoder_ ? decoder_->offset() : 0);
  if (!force && done - last_report_ < kProgressEvery) return;
  last_report_ = done;
  ReplayProgress p;
  p.segment = segment_index_;
  p.segments_done = static_cast<int>(next_) - (decoder_ ? 1 : 0);
  p.segments_total = static_cast<int>(segments_.size());
  p.bytes_done = done;
  p.bytes_total = bytes_total_;
  options_.progress(p);
}

bool WalReader::OpenSegment() {
  const SegmentFile& seg = segments_[next_];
  // The sequence must have no holes: a missing segment lost records.
  int expected =
      next_ > 0 ? segments_[next_ - 1].index + 1 : options_.first_segment.value_or(seg.index);
  if (seg.index != expected) {
    corruption_ = Corruption{seg.index, seg.path, 0,
                             "segment " + SegmentPath(dir_, expected) + " is missing"};
    return false;
  }
  Result<MmapFile> file = MmapFile::Open(seg.path);
  if (!file.ok()) {
    corruption_ = Corruption{seg.index, seg.path, 0, file.status().message()};
    return false;
  }
  file_ = std::move(file).value();
  segment_index_ = seg.index;
  decoder_.emplace(file_.bytes(), seg.index == newest_);
  ++next_;
  return true;
}

bool WalReader::Next() {
  while (!done_) {
    if (!decoder_) {
      if (next_ == segments_.size() || !OpenSegment()) {
        done_ = true;
        Report(true);
        return false;
      }
    }
    FrameResult r = decoder_->Next();
    if (r == FrameResult::kRecord) {
      ++records_read_;
      Report(false);
      return true;
    }
    const SegmentFile& seg = segments_[next_ - 1];
    if (r == FrameResult::kTorn) {
      torn_tail_ = TornTail{seg.index, seg.path, decoder_->offset(),
                            file_.bytes().size() - decoder_->offset(), decoder_->reason()};
    } else if (r == FrameResult::kCorrupt) {
      corruption_ = Corruption{seg.index, seg.path, decoder_->offset(), decoder_->reason()};
      done_ = true;
      Report(true);
      return false;
    }
    // End of this segment (or its torn tail, which only the newest has).
    bytes_before_segment_ += file_.bytes().size();
    decoder_.reset();
    file_ = MmapFile();
    Report(true);
  }
  return false;
}

Corruption WalReader::CorruptionAtRecord(std::string reason) const {
  Corruption c;
  c.segment = segment_index_;
  c.path = segment_index_ >= 0 ? SegmentPath(dir_, segment_index_) : dir_;
  c.offset = offset();
  c.reason = std::move(reason);
  return c;
}

}  // namespace gpumon::tsdb::wal
