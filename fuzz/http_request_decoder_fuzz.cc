// Fuzz target for the HTTP/1.x request decoder (src/http/request_decoder).
// Any byte string, fed as a connection would feed it, must decode into
// requests or end in an error status — never crash, hang, read out of
// bounds or allocate without bound.
//
// Input layout: byte 0 picks the body limit, bytes 1-2 a split point; the
// rest is the connection's byte stream (so pipelined sequences are
// covered). The stream is decoded twice, once whole and once in two
// pieces split at the chosen point, and both runs must agree: the
// decoder's outcome must not depend on how the bytes arrived.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "http/request_decoder.h"

namespace {

using gpumon::http::DecoderLimits;
using gpumon::http::HttpRequest;
using gpumon::http::RequestDecoder;
using Stage = RequestDecoder::Stage;

void Check(bool ok) {
  if (!ok) std::abort();
}

struct Result {
  std::vector<std::string> requests;  // method, target, body: enough to compare
  int error = 0;
  std::string message;
};

// Small limits, so inputs of a few KiB reach every limit.
DecoderLimits Limits() {
  DecoderLimits l;
  l.max_request_line_bytes = 200;
  l.max_header_bytes = 1000;
  l.max_header_fields = 12;
  return l;
}

bool IsKnownError(int status) {
  switch (status) {
    case 400:
    case 413:
    case 414:
    case 417:
    case 431:
    case 501:
    case 505:
      return true;
    default:
      return false;
  }
}

Result Run(std::string_view input, size_t split, size_t body_limit) {
  Result out;
  RequestDecoder d(Limits());
  std::string buf;
  const std::string_view pieces[2] = {input.substr(0, split), input.substr(split)};
  for (std::string_view piece : pieces) {
    buf.append(piece);
    for (int steps = 0;; ++steps) {
      Check(steps < 100000);
      size_t used = 0;
      Stage st = d.Feed(buf.data(), buf.size(), &used);
      Check(used <= buf.size());
      buf.erase(0, used);
      if (st == Stage::kHeadReady) {
        const HttpRequest& r = d.request();
        Check(!r.method.empty() && !r.path.empty());
        Check(r.path[0] == '/' || r.path == "*");
        Check(r.version_major == 1 && (r.version_minor == 0 || r.version_minor == 1));
        st = d.BeginBody(body_limit);
        if (st == Stage::kNeedMore) continue;
      }
      if (st == Stage::kError) {
        Check(IsKnownError(d.error_status()));
        Check(!d.error_message().empty());
        out.error = d.error_status();
        out.message = d.error_message();
        return out;
      }
      if (st == Stage::kComplete) {
        const HttpRequest& r = d.request();
        Check(r.body.size() <= body_limit);
        out.requests.push_back(r.method + " " + r.target + "\n" + r.body);
        d.Reset();
        continue;
      }
      break;  // kNeedMore: wait for the next piece
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const size_t body_limit = static_cast<size_t>(data[0]) * 16;
  const std::string_view input(reinterpret_cast<const char*>(data) + 3, size - 3);
  const size_t split = input.empty() ? 0 : (data[1] | (data[2] << 8)) % (input.size() + 1);
  const Result whole = Run(input, input.size(), body_limit);
  const Result parts = Run(input, split, body_limit);
  // A chunk line or trailer section is only bounded while it is waited
  // for, so that one error may differ between whole and split input.
  constexpr std::string_view kWaitBound = "chunk header or trailer too long";
  if (whole.message == kWaitBound || parts.message == kWaitBound) return 0;
  Check(whole.requests == parts.requests);
  Check(whole.error == parts.error);
  return 0;
}
