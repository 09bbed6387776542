#include "scrape/http_fetch.h"

#include <httplib.h>

#include <chrono>

namespace gpumon::scrape {
namespace {

// Reason phrases for the statuses scrapes commonly meet (Go's wording).
std::string StatusText(int status) {
  switch (status) {
    case 301:
      return "Moved Permanently";
    case 302:
      return "Found";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return "";
  }
}

}  // namespace

Result<FetchResult> HttpFetch(const std::string& url, int64_t timeout_ms, uint64_t body_limit) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return Status::Error("invalid URL \"" + url + "\"");
  size_t path_start = url.find('/', scheme_end + 3);
  std::string origin = path_start == std::string::npos ? url : url.substr(0, path_start);
  std::string path = path_start == std::string::npos ? "/" : url.substr(path_start);

  httplib::Client client(origin);
  if (!client.is_valid()) return Status::Error("cannot scrape \"" + url + "\": unsupported URL");
  const time_t sec = timeout_ms / 1000;
  const time_t usec = (timeout_ms % 1000) * 1000;
  client.set_connection_timeout(sec, usec);
  client.set_read_timeout(sec, usec);
  client.set_write_timeout(sec, usec);
  client.set_decompress(true);
  char timeout_s[32];
  std::snprintf(timeout_s, sizeof timeout_s, "%g", static_cast<double>(timeout_ms) / 1000.0);
  httplib::Headers headers = {
      {"Accept",
       "application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.4,*/*;q=0.1"},
      {"Accept-Encoding", "gzip"},
      {"User-Agent", "gpumon-scrape"},
      {"X-Prometheus-Scrape-Timeout-Seconds", timeout_s},
  };
  FetchResult out;
  bool too_big = false;
  bool late = false;
  auto res = client.Get(path, headers, [&](const char* data, size_t n) {
    if (std::chrono::steady_clock::now() > deadline) {
      late = true;
      return false;
    }
    if (body_limit > 0 && out.body.size() + n > body_limit) {
      too_big = true;
      return false;
    }
    out.body.append(data, n);
    return true;
  });
  if (too_big) {
    return Status::Error("body size limit exceeded (limit: " + std::to_string(body_limit) +
                         " bytes)");
  }
  if (late || std::chrono::steady_clock::now() > deadline) {
    return Status::Error("Get \"" + url + "\": context deadline exceeded");
  }
  if (!res) {
    return Status::Error("Get \"" + url + "\": " + httplib::to_string(res.error()));
  }
  if (res->status != 200) {
    return Status::Error("server returned HTTP status " + std::to_string(res->status) + " " +
                         StatusText(res->status));
  }
  out.content_type = res->get_header_value("Content-Type");
  return out;
}

}  // namespace gpumon::scrape
