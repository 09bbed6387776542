#include "ingest/otlp_decoder.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "common/names.h"
#include "ingest/otlp_names.h"
#include "proto/otlp_metrics.pb.h"

namespace gpumon::ingest {
namespace {

using exposition::MetricFamily;
using exposition::MetricType;
using exposition::Sample;

constexpr uint32_t kNoRecordedValue = otlp::DATA_POINT_FLAGS_NO_RECORDED_VALUE_MASK;
constexpr size_t kMaxQuoted = 200;

// `s` (valid UTF-8) quoted, cut at a character boundary when long.
std::string Quote(std::string_view s) {
  if (s.size() > kMaxQuoted) {
    size_t cut = kMaxQuoted;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
    return "\"" + std::string(s.substr(0, cut)) + "...\"";
  }
  return "\"" + std::string(s) + "\"";
}

void AppendJsonString(std::string_view s, std::string* out) {
  out->push_back('"');
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        if (u < 0x20) {
          static constexpr char kHex[] = "0123456789abcdef";
          out->append("\\u00");
          out->push_back(kHex[u >> 4]);
          out->push_back(kHex[u & 15]);
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

void AppendBase64(std::string_view s, std::string* out) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t i = 0;
  for (; i + 3 <= s.size(); i += 3) {
    uint32_t v = (static_cast<unsigned char>(s[i]) << 16) |
                 (static_cast<unsigned char>(s[i + 1]) << 8) | static_cast<unsigned char>(s[i + 2]);
    out->push_back(kAlphabet[(v >> 18) & 63]);
    out->push_back(kAlphabet[(v >> 12) & 63]);
    out->push_back(kAlphabet[(v >> 6) & 63]);
    out->push_back(kAlphabet[v & 63]);
  }
  size_t rest = s.size() - i;
  if (rest == 0) return;
  uint32_t v = static_cast<unsigned char>(s[i]) << 16;
  if (rest == 2) v |= static_cast<unsigned char>(s[i + 1]) << 8;
  out->push_back(kAlphabet[(v >> 18) & 63]);
  out->push_back(kAlphabet[(v >> 12) & 63]);
  out->push_back(rest == 2 ? kAlphabet[(v >> 6) & 63] : '=');
  out->push_back('=');
}

// Renders an attribute value as label text; false when a string in it is
// not valid UTF-8. `json`: inside an array or map (strings quoted).
bool AppendAnyValue(const otlp::AnyValue& v, bool json, std::string* out) {
  switch (v.value_case()) {
    case otlp::AnyValue::kStringValue:
      if (!IsValidUtf8(v.string_value())) return false;
      if (json) {
        AppendJsonString(v.string_value(), out);
      } else {
        out->append(v.string_value());
      }
      return true;
    case otlp::AnyValue::kBoolValue:
      out->append(v.bool_value() ? "true" : "false");
      return true;
    case otlp::AnyValue::kIntValue:
      out->append(std::to_string(v.int_value()));
      return true;
    case otlp::AnyValue::kDoubleValue: {
      double d = v.double_value();
      if (json && !std::isfinite(d)) {
        AppendJsonString(OtlpFormatFloat(d), out);
      } else {
        out->append(OtlpFormatFloat(d));
      }
      return true;
    }
    case otlp::AnyValue::kBytesValue:
      if (json) out->push_back('"');
      AppendBase64(v.bytes_value(), out);
      if (json) out->push_back('"');
      return true;
    case otlp::AnyValue::kArrayValue: {
      out->push_back('[');
      bool first = true;
      for (const otlp::AnyValue& e : v.array_value().values()) {
        if (!first) out->push_back(',');
        first = false;
        if (e.value_case() == otlp::AnyValue::VALUE_NOT_SET) {
          out->append("null");
        } else if (!AppendAnyValue(e, true, out)) {
          return false;
        }
      }
      out->push_back(']');
      return true;
    }
    case otlp::AnyValue::kKvlistValue: {
      out->push_back('{');
      bool first = true;
      for (const otlp::KeyValue& kv : v.kvlist_value().values()) {
        if (!IsValidUtf8(kv.key())) return false;
        if (!first) out->push_back(',');
        first = false;
        AppendJsonString(kv.key(), out);
        out->push_back(':');
        if (kv.value().value_case() == otlp::AnyValue::VALUE_NOT_SET) {
          out->append("null");
        } else if (!AppendAnyValue(kv.value(), true, out)) {
          return false;
        }
      }
      out->push_back('}');
      return true;
    }
    case otlp::AnyValue::VALUE_NOT_SET:
      return true;
  }
  return true;
}

// Attributes as label pairs: sanitised names, same-name values joined with
// ";" in key order, empty values dropped, names in `reserved` prefixed
// with "exported_". Error: the index of an attribute that is not UTF-8.
struct AttrLabels {
  std::vector<Label> labels;  // sorted by name
  bool empty_key = false;     // an attribute had an empty key (ignored)
};

Result<AttrLabels> ConvertAttributes(
    const google::protobuf::RepeatedPtrField<otlp::KeyValue>& attrs,
    const std::set<std::string>& reserved, const std::set<std::string>* skip_keys,
    const std::string& path) {
  struct Entry {
    std::string name;
    std::string key;
    std::string value;
  };
  std::vector<Entry> entries;
  entries.reserve(attrs.size());
  AttrLabels out;
  for (int i = 0; i < attrs.size(); ++i) {
    const otlp::KeyValue& kv = attrs[i];
    const std::string at = path + ".attributes[" + std::to_string(i) + "]";
    if (!IsValidUtf8(kv.key())) return Status::Error(at + ": key is not valid UTF-8");
    if (skip_keys && skip_keys->count(kv.key())) continue;
    Entry e;
    if (!AppendAnyValue(kv.value(), false, &e.value)) {
      return Status::Error(at + " (key " + Quote(kv.key()) + "): value is not valid UTF-8");
    }
    e.name = OtlpLabelName(kv.key());
    if (e.name.empty()) {
      out.empty_key = true;
      continue;
    }
    if (e.value.empty()) continue;
    if (reserved.count(e.name)) e.name = "exported_" + e.name;
    e.key = kv.key();
    entries.push_back(std::move(e));
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.name != b.name ? a.name < b.name : a.key < b.key;
  });
  for (Entry& e : entries) {
    if (!out.labels.empty() && out.labels.back().name == e.name) {
      out.labels.back().value += ";" + e.value;
    } else {
      out.labels.push_back(Label{std::move(e.name), std::move(e.value)});
    }
  }
  return out;
}

// One family being built: samples in first-appearance order, a repeated
// series keeps its first position and its last value.
struct FamilyBuild {
  MetricType type = MetricType::kGauge;
  std::string help;
  std::string unit;
  std::vector<Sample> samples;
  std::map<std::vector<Label>, size_t> index;

  void Set(std::vector<Label> labels, double value) {
    auto it = index.find(labels);
    if (it != index.end()) {
      samples[it->second].value = value;
      return;
    }
    index.emplace(labels, samples.size());
    samples.push_back(Sample{std::move(labels), value, std::nullopt});
  }
};

enum class DeltaKind { kSum, kHistogram };

struct GroupBuild {
  Labels grouping;
  std::optional<int> pid;
  std::map<std::string, FamilyBuild> families;
  std::vector<std::string> order;
  // Accumulator keys of the families with delta points, with the family
  // names they expand into.
  std::map<std::string, DeltaKind> deltas;
  int64_t points = 0;
  std::vector<Sample> target_info;
};

std::vector<Label> WithLabel(const std::vector<Label>& base, std::string name, std::string value) {
  std::vector<Label> out;
  out.reserve(base.size() + 1);
  bool placed = false;
  for (const Label& l : base) {
    if (!placed && name < l.name) {
      out.push_back(Label{name, value});
      placed = true;
    }
    out.push_back(l);
  }
  if (!placed) out.push_back(Label{std::move(name), std::move(value)});
  return out;
}

// Histogram samples of one series; `buckets` per bucket (may be empty).
void EmitHistogram(GroupBuild& g, const std::string& base, const std::vector<Label>& labels,
                   const std::vector<double>& bounds, const std::vector<uint64_t>& buckets,
                   uint64_t count, bool has_sum, double sum) {
  FamilyBuild& b = g.families[base + "_bucket"];
  if (!buckets.empty()) {
    uint64_t cum = 0;
    for (size_t i = 0; i < bounds.size(); ++i) {
      cum += buckets[i];
      b.Set(WithLabel(labels, "le", OtlpFormatFloat(bounds[i])), static_cast<double>(cum));
    }
  }
  b.Set(WithLabel(labels, "le", "+Inf"), static_cast<double>(count));
  if (has_sum) g.families[base + "_sum"].Set(labels, sum);
  g.families[base + "_count"].Set(labels, static_cast<double>(count));
}

size_t HistogramSamples(size_t bounds, bool has_buckets) { return (has_buckets ? bounds : 0) + 3; }

struct Translator {
  const OtlpDecodeOptions& options;
  OtlpDeltaAccumulator::Txn& txn;
  OtlpTranslation result;
  std::vector<GroupBuild> groups;
  std::map<Labels, size_t> group_index;
  size_t samples = 0;

  // Claims `names` for a metric of `type` in the group; false (with the
  // conflicting name) when one is taken by another type.
  bool Claim(GroupBuild& g, const std::vector<std::string>& names, MetricType type,
             const std::string& help, const std::string& unit, std::string* taken) {
    for (const std::string& n : names) {
      auto it = g.families.find(n);
      if (it != g.families.end() && it->second.type != type) {
        *taken = n;
        return false;
      }
    }
    for (const std::string& n : names) {
      auto [it, inserted] = g.families.try_emplace(n);
      if (inserted) {
        it->second.type = type;
        it->second.help = help;
        it->second.unit = unit;
        g.order.push_back(n);
      }
    }
    return true;
  }

  bool Room(size_t n) {
    if (samples + n > options.max_samples) return false;
    samples += n;
    return true;
  }

  std::string TooMany() const {
    return "the request produces more than " + std::to_string(options.max_samples) +
           " samples; the rest was rejected";
  }

  Status Resource(const otlp::ResourceMetrics& rm, const std::string& path);
  Status Metric(GroupBuild& g, const std::set<std::string>& reserved, const otlp::Metric& m,
                const std::string& path);
  void Finish();
};

Status Translator::Resource(const otlp::ResourceMetrics& rm, const std::string& path) {
  const std::string rpath = path + ".resource";
  // Resource attributes: UTF-8 first, then the identifying ones.
  std::string service_name, service_namespace, instance;
  bool has_instance = false;
  std::optional<int> pid;
  std::map<std::string, std::string> promoted;  // sanitised name → value
  std::set<std::string> promote_keys(options.promoted_resource_attributes.begin(),
                                     options.promoted_resource_attributes.end());
  const auto& attrs = rm.resource().attributes();
  for (int i = 0; i < attrs.size(); ++i) {
    const otlp::KeyValue& kv = attrs[i];
    std::string text;
    const std::string at = rpath + ".attributes[" + std::to_string(i) + "]";
    if (!IsValidUtf8(kv.key())) return Status::Error(at + ": key is not valid UTF-8");
    if (!AppendAnyValue(kv.value(), false, &text)) {
      return Status::Error(at + " (key " + Quote(kv.key()) + "): value is not valid UTF-8");
    }
    const std::string& key = kv.key();
    if (key == "service.name") {
      service_name = text;
    } else if (key == "service.namespace") {
      service_namespace = text;
    } else if (key == "service.instance.id") {
      instance = text;
      has_instance = !text.empty();
    } else if (key == "process.pid") {
      int v = 0;
      const char* b = text.data();
      const char* e = b + text.size();
      auto [p, ec] = std::from_chars(b, e, v);
      if (ec == std::errc() && p == e && v > 0) pid = v;
    }
    if (promote_keys.count(key)) {
      std::string name = OtlpLabelName(key);
      if (!name.empty() && name != "job" && name != "instance" && !text.empty()) {
        promoted[name] = text;
      }
    }
  }
  std::vector<Label> grouping;
  std::string job = service_name.empty() ? "unknown_service" : service_name;
  if (!service_namespace.empty()) job = service_namespace + "/" + job;
  grouping.push_back(Label{"job", job});
  if (has_instance) grouping.push_back(Label{"instance", instance});
  for (auto& [name, value] : promoted) grouping.push_back(Label{name, value});
  Labels key = Labels::FromUnsorted(grouping);

  std::set<std::string> reserved;
  for (const Label& l : key) reserved.insert(l.name);

  auto [it, inserted] = group_index.try_emplace(key, groups.size());
  if (inserted) {
    groups.emplace_back();
    groups.back().grouping = key;
  }
  GroupBuild& g = groups[it->second];
  if (!g.pid) g.pid = pid;

  // target_info: the resource attributes that are not grouping labels.
  std::set<std::string> skip = {"service.name", "service.namespace", "service.instance.id"};
  for (const std::string& k : options.promoted_resource_attributes) skip.insert(k);
  Result<AttrLabels> info = ConvertAttributes(attrs, reserved, &skip, rpath);
  if (!info.ok()) return info.status();
  if (info->empty_key) result.Reject(0, "resource attribute with an empty key ignored");

  bool any_metric = false;
  for (int s = 0; s < rm.scope_metrics_size(); ++s) {
    const otlp::ScopeMetrics& sm = rm.scope_metrics(s);
    const std::string spath = path + ".scope_metrics[" + std::to_string(s) + "]";
    if (!IsValidUtf8(sm.scope().name()) || !IsValidUtf8(sm.scope().version())) {
      return Status::Error(spath + ".scope: name or version is not valid UTF-8");
    }
    for (int m = 0; m < sm.metrics_size(); ++m) {
      any_metric = true;
      Status st = Metric(g, reserved, sm.metrics(m), spath + ".metrics[" + std::to_string(m) + "]");
      if (!st.ok()) return st;
    }
  }
  if (any_metric && !info->labels.empty()) {
    g.target_info.push_back(Sample{std::move(info->labels), 1, std::nullopt});
  }
  return Status::Ok();
}

int64_t PointCount(const otlp::Metric& m) {
  switch (m.data_case()) {
    case otlp::Metric::kGauge:
      return m.gauge().data_points_size();
    case otlp::Metric::kSum:
      return m.sum().data_points_size();
    case otlp::Metric::kHistogram:
      return m.histogram().data_points_size();
    case otlp::Metric::kExponentialHistogram:
      return m.exponential_histogram().data_points_size();
    case otlp::Metric::kSummary:
      return m.summary().data_points_size();
    case otlp::Metric::DATA_NOT_SET:
      break;
  }
  return 0;
}

Status Translator::Metric(GroupBuild& g, const std::set<std::string>& reserved,
                          const otlp::Metric& m, const std::string& path) {
  if (!IsValidUtf8(m.name())) return Status::Error(path + ".name is not valid UTF-8");
  if (!IsValidUtf8(m.description())) return Status::Error(path + ".description is not valid UTF-8");
  if (!IsValidUtf8(m.unit())) return Status::Error(path + ".unit is not valid UTF-8");
  const std::string what = "metric " + Quote(m.name());
  const int64_t npoints = PointCount(m);

  // Attribute UTF-8 errors fail the request even where the metric's points
  // are rejected for another reason: check them all up front.
  auto check_points = [&](const auto& points, const char* field) -> Status {
    for (int p = 0; p < points.size(); ++p) {
      Result<AttrLabels> l =
          ConvertAttributes(points[p].attributes(), {}, nullptr,
                            path + "." + field + ".data_points[" + std::to_string(p) + "]");
      if (!l.ok()) return l.status();
    }
    return Status::Ok();
  };
  auto reject_all = [&](std::string why) -> Status {
    result.Reject(npoints, what + ": " + why);
    return Status::Ok();
  };

  OtlpNameKind kind = OtlpNameKind::kOther;
  MetricType type = MetricType::kGauge;
  bool delta = false;
  switch (m.data_case()) {
    case otlp::Metric::DATA_NOT_SET:
      result.Reject(0, what + " has no data (not a gauge, sum, histogram or summary)");
      return Status::Ok();
    case otlp::Metric::kExponentialHistogram: {
      if (Status st =
              check_points(m.exponential_histogram().data_points(), "exponential_histogram");
          !st.ok()) {
        return st;
      }
      return reject_all(
          "exponential histograms are not supported; configure the exporter's aggregation to "
          "explicit bucket histograms");
    }
    case otlp::Metric::kGauge:
      if (Status st = check_points(m.gauge().data_points(), "gauge"); !st.ok()) return st;
      kind = OtlpNameKind::kGauge;
      break;
    case otlp::Metric::kSum:
      if (Status st = check_points(m.sum().data_points(), "sum"); !st.ok()) return st;
      if (m.sum().aggregation_temporality() == otlp::AGGREGATION_TEMPORALITY_UNSPECIFIED) {
        return reject_all("sum with unspecified aggregation temporality");
      }
      delta = m.sum().aggregation_temporality() == otlp::AGGREGATION_TEMPORALITY_DELTA;
      if (m.sum().is_monotonic()) {
        kind = OtlpNameKind::kCounter;
        type = MetricType::kCounter;
      }
      break;
    case otlp::Metric::kHistogram:
      if (Status st = check_points(m.histogram().data_points(), "histogram"); !st.ok()) return st;
      if (m.histogram().aggregation_temporality() == otlp::AGGREGATION_TEMPORALITY_UNSPECIFIED) {
        return reject_all("histogram with unspecified aggregation temporality");
      }
      delta = m.histogram().aggregation_temporality() == otlp::AGGREGATION_TEMPORALITY_DELTA;
      type = MetricType::kHistogram;
      break;
    case otlp::Metric::kSummary:
      if (Status st = check_points(m.summary().data_points(), "summary"); !st.ok()) return st;
      type = MetricType::kSummary;
      break;
  }
  if (npoints == 0) return Status::Ok();  // nothing to say about the family

  const std::string name = OtlpMetricName(m.name(), m.unit(), kind);
  if (name.empty()) return reject_all("the name has no character a Prometheus name may use");
  std::vector<std::string> names;
  if (type == MetricType::kHistogram) {
    names = {name + "_bucket", name + "_sum", name + "_count"};
  } else if (type == MetricType::kSummary) {
    names = {name, name + "_sum", name + "_count"};
  } else {
    names = {name};
  }
  for (const std::string& prefix : options.reserved_name_prefixes) {
    if (!name.starts_with(prefix)) continue;
    bool allowed = false;
    for (const std::string& a : options.allowed_name_prefixes)
      allowed = allowed || name.starts_with(a);
    if (!allowed) {
      return reject_all("translated name " + Quote(name) + " starts with \"" + prefix +
                        "\", reserved for the agent's own metrics");
    }
  }
  std::string taken;
  if (!Claim(g, names, type, m.description(), OtlpUnitSuffix(m.unit()), &taken)) {
    return reject_all("translated name " + Quote(taken) + " is already used by a " +
                      exposition::MetricTypeName(g.families[taken].type) + " in the same resource");
  }
  const std::string delta_key = type == MetricType::kHistogram ? name + "_bucket" : name;

  std::set<std::string> point_reserved = reserved;
  if (type == MetricType::kHistogram) point_reserved.insert("le");
  if (type == MetricType::kSummary) point_reserved.insert("quantile");
  auto labels_of = [&](const auto& point) {
    // UTF-8 was checked by check_points.
    Result<AttrLabels> l = ConvertAttributes(point.attributes(), point_reserved, nullptr, path);
    if (l->empty_key) result.Reject(0, what + ": attribute with an empty key ignored");
    return std::move(l->labels);
  };

  if (m.data_case() == otlp::Metric::kGauge || m.data_case() == otlp::Metric::kSum) {
    const auto& points =
        m.data_case() == otlp::Metric::kGauge ? m.gauge().data_points() : m.sum().data_points();
    for (const otlp::NumberDataPoint& p : points) {
      std::vector<Label> labels = labels_of(p);
      if (p.flags() & kNoRecordedValue) {
        if (delta) txn.Remove(g.grouping, delta_key, Labels::FromSorted(labels));
        continue;
      }
      double v;
      if (p.value_case() == otlp::NumberDataPoint::kAsDouble) {
        v = p.as_double();
      } else if (p.value_case() == otlp::NumberDataPoint::kAsInt) {
        v = static_cast<double>(p.as_int());
      } else {
        result.Reject(1, what + ": data point without a value");
        continue;
      }
      if (!Room(1)) {
        result.Reject(1, TooMany());
        continue;
      }
      if (delta) {
        if (std::isnan(v)) {
          result.Reject(1, what + ": NaN delta");
          continue;
        }
        std::string why;
        if (!txn.AddSum(g.grouping, delta_key, Labels::FromSorted(labels), v, &why)) {
          result.Reject(1, what + ": " + why);
          continue;
        }
        g.deltas[delta_key] = DeltaKind::kSum;
      } else {
        g.families[name].Set(std::move(labels), v);
      }
      ++g.points;
    }
    return Status::Ok();
  }

  if (m.data_case() == otlp::Metric::kHistogram) {
    for (const otlp::HistogramDataPoint& p : m.histogram().data_points()) {
      std::vector<Label> labels = labels_of(p);
      if (p.flags() & kNoRecordedValue) {
        if (delta) txn.Remove(g.grouping, delta_key, Labels::FromSorted(labels));
        continue;
      }
      const auto& bounds = p.explicit_bounds();
      const auto& counts = p.bucket_counts();
      if (!counts.empty() && counts.size() != bounds.size() + 1) {
        result.Reject(1, what + ": " + std::to_string(counts.size()) + " bucket counts for " +
                             std::to_string(bounds.size()) + " bounds (expected bounds + 1)");
        continue;
      }
      bool bounds_ok = true;
      for (int i = 0; i < bounds.size() && bounds_ok; ++i) {
        bounds_ok = std::isfinite(bounds[i]) && (i == 0 || bounds[i] > bounds[i - 1]);
      }
      if (!bounds_ok) {
        result.Reject(1, what + ": explicit bounds must be finite and strictly increasing");
        continue;
      }
      uint64_t total = 0;
      bool overflow = false;
      for (uint64_t c : counts) {
        overflow = overflow || total > std::numeric_limits<uint64_t>::max() - c;
        total += c;
      }
      if (!counts.empty() && (overflow || total != p.count())) {
        result.Reject(1, what + ": bucket counts add up to " + std::to_string(total) +
                             ", not to the point's count " + std::to_string(p.count()));
        continue;
      }
      if (!Room(HistogramSamples(bounds.size(), !counts.empty()))) {
        result.Reject(1, TooMany());
        continue;
      }
      OtlpDeltaAccumulator::Histogram h;
      h.bounds.assign(bounds.begin(), bounds.end());
      h.buckets.assign(counts.begin(), counts.end());
      h.count = p.count();
      h.has_sum = p.has_sum();
      h.sum = p.has_sum() ? p.sum() : 0;
      if (delta) {
        std::string why;
        if (!txn.AddHistogram(g.grouping, delta_key, Labels::FromSorted(labels), h, &why)) {
          result.Reject(1, what + ": " + why);
          continue;
        }
        g.deltas[delta_key] = DeltaKind::kHistogram;
      } else {
        EmitHistogram(g, name, labels, h.bounds, h.buckets, h.count, h.has_sum, h.sum);
      }
      ++g.points;
    }
    return Status::Ok();
  }

  // Summary.
  for (const otlp::SummaryDataPoint& p : m.summary().data_points()) {
    std::vector<Label> labels = labels_of(p);
    if (p.flags() & kNoRecordedValue) continue;
    bool ok = true;
    for (const auto& q : p.quantile_values()) {
      ok = ok && q.quantile() >= 0 && q.quantile() <= 1;  // false for NaN
    }
    if (!ok) {
      result.Reject(1, what + ": summary quantiles must lie in [0, 1]");
      continue;
    }
    if (!Room(p.quantile_values_size() + 2)) {
      result.Reject(1, TooMany());
      continue;
    }
    FamilyBuild& f = g.families[name];
    for (const auto& q : p.quantile_values()) {
      f.Set(WithLabel(labels, "quantile", OtlpFormatFloat(q.quantile())), q.value());
    }
    g.families[name + "_sum"].Set(labels, p.sum());
    g.families[name + "_count"].Set(labels, static_cast<double>(p.count()));
    ++g.points;
  }
  return Status::Ok();
}

void Translator::Finish() {
  for (GroupBuild& g : groups) {
    // Delta families: every series the accumulator holds, this request's
    // changes included.
    for (const auto& [key, kind] : g.deltas) {
      const OtlpDeltaAccumulator::Family* fam = txn.Find(g.grouping, key);
      if (!fam) continue;
      for (const auto& [series, state] : *fam) {
        const std::vector<Label>& labels = series.items();
        if (kind == DeltaKind::kSum) {
          if (!state.is_histogram) g.families[key].Set(labels, state.value);
        } else if (state.is_histogram) {
          const std::string base = key.substr(0, key.size() - 7);  // strip "_bucket"
          const auto& h = state.histogram;
          EmitHistogram(g, base, labels, h.bounds, h.buckets, h.count, h.has_sum, h.sum);
        }
      }
    }
    if (g.order.empty()) continue;  // no metric with points: nothing to push
    OtlpGroup out;
    out.grouping = g.grouping;
    out.pid = g.pid;
    out.points = g.points;
    for (const std::string& n : g.order) {
      FamilyBuild& f = g.families[n];
      MetricFamily mf;
      mf.name = n;
      mf.type = f.type;
      mf.help = std::move(f.help);
      mf.unit = std::move(f.unit);
      mf.samples = std::move(f.samples);
      out.families.push_back(std::move(mf));
    }
    if (!g.target_info.empty()) {
      MetricFamily info;
      info.name = "target_info";
      info.type = MetricType::kGauge;
      info.help = "Target metadata";
      info.samples = std::move(g.target_info);
      // A metric translated to target_info (unlikely) merges with it.
      auto it = std::find_if(out.families.begin(), out.families.end(),
                             [](const MetricFamily& f) { return f.name == "target_info"; });
      if (it == out.families.end()) {
        out.families.push_back(std::move(info));
      } else if (it->type == MetricType::kGauge) {
        for (Sample& s : info.samples) it->samples.push_back(std::move(s));
      }
    }
    result.groups.push_back(std::move(out));
  }
}

}  // namespace

void OtlpTranslation::Reject(int64_t points, std::string why) {
  rejected_points += points;
  if (std::find(messages.begin(), messages.end(), why) != messages.end()) return;
  if (messages.size() >= kMaxMessages) {
    ++more_messages;
    return;
  }
  messages.push_back(std::move(why));
}

std::string OtlpTranslation::Message() const {
  std::string out;
  for (const std::string& m : messages) {
    if (!out.empty()) out += "; ";
    out += m;
  }
  if (more_messages > 0) out += "; ... and " + std::to_string(more_messages) + " more";
  return out;
}

std::string OtlpFormatFloat(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[400];  // fixed notation of DBL_MAX needs 309 digits
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  return std::string(buf, r.ptr);
}

Status ParseOtlpRequest(std::string_view body, otlp::ExportMetricsServiceRequest* out) {
  if (body.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return Status::Error("request body too large to decode");
  }
  if (!out->ParseFromArray(body.data(), static_cast<int>(body.size()))) {
    return Status::Error(
        "request body is not a valid protobuf ExportMetricsServiceRequest (malformed or "
        "truncated)");
  }
  return Status::Ok();
}

Result<OtlpTranslation> TranslateOtlpRequest(const otlp::ExportMetricsServiceRequest& request,
                                             const OtlpDecodeOptions& options,
                                             OtlpDeltaAccumulator::Txn& txn) {
  Translator t{options, txn, {}, {}, {}, 0};
  for (int i = 0; i < request.resource_metrics_size(); ++i) {
    Status st =
        t.Resource(request.resource_metrics(i), "resource_metrics[" + std::to_string(i) + "]");
    if (!st.ok()) return st;
  }
  t.Finish();
  return std::move(t.result);
}

}  // namespace gpumon::ingest
