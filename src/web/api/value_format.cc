#include "web/api/value_format.h"

#include <charconv>
#include <cmath>
#include <cstring>

namespace gpumon::web::api {

namespace {

// Go's 'f' format with precision -1 writes the shortest digits that round-
// trip and pads with zeros (2^64 → "18446744073709552000"), where
// to_chars(fixed) writes every digit of the exact value. From 2^53 up every
// double is a whole number, so: shortest digits in scientific form, then
// spelled out.
size_t FormatLargeFixed(double v, char* buf) {
  char sci[32];
  auto [end, ec] = std::to_chars(sci, sci + sizeof(sci), v, std::chars_format::scientific);
  if (ec != std::errc()) return 0;
  const char* p = sci;
  char* out = buf;
  if (*p == '-') *out++ = *p++;
  char digits[20];
  int n = 0;
  for (; p < end && *p != 'e'; ++p) {
    if (*p != '.' && n < 20) digits[n++] = *p;
  }
  int exp = 0;  // 15..20 here; the text after 'e' is not NUL-terminated
  for (const char* e = p + 1; e < end; ++e) {
    if (*e >= '0' && *e <= '9') exp = exp * 10 + (*e - '0');
  }
  const int int_digits = exp + 1;
  for (int i = 0; i < int_digits; ++i) *out++ = i < n ? digits[i] : '0';
  if (n > int_digits) {
    *out++ = '.';
    for (int i = int_digits; i < n; ++i) *out++ = digits[i];
  }
  return static_cast<size_t>(out - buf);
}

}  // namespace

size_t FormatSampleValue(double v, char* buf) {
  if (std::isnan(v)) {
    std::memcpy(buf, "NaN", 3);
    return 3;
  }
  if (std::isinf(v)) {
    std::memcpy(buf, v > 0 ? "+Inf" : "-Inf", 4);
    return 4;
  }
  double a = std::fabs(v);
  // Whole numbers below 2^53 (counters, temperatures): every integer there
  // is a double, so the shortest text is the integer's digits; integer
  // formatting is much cheaper. -0 keeps its sign through to_chars below.
  if (a < 9007199254740992.0) {
    const auto i = static_cast<int64_t>(v);
    if (static_cast<double>(i) == v && (i != 0 || !std::signbit(v))) {
      return static_cast<size_t>(std::to_chars(buf, buf + 32, i).ptr - buf);
    }
  }
  if (a >= 9007199254740992.0 && a < 1e21) return FormatLargeFixed(v, buf);
  auto fmt = std::chars_format::fixed;
  if (a != 0 && (a < 1e-6 || a >= 1e21)) fmt = std::chars_format::scientific;
  // Shortest round-trip form, as Go's precision -1; fixed notation of
  // values below 1e21 fits in 32 bytes except for the tiny ones, which
  // take the scientific branch.
  auto [end, ec] = std::to_chars(buf, buf + 32, v, fmt);
  if (ec != std::errc()) return 0;
  return static_cast<size_t>(end - buf);
}

std::string FormatSampleValue(double v) {
  char buf[32];
  return std::string(buf, FormatSampleValue(v, buf));
}

size_t FormatTimestamp(int64_t ms, char* buf) {
  char* p = buf;
  uint64_t u = static_cast<uint64_t>(ms);
  if (ms < 0) {
    *p++ = '-';
    u = ~u + 1;  // magnitude, also for INT64_MIN
  }
  // Digits two at a time, back to front: a range answer formats one
  // timestamp per point.
  static constexpr char kPairs[] =
      "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
      "8081828384858687888990919293949596979899";
  uint64_t sec = u / 1000;
  const unsigned frac = static_cast<unsigned>(u % 1000);
  static constexpr uint64_t kPow10[] = {1ULL,
                                        10ULL,
                                        100ULL,
                                        1000ULL,
                                        10000ULL,
                                        100000ULL,
                                        1000000ULL,
                                        10000000ULL,
                                        100000000ULL,
                                        1000000000ULL,
                                        10000000000ULL,
                                        100000000000ULL,
                                        1000000000000ULL,
                                        10000000000000ULL,
                                        100000000000000ULL,
                                        1000000000000000ULL,
                                        10000000000000000ULL,
                                        100000000000000000ULL,
                                        1000000000000000000ULL,
                                        10000000000000000000ULL};
  int len = 1;  // digits of sec, written back to front in place
  while (len < 20 && sec >= kPow10[len]) ++len;
  p += len;
  char* d = p;
  while (sec >= 100) {
    const unsigned two = static_cast<unsigned>(sec % 100);
    sec /= 100;
    d -= 2;
    d[0] = kPairs[2 * two];
    d[1] = kPairs[2 * two + 1];
  }
  if (sec >= 10) {
    d -= 2;
    d[0] = kPairs[2 * sec];
    d[1] = kPairs[2 * sec + 1];
  } else {
    *--d = static_cast<char>('0' + sec);
  }
  if (frac != 0) {
    *p++ = '.';
    *p++ = static_cast<char>('0' + frac / 100);
    *p++ = static_cast<char>('0' + frac / 10 % 10);
    *p++ = static_cast<char>('0' + frac % 10);
  }
  return static_cast<size_t>(p - buf);
}

std::string FormatTimestamp(int64_t ms) {
  char buf[32];
  return std::string(buf, FormatTimestamp(ms, buf));
}

}  // namespace gpumon::web::api
