#include "remote/receiver.h"

#include <chrono>
#include <string_view>
#include <utility>

#include "remote/body_decompress.h"
#include "remote/write_request.h"
#include "tsdb/append_error.h"

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

WriteOutcome Fail(int status, std::string message) {
  return WriteOutcome{status, std::move(message), 0};
}

// 400 when the same request would be refused again (the sender must drop
// it), 500 when the storage might take it later (the sender retries).
int AppendErrorStatus(const std::string& message) {
  return tsdb::IsPermanentAppendFailure(tsdb::ClassifyAppendError(message)) ? 400 : 500;
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

WriteOutcome HandleRemoteWrite(std::string_view content_type, std::string_view content_encoding,
                               std::string_view body, const scrape::AppenderFactory& appenders,
                               int64_t now_ms, size_t max_decoded_bytes) {
  if (std::string why = CheckContentType(content_type); !why.empty()) return Fail(415, why);
  DecompressResult raw = DecompressBody(Trim(content_encoding), body, max_decoded_bytes);
  if (raw.status != 200) return Fail(raw.status, std::move(raw.message));

  // Appending as the series are decoded: a decode error further on still
  // rolls the whole request back, and the appender exists only once there
  // is something to append.
  std::unique_ptr<scrape::Appender> app;
  const int64_t max_t = now_ms + kMaxAheadMs;
  uint64_t count = 0;
  int reject_status = 0;  // set when the appender (not the decoder) stopped the walk
  Labels prev_labels;
  uint64_t prev_ref = 0;
  Status walked = ForEachSeries(raw.data, [&](size_t, const TimeSeries& series) -> Status {
    if (!app) {
      app = appenders();
      if (!app) {
        reject_status = 500;
        return Status::Error("no appender available");
      }
    }
    // The series ref from the first sample lets the storage skip the label
    // lookup for the rest, and for a series repeated right after itself.
    uint64_t ref = series.labels == prev_labels ? prev_ref : 0;
    for (const tsdb::Sample& s : series.samples) {
      Status st;
      if (s.t > max_t) {
        st = Status::Error("out of bounds sample: series " +
                           series.labels.ToString().substr(0, 200) + ": timestamp " +
                           std::to_string(s.t) + " is too far in the future");
      } else if (auto r = app->AppendRef(ref, series.labels, s.t, s.v); r.ok()) {
        ref = r.value();
      } else {
        st = r.status();
      }
      if (!st.ok()) {
        reject_status = AppendErrorStatus(st.message());
        return st;
      }
      ++count;
    }
    if (ref != 0 && ref != prev_ref) {
      prev_labels = series.labels;
      prev_ref = ref;
    }
    return Status::Ok();
  });
  raw.data = std::string();  // the decoded body is no longer needed for the commit
  if (!walked.ok()) {
    if (app) app->Rollback();
    return Fail(reject_status != 0 ? reject_status : 400, walked.message());
  }
  if (!app) return WriteOutcome{204, "", 0};  // no series: nothing to store
  if (Status st = app->Commit(); !st.ok())
    return Fail(AppendErrorStatus(st.message()), st.message());
  return WriteOutcome{204, "", count};
}

http::Handler RemoteWriteHandler(scrape::AppenderFactory appenders, ReceiverStats* stats) {
  return [appenders = std::move(appenders), stats](const http::HttpRequest& req,
                                                   http::HttpResponse& res) {
    if (stats) stats->requests.fetch_add(1, std::memory_order_relaxed);
    WriteOutcome out = HandleRemoteWrite(req.Header("Content-Type"), req.Header("Content-Encoding"),
                                         req.body, appenders, NowMs());
    res.status = out.status;
    if (out.status >= 300) {
      if (stats) stats->errors.fetch_add(1, std::memory_order_relaxed);
      // Errors name the series; one with thousands of labels must not turn
      // into a megabyte answer.
      constexpr size_t kMaxMessage = 1024;
      if (out.message.size() > kMaxMessage)
        out.message = out.message.substr(0, kMaxMessage) + "...";
      res.SetContent(out.message + "\n", "text/plain; charset=utf-8");
      return;
    }
    if (stats) stats->samples.fetch_add(out.samples, std::memory_order_relaxed);
  };
}

void RegisterRemoteWriteReceiver(http::Router& router, scrape::AppenderFactory appenders,
                                 ReceiverStats* stats) {
  router.Post(kRemoteWritePath, RemoteWriteHandler(std::move(appenders), stats),
              http::RouteOptions{.max_body_bytes = kMaxRemoteWriteBodyBytes});
}

}  // namespace gpumon::remote
