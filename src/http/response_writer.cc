#include "http/response_writer.h"

#include <time.h>

#include <cstdio>
#include <ctime>
#include <mutex>

namespace gpumon::http {
namespace {

bool IsTokenChar(unsigned char c) {
  if (c >= '0' && c <= '9') return true;
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return true;
  switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~':
      return true;
    default:
      return false;
  }
}

bool SafeField(const std::string& name, const std::string& value) {
  if (name.empty()) return false;
  for (unsigned char c : name) {
    if (!IsTokenChar(c)) return false;
  }
  for (unsigned char c : value) {
    if (c == '\r' || c == '\n' || c == '\0') return false;
  }
  return true;
}

bool ServerOwned(std::string_view name) {
  return EqualsIgnoreCase(name, "Content-Length") || EqualsIgnoreCase(name, "Transfer-Encoding") ||
         EqualsIgnoreCase(name, "Connection") || EqualsIgnoreCase(name, "Date");
}

void AppendField(std::string* out, std::string_view name, std::string_view value) {
  out->append(name);
  out->append(": ");
  out->append(value);
  out->append("\r\n");
}

}  // namespace

bool StatusForbidsBody(int status) {
  return (status >= 100 && status < 200) || status == 204 || status == 304;
}

std::string SerializeHead(const HttpResponse& res, const Headers& default_headers,
                          BodyFraming framing, size_t content_length, bool keep_alive,
                          bool http10_client) {
  std::string out;
  out.reserve(256);
  // We speak HTTP/1.1 to every client; an HTTP/1.0 one reads it fine
  // (RFC 9110 6.2) as long as we avoid chunked coding, which kClose does.
  const int status = res.status >= 100 && res.status <= 999 ? res.status : 500;
  out.append("HTTP/1.1 ");
  out.append(std::to_string(status));
  out.push_back(' ');
  const std::string_view reason = ReasonPhrase(status);
  out.append(reason.empty() ? std::string_view("Unknown") : reason);
  out.append("\r\n");
  for (const Headers::Field& f : default_headers.fields()) {
    if (ServerOwned(f.first) || res.headers.Has(f.first) || !SafeField(f.first, f.second)) continue;
    AppendField(&out, f.first, f.second);
  }
  for (const Headers::Field& f : res.headers.fields()) {
    if (ServerOwned(f.first) || !SafeField(f.first, f.second)) continue;
    AppendField(&out, f.first, f.second);
  }
  AppendField(&out, "Date", HttpDate());
  switch (framing) {
    case BodyFraming::kNone:
    case BodyFraming::kClose:
      break;
    case BodyFraming::kLength:
      AppendField(&out, "Content-Length", std::to_string(content_length));
      break;
    case BodyFraming::kChunked:
      AppendField(&out, "Transfer-Encoding", "chunked");
      break;
  }
  if (!keep_alive) {
    AppendField(&out, "Connection", "close");
  } else if (http10_client) {
    AppendField(&out, "Connection", "keep-alive");
  }
  out.append("\r\n");
  return out;
}

std::string ChunkLine(size_t size) {
  char buf[32];
  const int n = std::snprintf(buf, sizeof(buf), "%zx\r\n", size);
  return std::string(buf, static_cast<size_t>(n));
}

std::string HttpDate() {
  // Formatted once per second, not per response.
  static std::mutex mu;
  static time_t cached_second = 0;
  static char cached[40];
  const time_t now = std::time(nullptr);
  std::lock_guard<std::mutex> lock(mu);
  if (now != cached_second) {
    struct tm tm;
    gmtime_r(&now, &tm);
    // Names spelled out: strftime's %a and %b follow the process locale.
    static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                              "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    std::snprintf(cached, sizeof(cached), "%s, %02d %s %04d %02d:%02d:%02d GMT", kDays[tm.tm_wday],
                  tm.tm_mday, kMonths[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min,
                  tm.tm_sec);
    cached_second = now;
  }
  return cached;
}

}  // namespace gpumon::http
