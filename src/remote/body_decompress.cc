#include "remote/body_decompress.h"

#include <snappy.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>

namespace gpumon::remote {
namespace {

// Snappy's densest encoding (a 3-byte copy of 64 bytes) expands ~21x, so a
// declared length beyond 32x the input is corrupt.
constexpr uint64_t kMaxSnappyExpansion = 32;

DecompressResult Error(int status, std::string message) {
  return DecompressResult{status, std::move(message), {}};
}

std::string TooLarge(size_t limit) {
  return "decompressed body exceeds the limit of " + std::to_string(limit) + " bytes";
}

DecompressResult Snappy(std::string_view body, size_t limit) {
  size_t raw_len = 0;
  if (!snappy::GetUncompressedLength(body.data(), body.size(), &raw_len)) {
    return Error(400, "snappy: corrupt input (bad length header)");
  }
  if (raw_len > body.size() * kMaxSnappyExpansion + 64) {
    return Error(400, "snappy: corrupt input (declared length " + std::to_string(raw_len) +
                          " is impossible for " + std::to_string(body.size()) + " bytes)");
  }
  if (raw_len > limit) {
    return Error(413,
                 "snappy: declared length " + std::to_string(raw_len) + ": " + TooLarge(limit));
  }
  DecompressResult out;
  if (!snappy::Uncompress(body.data(), body.size(), &out.data)) {
    return Error(400, "snappy: corrupt input");
  }
  return out;
}

DecompressResult Gzip(std::string_view body, size_t limit) {
  z_stream z{};
  // 16 + MAX_WBITS: gzip framing only (not zlib, not raw deflate).
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return Error(500, "gzip: cannot initialize zlib");
  struct Guard {
    z_stream* z;
    ~Guard() { inflateEnd(z); }
  } guard{&z};

  DecompressResult out;
  // Grows with what inflate produces, never ahead of it by more than one
  // step, so the limit bounds the allocation.
  constexpr size_t kStep = 256 * 1024;
  size_t produced = 0;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(body.data()));
  size_t in_left = body.size();
  for (;;) {
    if (z.avail_in == 0 && in_left > 0) {
      const uInt n = static_cast<uInt>(std::min<size_t>(in_left, 1u << 30));
      z.avail_in = n;
      in_left -= n;
    }
    if (out.data.size() == produced) {
      // One byte past the limit tells "exactly at the limit" from "over it".
      const size_t room = std::min(kStep, limit + 1 - produced);
      out.data.resize(produced + room);
    }
    z.next_out = reinterpret_cast<Bytef*>(out.data.data() + produced);
    z.avail_out = static_cast<uInt>(out.data.size() - produced);
    const uInt before = z.avail_out;
    const int rc = inflate(&z, Z_NO_FLUSH);
    produced += before - z.avail_out;
    if (produced > limit) return Error(413, "gzip: " + TooLarge(limit));
    if (rc == Z_STREAM_END) {
      if (z.avail_in == 0 && in_left == 0) break;
      // Another member follows (gzip -c a b > ab is valid gzip).
      if (inflateReset(&z) != Z_OK) return Error(400, "gzip: corrupt input");
      continue;
    }
    if (rc == Z_BUF_ERROR && z.avail_in == 0 && in_left == 0) {
      return Error(400, "gzip: unexpected end of input");
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      return Error(400,
                   std::string("gzip: corrupt input") + (z.msg ? std::string(": ") + z.msg : ""));
    }
  }
  out.data.resize(produced);
  return out;
}

}  // namespace

DecompressResult DecompressBody(std::string_view encoding, std::string_view body,
                                size_t max_decoded_bytes) {
  if (encoding.empty() || encoding == "snappy") return Snappy(body, max_decoded_bytes);
  if (encoding == "gzip") return Gzip(body, max_decoded_bytes);
  return Error(415, std::string(encoding) +
                        " encoding (compression) is not accepted by this server; only snappy "
                        "(the default) and gzip are acceptable");
}

}  // namespace gpumon::remote
