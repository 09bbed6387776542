#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "promql/functions/internal.h"
#include "promql/parser/quote.h"

namespace gpumon::promql::fn {

const Label* MetricNameLabel(const Labels& labels) {
  for (const Label& l : labels) {
    const int c = std::string_view(l.name).compare(kMetricName);
    if (c == 0) return &l;
    if (c > 0) break;
  }
  return nullptr;
}

std::string_view MetricNameOf(const Labels& labels) {
  const Label* l = MetricNameLabel(labels);
  return l == nullptr ? std::string_view() : std::string_view(l->value);
}

Labels DropMetricName(const Labels& labels) {
  if (MetricNameLabel(labels) == nullptr) return labels;
  thread_local Labels last_in;
  thread_local Labels last_out;
  if (labels == last_in) return last_out;
  std::vector<Label> items;
  items.reserve(labels.size() - 1);
  for (const auto& l : labels) {
    if (l.name != kMetricName) items.push_back(l);
  }
  last_in = labels;
  last_out = Labels::FromSorted(std::move(items));
  return last_out;
}

const Vector* VectorArg(const FunctionArgs& a, size_t i) {
  if (i >= a.args.size()) return nullptr;
  return std::get_if<Vector>(&a.args[i]);
}

const Matrix* MatrixArg(const FunctionArgs& a, size_t i) {
  if (i >= a.args.size()) return nullptr;
  return std::get_if<Matrix>(&a.args[i]);
}

std::optional<SeriesView> SeriesArg(const FunctionArgs& a, size_t i) {
  const Matrix* m = MatrixArg(a, i);
  if (m == nullptr) return std::nullopt;
  if (a.window_metric != nullptr) return SeriesView{*a.window_metric, a.window_points};
  if (m->empty()) return std::nullopt;
  return SeriesView{m->front().metric, m->front().points};
}

double ScalarArg(const FunctionArgs& a, size_t i, double def) {
  if (i >= a.args.size()) return def;
  if (const auto* s = std::get_if<Scalar>(&a.args[i])) return s->v;
  // Prometheus hands scalars over as one-element vectors; accept both.
  if (const auto* v = std::get_if<Vector>(&a.args[i]); v != nullptr && !v->empty()) {
    return v->front().f;
  }
  return def;
}

bool HasArg(const FunctionArgs& a, size_t i) { return i < a.args.size(); }

std::string_view StringArg(const FunctionArgs& a, size_t i) {
  if (i >= a.args.size()) return {};
  if (const auto* s = std::get_if<String>(&a.args[i])) return s->v;
  return {};
}

std::string FormatG(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  // Shortest round-trip digits, then Go's layout: %e when the decimal
  // exponent is < -4 or >= 6 (strconv's rule for shortest 'g'), else %f.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<size_t>(res.ptr - buf));
  bool neg = false;
  if (!sci.empty() && sci.front() == '-') {
    neg = true;
    sci.remove_prefix(1);
  }
  size_t epos = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, epos)) {
    if (c != '.') digits.push_back(c);
  }
  int exp = std::atoi(std::string(sci.substr(epos + 1)).c_str());
  std::string out = neg ? "-" : "";
  const int nd = static_cast<int>(digits.size());
  if (exp < -4 || exp >= 6) {
    out.push_back(digits[0]);
    if (nd > 1) {
      out.push_back('.');
      out.append(digits, 1, std::string::npos);
    }
    out.push_back('e');
    out.push_back(exp < 0 ? '-' : '+');
    int ax = std::abs(exp);
    if (ax < 10) out.push_back('0');
    out += std::to_string(ax);
    return out;
  }
  const int dp = exp + 1;
  if (dp > 0) {
    for (int i = 0; i < dp; ++i) out.push_back(i < nd ? digits[i] : '0');
  } else {
    out.push_back('0');
  }
  const int prec = std::max(nd - dp, 0);
  if (prec > 0) {
    out.push_back('.');
    for (int i = 0; i < prec; ++i) {
      int j = dp + i;
      out.push_back(j >= 0 && j < nd ? digits[j] : '0');
    }
  }
  return out;
}

std::string FormatF(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[512];
  std::snprintf(buf, sizeof(buf), "%.6f", v);
  return buf;
}

std::string QuoteGo(std::string_view s) { return ::gpumon::promql::internal::GoQuote(s); }

double GoMax(double a, double b) {
  if (std::isinf(a) && a > 0) return a;
  if (std::isinf(b) && b > 0) return b;
  if (std::isnan(a) || std::isnan(b)) return std::nan("");
  if (a == 0 && a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

double GoMin(double a, double b) {
  if (std::isinf(a) && a < 0) return a;
  if (std::isinf(b) && b < 0) return b;
  if (std::isnan(a) || std::isnan(b)) return std::nan("");
  if (a == 0 && a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

double QuantileOf(double q, std::span<double> values) {
  if (values.empty() || std::isnan(q)) return std::nan("");
  if (q < 0) return -HUGE_VAL;
  if (q > 1) return HUGE_VAL;
  std::sort(values.begin(), values.end(), [](double x, double y) {
    if (std::isnan(x)) return !std::isnan(y);
    return x < y;
  });
  const double n = static_cast<double>(values.size());
  const double rank = q * (n - 1);
  const double lower = std::max(0.0, std::floor(rank));
  const double upper = std::min(n - 1, lower + 1);
  const double weight = rank - std::floor(rank);
  return values[static_cast<size_t>(lower)] * (1 - weight) +
         values[static_cast<size_t>(upper)] * weight;
}

void WarnInvalidQuantile(const FunctionArgs& a, double q) {
  if (a.annotations == nullptr) return;
  if (std::isnan(q) || q < 0 || q > 1) {
    a.annotations->AddWarning("PromQL warning: quantile value should be between 0 and 1, got " +
                              FormatG(q));
  }
}

}  // namespace gpumon::promql::fn
