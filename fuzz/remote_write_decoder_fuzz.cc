// Fuzz target for the remote-write 1.0 body decoder and the receiver's
// whole request path (decompression with its size limit, streaming decode,
// append, commit). Any byte string must decode or fail with an error —
// never crash, hang, read out of bounds or allocate without bound. The
// first byte picks what the rest is:
//   bit 1 clear (snappy): bit 0 clear: a request body (snappy block of a
//         protobuf WriteRequest); bit 0 set: the protobuf itself,
//         snappy-compressed here so that mutations reach the protobuf and
//         label checks instead of dying in snappy.
//   bit 1 set (gzip): bit 0 clear: a Content-Encoding: gzip body as is;
//         bit 0 set: the protobuf, gzip-compressed here.
// The decoder reads the wire format by hand; libprotobuf (through the
// generated prometheus.WriteRequest) is the oracle: a body it cannot parse
// must be rejected, and a body it parses must either decode to the same
// series (labels with an empty value dropped, values bit for bit) or fail
// only on validation (labels, native histograms). Whatever decodes must
// also survive a re-encode: decode(encode(x)) == x. The receiver runs with
// a 1 MiB decoded limit (so the 413 path is reachable): its answer must
// agree with the decoder and with zlib/snappy on the same bytes.
#include <snappy.h>
#include <zlib.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "proto/remote.pb.h"
#include "remote/body_decompress.h"
#include "remote/receiver.h"
#include "remote/write_request.h"

namespace {

using gpumon::remote::DecodeWriteRequest;
using gpumon::remote::DecompressBody;
using gpumon::remote::EncodeWriteRequest;
using gpumon::remote::ForEachSeries;
using gpumon::remote::HandleRemoteWrite;
using gpumon::remote::TimeSeries;
using gpumon::remote::WriteOutcome;

constexpr size_t kLimit = 1 << 20;
// Far from both ends, so "too far in the future" is decided by the sample
// alone and now + 10 minutes cannot overflow.
constexpr int64_t kNowMs = INT64_MAX / 2;
constexpr int64_t kMaxAheadMs = 10 * 60 * 1000;

void Check(bool ok) {
  if (!ok) std::abort();
}

bool Same(const std::vector<TimeSeries>& a, const std::vector<TimeSeries>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!(a[i].labels == b[i].labels) || a[i].samples.size() != b[i].samples.size()) return false;
    for (size_t j = 0; j < a[i].samples.size(); ++j) {
      const auto& x = a[i].samples[j];
      const auto& y = b[i].samples[j];
      if (x.t != y.t || std::bit_cast<uint64_t>(x.v) != std::bit_cast<uint64_t>(y.v)) return false;
    }
  }
  return true;
}

// Our result against libprotobuf's parse of the same bytes.
bool Matches(const std::vector<TimeSeries>& got, const prometheus::WriteRequest& msg) {
  if (static_cast<int>(got.size()) != msg.timeseries_size()) return false;
  for (int i = 0; i < msg.timeseries_size(); ++i) {
    const auto& ts = msg.timeseries(i);
    if (ts.histograms_size() != 0) return false;  // must have been rejected
    size_t k = 0;
    for (const auto& l : ts.labels()) {
      if (l.value().empty()) continue;
      if (k >= got[i].labels.size()) return false;
      const auto& ours = got[i].labels.items()[k++];
      if (ours.name != l.name() || ours.value != l.value()) return false;
    }
    if (k != got[i].labels.size()) return false;
    if (static_cast<int>(got[i].samples.size()) != ts.samples_size()) return false;
    for (int j = 0; j < ts.samples_size(); ++j) {
      if (got[i].samples[j].t != ts.samples(j).timestamp() ||
          std::bit_cast<uint64_t>(got[i].samples[j].v) !=
              std::bit_cast<uint64_t>(ts.samples(j).value())) {
        return false;
      }
    }
  }
  return true;
}

std::string GzipOf(std::string_view data) {
  z_stream z{};
  if (deflateInit2(&z, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) std::abort();
  std::string out(deflateBound(&z, data.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  Check(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// zlib's own reading of a gzip body, into a buffer of limit + 1 bytes:
// nullopt when the data is not valid gzip (members back to back, nothing
// after the last), "too large" when it inflates past the limit.
struct Inflated {
  bool valid = false;
  bool too_large = false;
  std::string data;
};
Inflated ReferenceGunzip(std::string_view body, size_t limit) {
  Inflated r;
  std::string buf(limit + 1, '\0');
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) std::abort();
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(body.data()));
  z.avail_in = static_cast<uInt>(body.size());
  z.next_out = reinterpret_cast<Bytef*>(buf.data());
  z.avail_out = static_cast<uInt>(buf.size());
  for (;;) {
    int rc = inflate(&z, Z_FINISH);
    if (z.avail_out == 0 && rc != Z_STREAM_END) {
      r.too_large = true;  // out of room: more than the limit
      break;
    }
    if (rc == Z_STREAM_END) {
      if (z.avail_in == 0) {
        r.valid = true;
        break;
      }
      if (inflateReset(&z) != Z_OK) break;
      continue;
    }
    if (rc == Z_OK) continue;  // progress; the next call reports the end
    break;                     // corrupt or truncated
  }
  if (z.total_out > limit) r.too_large = true;
  r.data.assign(buf.data(), buf.size() - z.avail_out);
  inflateEnd(&z);
  return r;
}

// Accepts everything, counting samples; commits always succeed.
class CountingAppender : public gpumon::scrape::Appender {
 public:
  explicit CountingAppender(uint64_t* n) : n_(n) {}
  gpumon::Status Append(const gpumon::Labels& labels, int64_t, double) override {
    Check(!labels.empty());
    ++pending_;
    return gpumon::Status::Ok();
  }
  gpumon::Status Commit() override {
    *n_ += pending_;
    pending_ = 0;
    return gpumon::Status::Ok();
  }
  void Rollback() override { pending_ = 0; }

 private:
  uint64_t* n_;
  uint64_t pending_ = 0;
};

// The receiver on `body` must agree with decoding `raw` (the decompressed
// body, or nullopt when decompression must fail with `want_status`).
void CheckReceiver(std::string_view encoding, std::string_view body,
                   const std::optional<std::string>& raw, int want_status) {
  uint64_t committed = 0;
  auto factory = [&committed]() -> std::unique_ptr<gpumon::scrape::Appender> {
    return std::make_unique<CountingAppender>(&committed);
  };
  WriteOutcome out =
      HandleRemoteWrite("application/x-protobuf", encoding, body, factory, kNowMs, kLimit);
  if (!raw) {
    Check(out.status == want_status);
    Check(committed == 0);
    return;
  }
  uint64_t samples = 0;
  bool future = false;
  gpumon::Status walked = ForEachSeries(*raw, [&](size_t, const TimeSeries& ts) {
    for (const auto& s : ts.samples) {
      if (s.t > kNowMs + kMaxAheadMs) future = true;
    }
    samples += ts.samples.size();
    return gpumon::Status::Ok();
  });
  if (!walked.ok() || future) {
    Check(out.status == 400);
    Check(committed == 0);
    return;
  }
  Check(out.status == 204);
  Check(out.samples == samples && committed == samples);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string body;
  if (data[0] & 2) {
    // gzip: the receiver against zlib's reading of the same bytes.
    body = (data[0] & 1) ? GzipOf(rest) : std::string(rest);
    Inflated ref = ReferenceGunzip(body, kLimit);
    auto ours = DecompressBody("gzip", body, kLimit);
    if (ref.too_large) {
      Check(ours.status == 413);
      CheckReceiver("gzip", body, std::nullopt, 413);
    } else if (!ref.valid) {
      Check(ours.status == 400);
      CheckReceiver("gzip", body, std::nullopt, 400);
    } else {
      Check(ours.status == 200 && ours.data == ref.data);
      CheckReceiver("gzip", body, ref.data, 0);
    }
    return 0;
  }
  if (data[0] & 1) {
    snappy::Compress(rest.data(), rest.size(), &body);
  } else {
    body.assign(rest);
  }
  auto decoded = DecodeWriteRequest(body);
  // Validation allocates nothing; a valid block expands at most ~21x, so
  // only then is it safe to inflate here.
  std::string raw;
  if (!snappy::IsValidCompressedBuffer(body.data(), body.size()) ||
      !snappy::Uncompress(body.data(), body.size(), &raw)) {
    Check(!decoded.ok());
    CheckReceiver("snappy", body, std::nullopt, 400);
    return 0;
  }
  if (raw.size() > kLimit) {
    CheckReceiver("snappy", body, std::nullopt, 413);
  } else {
    CheckReceiver("snappy", body, raw, 0);
  }
  prometheus::WriteRequest msg;
  if (!msg.ParseFromString(raw)) {
    Check(!decoded.ok());
    return 0;
  }
  if (!decoded.ok()) {
    const std::string& err = decoded.status().message();
    Check(err.starts_with("timeseries["));
    return 0;
  }
  Check(Matches(decoded.value(), msg));
  auto again = DecodeWriteRequest(EncodeWriteRequest(decoded.value()));
  Check(again.ok());
  Check(Same(decoded.value(), again.value()));
  return 0;
}
