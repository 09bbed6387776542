#include "web/api/gzip_stream.h"

namespace gpumon::web::api {

GzipStream::GzipStream(Sink sink, int level) : sink_(std::move(sink)) {
  // 16 + MAX_WBITS selects the gzip wrapper.
  live_ = deflateInit2(&zs_, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK;
  ok_ = live_;
}

GzipStream::~GzipStream() {
  if (live_) deflateEnd(&zs_);
}

bool GzipStream::Deflate(int flush) {
  char out[16384];
  do {
    zs_.next_out = reinterpret_cast<Bytef*>(out);
    zs_.avail_out = sizeof out;
    int rc = deflate(&zs_, flush);
    if (rc == Z_STREAM_ERROR) {
      ok_ = false;
      return false;
    }
    size_t produced = sizeof out - zs_.avail_out;
    if (produced > 0 && !sink_(out, produced)) {
      ok_ = false;
      return false;
    }
    if (rc == Z_STREAM_END) break;
  } while (zs_.avail_out == 0 || (flush == Z_FINISH));
  return true;
}

bool GzipStream::Write(std::string_view data) {
  if (!ok_ || finished_) return false;
  zs_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs_.avail_in = static_cast<uInt>(data.size());
  return Deflate(Z_NO_FLUSH);
}

bool GzipStream::Finish() {
  if (!ok_ || finished_) return false;
  zs_.next_in = nullptr;
  zs_.avail_in = 0;
  bool done = Deflate(Z_FINISH);
  finished_ = true;
  deflateEnd(&zs_);
  live_ = false;
  ok_ = false;
  return done;
}

}  // namespace gpumon::web::api
