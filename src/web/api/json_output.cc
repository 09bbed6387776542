#include "web/api/json_output.h"

namespace gpumon::web::api {

ChunkedOutput::ChunkedOutput(Sink sink, size_t chunk_size)
    : sink_(std::move(sink)), chunk_size_(chunk_size) {
  buf_.reserve(chunk_size_ + 64);
}

void ChunkedOutput::Flush() {
  if (buf_.empty()) return;
  if (ok_) {
    bytes_ += buf_.size();
    ok_ = sink_(buf_.data(), buf_.size());
  }
  buf_.clear();
}

}  // namespace gpumon::web::api
