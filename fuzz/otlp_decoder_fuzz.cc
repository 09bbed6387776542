// Fuzz target for the OTLP/HTTP metrics receiver: protobuf decoding of an
// ExportMetricsServiceRequest, its translation to Prometheus families
// (names, units, attributes, every point type, delta accumulation) and the
// push into a real PushStore, with gzip and the decoded-size limit. Any
// byte string must give an answer — never crash, hang, read out of bounds
// or allocate without bound. The first byte picks what the rest is:
//   bit 0 set: gzip-compressed here and sent with Content-Encoding: gzip
//              (bit 1 set: sent as gzip without compressing, raw garbage);
//   otherwise the protobuf body as is.
// Oracles: libprotobuf parses the same bytes exactly when the receiver does
// not answer 400 for a malformed body; every answer is 200 (a parseable
// ExportMetricsServiceResponse, partial_success only with a message) or
// 400/413 (a parseable google.rpc.Status with a message); every family the
// translation produces has a valid name, valid label names (never a
// grouping label), UTF-8 label values and no series twice; accepted plus
// rejected points never exceed the points in the request. The same request
// sent again is answered with the same status (the translation is
// deterministic; delta totals only grow).
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ingest/otlp_decoder.h"
#include "ingest/otlp_delta.h"
#include "ingest/otlp_receiver.h"
#include "ingest/push_store.h"
#include "proto/otlp_metrics.pb.h"

namespace {

using gpumon::ingest::OtlpDeltaAccumulator;
using gpumon::ingest::OtlpOutcome;
using gpumon::ingest::OtlpReceiver;
using gpumon::ingest::OtlpReceiverOptions;
using gpumon::ingest::PushLimits;
using gpumon::ingest::PushStore;

constexpr size_t kDecodedLimit = 1 << 20;

void Check(bool ok) {
  if (!ok) std::abort();
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

bool ValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : 4;
    if (i + len > s.size()) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += len;
  }
  return true;
}

bool ValidName(std::string_view n, bool colon) {
  if (n.empty()) return false;
  for (size_t i = 0; i < n.size(); ++i) {
    char c = n[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':') ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

int64_t Points(const gpumon::otlp::ExportMetricsServiceRequest& req) {
  int64_t n = 0;
  for (const auto& rm : req.resource_metrics()) {
    for (const auto& sm : rm.scope_metrics()) {
      for (const auto& m : sm.metrics()) {
        n += m.gauge().data_points_size() + m.sum().data_points_size() +
             m.histogram().data_points_size() + m.exponential_histogram().data_points_size() +
             m.summary().data_points_size();
      }
    }
  }
  return n;
}

// The translation's output on its own: names, labels, no duplicates.
void CheckTranslation(const gpumon::otlp::ExportMetricsServiceRequest& req) {
  OtlpDeltaAccumulator acc;
  auto txn = acc.Begin();
  gpumon::ingest::OtlpDecodeOptions options;
  options.max_samples = 10'000;
  auto t = gpumon::ingest::TranslateOtlpRequest(req, options, txn);
  if (!t.ok()) {
    Check(!t.status().message().empty());
    return;
  }
  int64_t accepted = 0;
  for (const auto& g : t->groups) {
    Check(!g.grouping.Get("job").empty());
    accepted += g.points;
    for (const auto& f : g.families) {
      Check(ValidName(f.name, true));
      std::set<std::vector<gpumon::Label>> seen;
      for (const auto& s : f.samples) {
        for (const auto& l : s.labels) {
          Check(ValidName(l.name, false) && !l.name.starts_with("__"));
          Check(!g.grouping.Has(l.name));
          Check(ValidUtf8(l.value));
        }
        Check(seen.insert(s.labels).second);
      }
    }
    txn.Commit(g.grouping);
  }
  Check(t->rejected_points >= 0);
  Check(accepted + t->rejected_points <= Points(req));
}

void CheckAnswer(const OtlpOutcome& out) {
  if (out.status == 200) {
    gpumon::otlp::ExportMetricsServiceResponse resp;
    Check(resp.ParseFromString(out.body));
    if (resp.has_partial_success()) Check(!resp.partial_success().error_message().empty());
    Check(resp.partial_success().rejected_data_points() == out.rejected_points);
    return;
  }
  Check(out.status == 400 || out.status == 413);
  gpumon::otlp::Status st;
  Check(st.ParseFromString(out.body));
  Check(!st.message().empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const bool gzip = data[0] & 1;
  const std::string body = gzip && !(data[0] & 2) ? GzipOf(rest) : std::string(rest);

  PushStore store(PushLimits{.max_series_per_group = 2'000,
                             .max_series_total = 5'000,
                             .max_labels_per_series = 64,
                             .max_groups = 50,
                             .expiry = std::chrono::seconds(0)});
  OtlpReceiverOptions options;
  options.max_decoded_bytes = kDecodedLimit;
  options.decode.max_samples = 10'000;
  OtlpReceiver receiver(store, nullptr, options);
  const char* encoding = gzip ? "gzip" : "";
  OtlpOutcome out = receiver.Handle("application/x-protobuf", encoding, body, "127.0.0.1:9");
  CheckAnswer(out);

  if (!gzip) {
    gpumon::otlp::ExportMetricsServiceRequest req;
    const bool parsed = req.ParseFromString(std::string(rest));
    const bool too_big = rest.size() > kDecodedLimit;
    if (!too_big) {
      // 400 for a malformed body exactly when libprotobuf refuses it too.
      if (!parsed) Check(out.status == 400);
      if (parsed) CheckTranslation(req);
    }
  }
  OtlpOutcome again = receiver.Handle("application/x-protobuf", encoding, body, "127.0.0.1:9");
  CheckAnswer(again);
  // A second push of the same data may only fail where the first did, or
  // on store limits that the first push used up (never a different 4xx).
  Check(again.status == out.status || again.status == 400);
  return 0;
}
