#include "web/api/params.h"

#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "common/duration.h"
#include "web/api/api_error.h"

namespace gpumon::web::api {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Days since 1970-01-01 of a proleptic Gregorian date.
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

bool Digits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

bool IsLeap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

// RFC 3339 as Go's time.RFC3339Nano layout parses it (4-digit years).
bool ParseRfc3339(std::string_view s, int64_t* ms) {
  int year, mon, day, hour, min, sec;
  if (!Digits(s, 0, 4, &year) || s.size() < 20 || s[4] != '-' || !Digits(s, 5, 2, &mon) ||
      s[7] != '-' || !Digits(s, 8, 2, &day) || s[10] != 'T' || !Digits(s, 11, 2, &hour) ||
      s[13] != ':' || !Digits(s, 14, 2, &min) || s[16] != ':' || !Digits(s, 17, 2, &sec)) {
    return false;
  }
  static constexpr int kMonthDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (mon < 1 || mon > 12 || day < 1 ||
      day > kMonthDays[mon - 1] + (mon == 2 && IsLeap(year) ? 1 : 0) || hour > 23 || min > 59 ||
      sec > 59) {
    return false;
  }
  size_t pos = 19;
  int64_t frac_ms = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    size_t start = pos;
    int64_t scale = 100;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      frac_ms += (s[pos] - '0') * scale;  // digits past milliseconds truncate
      scale /= 10;
      ++pos;
    }
    if (pos == start || pos - start > 9) return false;
  }
  int64_t offset_s = 0;
  if (pos < s.size() && s[pos] == 'Z') {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh, om;
    if (!Digits(s, pos + 1, 2, &oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !Digits(s, pos + 4, 2, &om) || oh > 23 || om > 59) {
      return false;
    }
    offset_s = (oh * 3600 + om * 60) * (s[pos] == '-' ? -1 : 1);
    pos += 6;
  } else {
    return false;
  }
  if (pos != s.size()) return false;
  int64_t secs =
      DaysFromCivil(year, static_cast<unsigned>(mon), static_cast<unsigned>(day)) * 86400 +
      hour * 3600 + min * 60 + sec - offset_s;
  *ms = secs * 1000 + frac_ms;
  return true;
}

// strconv.ParseFloat's acceptance: the whole text is a number (decimal,
// hex float, inf, nan, with optional sign and underscores not supported).
bool ParseGoFloat(std::string_view s, double* out) {
  if (s.empty()) return false;
  std::string text(s);
  // strtod also takes leading spaces, which Go rejects.
  if (text.front() == ' ' || text.front() == '\t' || text.front() == '\n') return false;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return false;
  *out = v;
  return true;
}

}  // namespace

std::string UrlDecode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '+') {
      out += ' ';
    } else if (c == '%' && i + 2 < s.size() && HexDigit(s[i + 1]) >= 0 && HexDigit(s[i + 2]) >= 0) {
      out += static_cast<char>(HexDigit(s[i + 1]) * 16 + HexDigit(s[i + 2]));
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

void Params::AddUrlEncoded(std::string_view text) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('&', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view pair = text.substr(start, end - start);
    if (!pair.empty()) {
      size_t eq = pair.find('=');
      if (eq == std::string_view::npos) {
        Add(UrlDecode(pair), "");
      } else {
        Add(UrlDecode(pair.substr(0, eq)), UrlDecode(pair.substr(eq + 1)));
      }
    }
    start = end + 1;
  }
}

Params Params::FromRequest(std::string_view query_string, std::string_view content_type,
                           std::string_view body) {
  Params p;
  if (content_type.starts_with("application/x-www-form-urlencoded")) p.AddUrlEncoded(body);
  p.AddUrlEncoded(query_string);
  return p;
}

std::string Params::Get(std::string_view name) const {
  for (const auto& [n, v] : items_) {
    if (n == name) return v;
  }
  return "";
}

bool Params::Has(std::string_view name) const {
  for (const auto& [n, v] : items_) {
    if (n == name) return true;
  }
  return false;
}

std::vector<std::string> Params::GetAll(std::string_view name) const {
  std::vector<std::string> out;
  for (const auto& [n, v] : items_) {
    if (n == name) out.push_back(v);
  }
  return out;
}

Result<int64_t> ParseTime(std::string_view s) {
  double f;
  if (ParseGoFloat(s, &f)) {
    // Whole seconds and milliseconds rounded separately, as Prometheus does.
    double whole;
    double frac = std::modf(f, &whole);
    if (!std::isfinite(f) || std::fabs(whole) > 9.2e15) {
      return Status::Error("cannot parse " + GoQuote(s) + " to a valid timestamp");
    }
    return static_cast<int64_t>(whole) * 1000 + static_cast<int64_t>(std::round(frac * 1000));
  }
  int64_t ms;
  if (ParseRfc3339(s, &ms)) return ms;
  if (s == "-292273086-05-16T16:47:06Z") return kMinTimeMs;
  if (s == "292277025-08-18T07:12:54.999999999Z") return kMaxTimeMs;
  return Status::Error("cannot parse " + GoQuote(s) + " to a valid timestamp");
}

Result<int64_t> ParseDuration(std::string_view s) {
  double f;
  if (ParseGoFloat(s, &f)) {
    double ns = f * 1e9;
    // 2^63 itself does not fit (the literal rounds to it as a double).
    if (std::isnan(f) || ns >= 9.223372036854775807e18 || ns < -9.223372036854775808e18) {
      return Status::Error("cannot parse " + GoQuote(s) +
                           " to a valid duration. It overflows int64");
    }
    return static_cast<int64_t>(ns) / 1000000;
  }
  auto d = gpumon::ParseDuration(s);
  if (d.ok()) return static_cast<int64_t>(d->count());
  return Status::Error("cannot parse " + GoQuote(s) + " to a valid duration");
}

Result<int64_t> ParseLimit(std::string_view s) {
  if (s.empty()) return int64_t{0};
  int64_t v = 0;
  const char* b = s.data();
  const char* e = s.data() + s.size();
  if (*b == '+' && s.size() > 1) ++b;  // Atoi accepts a leading '+'
  auto [p, ec] = std::from_chars(b, e, v);
  if (ec == std::errc::result_out_of_range) {
    return Status::Error("strconv.Atoi: parsing " + GoQuote(s) + ": value out of range");
  }
  if (ec != std::errc() || p != e) {
    return Status::Error("strconv.Atoi: parsing " + GoQuote(s) + ": invalid syntax");
  }
  if (v < 0) return Status::Error("limit must be non-negative");
  return v;
}

std::string FormatRfc3339(int64_t ms) {
  int64_t secs = ms >= 0 ? ms / 1000 : (ms - 999) / 1000;
  int64_t frac = ms - secs * 1000;
  time_t t = static_cast<time_t>(secs);
  struct tm tm;
  gmtime_r(&t, &tm);
  char buf[64];
  size_t n = strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  if (frac != 0) n += snprintf(buf + n, sizeof buf - n, ".%03" PRId64, frac);
  snprintf(buf + n, sizeof buf - n, "Z");
  return buf;
}

std::optional<ApiError> ParseTimeRangeParams(const Params& p, TimeRangeParams* range) {
  for (auto [name, out] : {std::pair<const char*, int64_t*>{"start", &range->start},
                           std::pair<const char*, int64_t*>{"end", &range->end}}) {
    const std::string v = p.Get(name);
    if (v.empty()) continue;
    auto t = ParseTime(v);
    if (!t.ok()) {
      return InvalidParam(
          name, std::string("invalid time value for '") + name + "': " + t.status().message());
    }
    *out = *t;
  }
  return std::nullopt;
}

}  // namespace gpumon::web::api
