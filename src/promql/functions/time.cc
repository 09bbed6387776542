// time(), timestamp(), vector(), scalar() and the calendar functions
// (minute ... year) in UTC, as Prometheus computes them.
#include <cmath>
#include <cstdint>
#include <limits>

#include "promql/functions/internal.h"

namespace gpumon::promql::fn {
namespace {

struct Civil {
  int64_t year;
  unsigned month;  // 1..12
  unsigned day;    // 1..31
  int64_t yday;    // 1..366
  unsigned wday;   // 0 = Sunday
  int64_t hour;
  int64_t minute;
};

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// Proleptic Gregorian calendar from day counts (Howard Hinnant's
// algorithms) in 64-bit arithmetic, so absurd inputs cannot overflow.
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = FloorDiv(y, 400);
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

Civil ToCivil(int64_t unix_seconds) {
  const int64_t days = FloorDiv(unix_seconds, 86400);
  const int64_t secs = unix_seconds - days * 86400;
  const int64_t z = days + 719468;
  const int64_t era = FloorDiv(z, 146097);
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  Civil c;
  c.day = static_cast<unsigned>(doy - (153 * mp + 2) / 5 + 1);
  c.month = static_cast<unsigned>(mp < 10 ? mp + 3 : mp - 9);
  c.year = yoe + era * 400 + (c.month <= 2 ? 1 : 0);
  c.yday = days - DaysFromCivil(c.year, 1, 1) + 1;
  c.wday = static_cast<unsigned>(days + 4 - FloorDiv(days + 4, 7) * 7);  // 1970-01-01: Thursday
  c.hour = secs / 3600;
  c.minute = (secs % 3600) / 60;
  return c;
}

// Go's int64(f) for a float: truncation, with out-of-range values (and
// NaN) mapping to the minimum as on amd64.
int64_t GoFloatToInt64(double f) {
  if (std::isnan(f) || f >= 9223372036854775808.0 || f < -9223372036854775808.0) {
    return std::numeric_limits<int64_t>::min();
  }
  return static_cast<int64_t>(f);
}

// With no argument the function applies to the evaluation time
// (vector(time())); otherwise to every sample's value, read as Unix
// seconds, dropping the metric name.
template <typename F>
Status DateFn(const FunctionArgs& a, Vector& out, F f) {
  if (!HasArg(a, 0)) {
    out.push_back(Sample{Labels(), a.ts, f(ToCivil(a.ts / 1000))});
    return Status::Ok();
  }
  const Vector* in = VectorArg(a, 0);
  if (in == nullptr) return Status::Ok();
  for (const Sample& s : *in) {
    out.push_back(Sample{DropMetricName(s.metric), a.ts, f(ToCivil(GoFloatToInt64(s.f)))});
  }
  return Status::Ok();
}

double DaysIn(const Civil& c) {
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (c.year % 4 == 0 && c.year % 100 != 0) || c.year % 400 == 0;
  return (c.month == 2 && leap) ? 29 : kDays[c.month - 1];
}

}  // namespace

Status Time(const FunctionArgs& a, Vector& out) {
  out.push_back(Sample{Labels(), a.ts, static_cast<double>(a.ts) / 1000});
  return Status::Ok();
}

// The sample's own time: the engine passes a selector's samples with the
// time they were scraped, other expressions' with the evaluation time.
Status Timestamp(const FunctionArgs& a, Vector& out) {
  const Vector* in = VectorArg(a, 0);
  if (in == nullptr) return Status::Ok();
  for (const Sample& s : *in) {
    out.push_back(Sample{DropMetricName(s.metric), a.ts, static_cast<double>(s.t) / 1000});
  }
  return Status::Ok();
}

Status VectorFn(const FunctionArgs& a, Vector& out) {
  out.push_back(Sample{Labels(), a.ts, ScalarArg(a, 0, std::nan(""))});
  return Status::Ok();
}

// scalar(v): the value of a one-element vector, else NaN.
Status ScalarFn(const FunctionArgs& a, Vector& out) {
  const Vector* in = VectorArg(a, 0);
  const double v = (in != nullptr && in->size() == 1) ? in->front().f : std::nan("");
  out.push_back(Sample{Labels(), a.ts, v});
  return Status::Ok();
}

Status Minute(const FunctionArgs& a, Vector& out) {
  return DateFn(a, out, [](const Civil& c) { return static_cast<double>(c.minute); });
}
Status Hour(const FunctionArgs& a, Vector& out) {
  return DateFn(a, out, [](const Civil& c) { return static_cast<double>(c.hour); });
}
Status DayOfWeek(const FunctionArgs& a, Vector& out) {
  return DateFn(a, out, [](const Civil& c) { return static_cast<double>(c.wday); });
}
Status DayOfMonth(const FunctionArgs& a, Vector& out) {
  return DateFn(a, out, [](const Civil& c) { return static_cast<double>(c.day); });
}
Status DayOfYear(const FunctionArgs& a, Vector& out) {
  return DateFn(a, out, [](const Civil& c) { return static_cast<double>(c.yday); });
}
Status DaysInMonth(const FunctionArgs& a, Vector& out) {
  return DateFn(a, out, [](const Civil& c) { return DaysIn(c); });
}
Status Month(const FunctionArgs& a, Vector& out) {
  return DateFn(a, out, [](const Civil& c) { return static_cast<double>(c.month); });
}
Status Year(const FunctionArgs& a, Vector& out) {
  return DateFn(a, out, [](const Civil& c) { return static_cast<double>(c.year); });
}

}  // namespace gpumon::promql::fn
