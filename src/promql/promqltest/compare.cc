#include "promql/promqltest/compare.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <map>

#include "tsdb/sample.h"

namespace gpumon::promql::promqltest {

namespace {

std::string FormatSeq(const std::vector<SequenceValue>& vals) {
  std::string out = "[";
  for (size_t i = 0; i < vals.size(); ++i) {
    if (i) out += " ";
    out += vals[i].omitted ? "_" : FormatFloat(vals[i].value);
  }
  return out + "]";
}

std::string FormatPoints(const std::vector<FPoint>& pts) {
  std::string out = std::to_string(pts.size()) + (pts.size() == 1 ? " point [" : " points [");
  for (size_t i = 0; i < pts.size(); ++i) {
    if (i) out += " ";
    out += FormatFloat(pts[i].f) + " @" + std::to_string(pts[i].t);
  }
  return out + "]";
}

// Expected series by label set; a later line for the same series replaces
// an earlier one, as in Prometheus.
std::map<Labels, const ExpectedSeries*> Index(const Expected& exp) {
  std::map<Labels, const ExpectedSeries*> m;
  for (const ExpectedSeries& s : exp.series) m[s.metric] = &s;
  return m;
}

std::string CompareVector(const Expected& exp, const Vector& vec) {
  if (exp.scalar) return "expected scalar result, but got vector " + DescribeValue(vec);
  auto index = Index(exp);
  std::map<Labels, bool> seen;
  for (size_t pos = 0; pos < vec.size(); ++pos) {
    const Sample& s = vec[pos];
    auto it = index.find(s.metric);
    if (it == index.end()) {
      return "unexpected metric " + s.metric.ToString() + " in result, has value " +
             FormatFloat(s.f);
    }
    const ExpectedSeries& e = *it->second;
    if (exp.ordered && e.pos != static_cast<int>(pos + 1)) {
      return "expected metric " + s.metric.ToString() + " with " + FormatSeq(e.values) +
             " at position " + std::to_string(e.pos) + " but was at " + std::to_string(pos + 1);
    }
    if (e.values.empty()) return "expected metric " + s.metric.ToString() + " has no value";
    if (!AlmostEqual(e.values[0].value, s.f)) {
      return "expected " + FormatFloat(e.values[0].value) + " for " + s.metric.ToString() +
             " but got " + FormatFloat(s.f);
    }
    seen[s.metric] = true;
  }
  for (const auto& [m, e] : index) {
    if (!seen.count(m)) {
      return "expected metric " + m.ToString() + " with " + FormatSeq(e->values) + " not found";
    }
  }
  return "";
}

std::string CompareMatrix(const Expected& exp, const Matrix& mat) {
  if (exp.ordered) return "expected ordered result, but query returned a matrix";
  if (exp.scalar) return "expected scalar result, but got matrix " + DescribeValue(mat);
  for (size_t i = 0; i + 1 < mat.size(); ++i) {
    if (mat[i].metric > mat[i + 1].metric) {
      return "matrix results should always be sorted by labels, but series at index " +
             std::to_string(i + 1) + " with labels " + mat[i + 1].metric.ToString() +
             " sorts before series at index " + std::to_string(i) + " with labels " +
             mat[i].metric.ToString();
    }
  }
  auto index = Index(exp);
  std::map<Labels, bool> seen;
  for (const Series& s : mat) {
    auto it = index.find(s.metric);
    if (it == index.end()) {
      return "unexpected metric " + s.metric.ToString() + " in result, has " +
             FormatPoints(s.points);
    }
    seen[s.metric] = true;
    const ExpectedSeries& e = *it->second;
    std::vector<FPoint> want;
    for (size_t i = 0; i < e.values.size(); ++i) {
      int64_t t = exp.start_ms + static_cast<int64_t>(i) * exp.step_ms;
      if (!exp.end_ms || t > *exp.end_ms) {
        return "expected " + std::to_string(e.values.size()) + " points for " +
               s.metric.ToString() + ", but query time range cannot return this many points";
      }
      if (!e.values[i].omitted) want.push_back({t, e.values[i].value});
    }
    if (want.size() != s.points.size()) {
      return "expected " + std::to_string(want.size()) + " float points for " +
             s.metric.ToString() + " " + FormatPoints(want) + ", but got " + FormatPoints(s.points);
    }
    for (size_t i = 0; i < want.size(); ++i) {
      const FPoint& got = s.points[i];
      if (want[i].t != got.t) {
        return "expected float value at index " + std::to_string(i) + " for " +
               s.metric.ToString() + " to have timestamp " + std::to_string(want[i].t) +
               ", but it had timestamp " + std::to_string(got.t) + " (result has " +
               FormatPoints(s.points) + ")";
      }
      if (!AlmostEqual(got.f, want[i].f)) {
        return "expected float value at index " + std::to_string(i) +
               " (t=" + std::to_string(got.t) + ") for " + s.metric.ToString() + " to be " +
               FormatFloat(want[i].f) + ", but got " + FormatFloat(got.f) + " (result has " +
               FormatPoints(s.points) + ")";
      }
    }
  }
  for (const auto& [m, e] : index) {
    if (!seen.count(m)) return "expected metric " + m.ToString() + " not found";
  }
  return "";
}

}  // namespace

bool AlmostEqual(double a, double b, double epsilon) {
  if (tsdb::IsStaleNaN(a) || tsdb::IsStaleNaN(b)) return tsdb::IsStaleNaN(a) && tsdb::IsStaleNaN(b);
  if (std::isnan(a) && std::isnan(b)) return true;
  if (a == b) return true;  // also equal infinities
  const double min_normal = std::numeric_limits<double>::min();
  double abs_sum = std::fabs(a) + std::fabs(b);
  double diff = std::fabs(a - b);
  if (a == 0 || b == 0 || abs_sum < min_normal) return diff < epsilon * min_normal;
  return diff / std::min(abs_sum, std::numeric_limits<double>::max()) < epsilon;
}

std::string CompareResult(const Expected& exp, const Value& got) {
  if (const auto* v = std::get_if<Vector>(&got)) return CompareVector(exp, *v);
  if (const auto* m = std::get_if<Matrix>(&got)) return CompareMatrix(exp, *m);
  if (const auto* s = std::get_if<Scalar>(&got)) {
    if (!exp.scalar) return "expected vector or matrix result, but got scalar " + FormatFloat(s->v);
    if (!AlmostEqual(*exp.scalar, s->v)) {
      return "expected scalar " + FormatFloat(*exp.scalar) + " but got " + FormatFloat(s->v);
    }
    return "";
  }
  const auto& str = std::get<String>(got);
  if (exp.str != str.v) return "expected string \"" + exp.str + "\" but got \"" + str.v + "\"";
  return "";
}

std::string FormatFloat(double v) {
  if (tsdb::IsStaleNaN(v)) return "stale";
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return ec == std::errc() ? std::string(buf, p) : std::to_string(v);
}

std::string DescribeValue(const Value& v, size_t max_chars) {
  std::string out;
  if (const auto* s = std::get_if<Scalar>(&v)) {
    out = "scalar " + FormatFloat(s->v);
  } else if (const auto* str = std::get_if<String>(&v)) {
    out = "string \"" + str->v + "\"";
  } else if (const auto* vec = std::get_if<Vector>(&v)) {
    out = "vector(" + std::to_string(vec->size()) + ") {";
    for (size_t i = 0; i < vec->size() && out.size() < max_chars; ++i) {
      if (i) out += ", ";
      out += (*vec)[i].metric.ToString() + " => " + FormatFloat((*vec)[i].f);
    }
    out += "}";
  } else {
    const auto& mat = std::get<Matrix>(v);
    out = "matrix(" + std::to_string(mat.size()) + ") {";
    for (size_t i = 0; i < mat.size() && out.size() < max_chars; ++i) {
      if (i) out += ", ";
      out += mat[i].metric.ToString() + " => " + FormatPoints(mat[i].points);
    }
    out += "}";
  }
  if (out.size() > max_chars) out = out.substr(0, max_chars) + "...";
  return out;
}

}  // namespace gpumon::promql::promqltest
