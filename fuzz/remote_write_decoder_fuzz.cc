// Fuzz target for the remote-write 1.0 body decoder. Any byte string must
// decode or fail with an error — never crash, hang, read out of bounds or
// allocate without bound. The first byte picks what the rest is:
//   even: a request body (snappy block of a protobuf WriteRequest);
//   odd:  the protobuf itself, snappy-compressed here so that mutations
//         reach the protobuf and label checks instead of dying in snappy.
// The decoder reads the wire format by hand; libprotobuf (through the
// generated prometheus.WriteRequest) is the oracle: a body it cannot parse
// must be rejected, and a body it parses must either decode to the same
// series (labels with an empty value dropped, values bit for bit) or fail
// only on validation (labels, native histograms). Whatever decodes must
// also survive a re-encode: decode(encode(x)) == x.
#include <snappy.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "proto/remote.pb.h"
#include "remote/write_request.h"

namespace {

using gpumon::remote::DecodeWriteRequest;
using gpumon::remote::EncodeWriteRequest;
using gpumon::remote::TimeSeries;

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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string body;
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
    return 0;
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
