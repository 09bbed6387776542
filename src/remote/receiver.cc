#include "remote/receiver.h"

#include <chrono>
#include <string_view>
#include <utility>

#include "remote/write_request.h"

namespace gpumon::remote {
namespace {

// How far ahead of the receiver's clock a sample may be (Prometheus's
// maxAheadTime): beyond it the sender's clock is wrong.
constexpr int64_t kMaxAheadMs = 10 * 60 * 1000;

constexpr std::string_view kProtobufType = "application/x-protobuf";
constexpr std::string_view kV1MessageType = "prometheus.WriteRequest";

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// "" when the request is a 1.0 message, else why it is not acceptable.
std::string CheckContentType(std::string_view content_type) {
  content_type = Trim(content_type);
  if (content_type.empty()) return "";  // old senders omit it
  size_t semi = content_type.find(';');
  std::string_view media = Trim(content_type.substr(0, semi));
  if (media != kProtobufType) {
    return "unsupported Content-Type \"" + std::string(content_type) + "\"; expected " +
           std::string(kProtobufType);
  }
  while (semi != std::string_view::npos) {
    std::string_view rest = content_type.substr(semi + 1);
    semi = rest.find(';');
    std::string_view param = Trim(rest.substr(0, semi));
    content_type = rest;
    size_t eq = param.find('=');
    if (eq == std::string_view::npos) {
      return "malformed Content-Type parameter \"" + std::string(param) + "\"";
    }
    if (Trim(param.substr(0, eq)) != "proto") continue;
    std::string_view proto = Trim(param.substr(eq + 1));
    if (proto != kV1MessageType) {
      return "unsupported remote write message \"" + std::string(proto) + "\"; only " +
             std::string(kV1MessageType) + " (remote write 1.0) is accepted";
    }
  }
  return "";
}

// Appender errors the sender must not retry: the same request would fail
// again. The head's messages start with these phrases.
bool IsBadSampleError(const std::string& message) {
  for (std::string_view prefix : {"out of order sample", "out of bounds sample",
                                  "duplicate sample for timestamp", "too old sample"}) {
    if (message.starts_with(prefix)) return true;
  }
  return false;
}

WriteOutcome Fail(int status, std::string message) {
  return WriteOutcome{status, std::move(message), 0};
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

WriteOutcome HandleRemoteWrite(std::string_view content_type, std::string_view content_encoding,
                               std::string_view body, const scrape::AppenderFactory& appenders,
                               int64_t now_ms) {
  if (std::string why = CheckContentType(content_type); !why.empty()) return Fail(415, why);
  std::string_view encoding = Trim(content_encoding);
  if (!encoding.empty() && encoding != "snappy") {
    return Fail(415, std::string(encoding) +
                         " encoding (compression) is not accepted by this server; only snappy "
                         "is acceptable");
  }
  auto decoded = DecodeWriteRequest(body);
  if (!decoded.ok()) return Fail(400, decoded.status().message());

  std::unique_ptr<scrape::Appender> app = appenders();
  if (!app) return Fail(500, "no appender available");
  const int64_t max_t = now_ms + kMaxAheadMs;
  uint64_t count = 0;
  for (const TimeSeries& series : decoded.value()) {
    // The series ref from the first sample lets the storage skip the label
    // lookup for the rest; labels are still passed for appenders without refs.
    uint64_t ref = 0;
    for (const tsdb::Sample& s : series.samples) {
      Status st;
      if (s.t > max_t) {
        st = Status::Error("out of bounds sample: series " + series.labels.ToString() +
                           ": timestamp " + std::to_string(s.t) + " is too far in the future");
      } else if (auto r = app->AppendRef(ref, series.labels, s.t, s.v); r.ok()) {
        ref = r.value();
      } else {
        st = r.status();
      }
      if (!st.ok()) {
        app->Rollback();
        return Fail(IsBadSampleError(st.message()) ? 400 : 500, st.message());
      }
      ++count;
    }
  }
  if (Status st = app->Commit(); !st.ok()) {
    return Fail(IsBadSampleError(st.message()) ? 400 : 500, st.message());
  }
  return WriteOutcome{204, "", count};
}

void RegisterRemoteWriteReceiver(httplib::Server& server, scrape::AppenderFactory appenders,
                                 ReceiverStats* stats) {
  server.Post(kRemoteWritePath, [appenders = std::move(appenders), stats](
                                    const httplib::Request& req, httplib::Response& res) {
    if (stats) stats->requests.fetch_add(1, std::memory_order_relaxed);
    WriteOutcome out =
        HandleRemoteWrite(req.get_header_value("Content-Type"),
                          req.get_header_value("Content-Encoding"), req.body, appenders, NowMs());
    res.status = out.status;
    if (out.status >= 300) {
      if (stats) stats->errors.fetch_add(1, std::memory_order_relaxed);
      res.set_content(out.message + "\n", "text/plain; charset=utf-8");
      return;
    }
    if (stats) stats->samples.fetch_add(out.samples, std::memory_order_relaxed);
  });
}

}  // namespace gpumon::remote
