// Shared behaviour of the chunk iterators: samples are decoded in blocks
// into a small buffer, so Next, At and Seek are plain array steps and the
// per-encoding decoder runs once per block.
//
// Contract: subclasses implement Fill(), which decodes up to kBlock next
// samples into ts_/vs_ and returns how many (0 at the end or after an error;
// on an error it calls Fail, possibly after returning the samples decoded
// before it), and may implement SkipBefore(t) to step over samples earlier
// than t without decoding them into the buffer. Seek(t) never moves
// backwards: when the current sample already has time >= t it stays.
#pragma once

#include <bit>
#include <cstdint>
#include <string>

#include "tsdb/storage.h"

namespace gpumon::tsdb::chunkenc {

class ChunkIterator : public SeriesIterator {
 public:
  static constexpr int kBlock = 32;

  bool Next() final { return ++pos_ < count_ || Advance(); }

  Sample At() const final { return {ts_[pos_], std::bit_cast<double>(vs_[pos_])}; }

  bool Seek(int64_t t) final {
    if (pos_ >= 0) {  // started: the rest of the current block
      for (; pos_ < count_; ++pos_) {
        if (ts_[pos_] >= t) return true;
      }
    }
    for (;;) {
      if (done_) return false;
      SkipBefore(t);
      if (!Advance()) return false;
      for (; pos_ < count_; ++pos_) {
        if (ts_[pos_] >= t) return true;
      }
    }
  }

  Status status() const final { return status_; }

 protected:
  virtual int Fill() = 0;
  // Called by Seek when the buffered samples are used up: an encoding that
  // can step over samples before t more cheaply than decoding them does so
  // here, so that the next Fill starts at or just before t. It may leave
  // ts_ changed (the buffer is spent); errors go through Fail, so that the
  // next Fill returns 0.
  virtual void SkipBefore(int64_t /*t*/) {}

  bool Fail(const std::string& why) {
    if (status_.ok()) status_ = Status::Error("corrupt chunk: " + why);
    return false;
  }
  bool failed() const { return !status_.ok(); }

  int64_t ts_[kBlock];
  uint64_t vs_[kBlock];  // value bits

 private:
  bool Advance() {
    count_ = done_ ? 0 : Fill();
    pos_ = 0;
    if (count_ > 0) return true;
    done_ = true;
    return false;
  }

  int pos_ = -1;
  int count_ = 0;
  bool done_ = false;
  Status status_;
};

}  // namespace gpumon::tsdb::chunkenc
