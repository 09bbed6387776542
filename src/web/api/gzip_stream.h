// Streaming gzip (RFC 1952) compression with zlib: input arrives in
// pieces, compressed bytes leave through a callback as they are produced,
// so a large response is never held whole, compressed or not.
//
// Contract: Write() may be called any number of times, then Finish() once;
// the concatenated output is one gzip member. The sink returns false when
// the receiver is gone; Write/Finish then return false and the stream is
// unusable.
#pragma once

#include <zlib.h>

#include <functional>
#include <string_view>

namespace gpumon::web::api {

class GzipStream {
 public:
  using Sink = std::function<bool(const char* data, size_t size)>;

  explicit GzipStream(Sink sink, int level = 6);
  ~GzipStream();
  GzipStream(const GzipStream&) = delete;
  GzipStream& operator=(const GzipStream&) = delete;

  bool Write(std::string_view data);
  bool Finish();

 private:
  bool Deflate(int flush);

  Sink sink_;
  z_stream zs_{};
  bool live_ = false;  // deflateInit2 succeeded and deflateEnd not yet called
  bool ok_ = false;
  bool finished_ = false;
};

}  // namespace gpumon::web::api
