#include "rules/template_value.h"

#include <charconv>
#include <cmath>

#include "common/utc_time.h"

namespace gpumon::rules::template_internal {

namespace {

std::string MapString(const Labels& m) {
  std::string out = "map[";
  bool first = true;
  for (const auto& l : m) {
    if (!first) out += ' ';
    first = false;
    out += l.name + ":" + l.value;
  }
  return out + "]";
}

std::string SampleString(const TemplateSample& s) {
  return "{" + MapString(s.labels) + " " + FormatGoFloat(s.value) + "}";
}

}  // namespace

QueryResultRef MakeQueryResult(std::vector<TemplateSample> samples) {
  QueryResultRef r{std::make_shared<std::vector<SamplePtr>>()};
  r.samples->reserve(samples.size());
  for (auto& s : samples) r.samples->push_back(std::make_shared<TemplateSample>(std::move(s)));
  return r;
}

std::string TimeString(int64_t ms) { return FormatUtcMs(ms, "%Y-%m-%d %H:%M:%S") + " +0000 UTC"; }

Result<int64_t> FloatToTimeMs(double v) {
  double ns = v * 1e9;
  // 2^63 itself does not fit either (Go's check lets it through and wraps).
  if (!(ns < 9223372036854775808.0 && ns >= -9223372036854775808.0)) {
    return Status::Error(FormatGoFloat(v) +
                         " cannot be represented as a nanoseconds timestamp since it overflows "
                         "int64");
  }
  return static_cast<int64_t>(ns) / 1'000'000;
}

std::string Sprint(const Value& v) {
  switch (KindOf(v)) {
    case kNil:
      return "<no value>";
    case kBool:
      return std::get<bool>(v) ? "true" : "false";
    case kInt:
      return std::to_string(std::get<int64_t>(v));
    case kFloat:
      return FormatGoFloat(std::get<double>(v));
    case kString:
      return std::get<std::string>(v);
    case kLabelMap:
      return MapString(std::get<Labels>(v));
    case kData: {
      const TemplateData& d = *std::get<DataRef>(v).data;
      return "{" + MapString(d.labels) + " " + MapString(d.external_labels) + " " + d.external_url +
             " " + FormatGoFloat(d.value) + "}";
    }
    case kSample:
      return SampleString(*std::get<SamplePtr>(v));
    case kQueryResult: {
      std::string out = "[";
      for (const auto& s : *std::get<QueryResultRef>(v).samples) {
        if (out.size() > 1) out += ' ';
        out += SampleString(*s);
      }
      return out + "]";
    }
    case kArgs: {
      std::string out = "map[";
      bool first = true;
      for (const auto& [k, x] : std::get<ArgsRef>(v)->entries) {
        if (!first) out += ' ';
        first = false;
        // fmt prints a nil interface inside a map as <nil>.
        out += k + ":" + (KindOf(x) == kNil ? std::string("<nil>") : Sprint(x));
      }
      return out + "]";
    }
    case kTime:
      return TimeString(std::get<TimeValue>(v).unix_ms);
  }
  return "";
}

const char* TypeName(const Value& v) {
  static const char* kNames[] = {"nil",
                                 "bool",
                                 "int",
                                 "float64",
                                 "string",
                                 "map[string]string",
                                 "template.AlertData",
                                 "*template.sample",
                                 "template.queryResult",
                                 "map[string]interface {}",
                                 "*time.Time"};
  return kNames[v.index()];
}

bool Truth(const Value& v) {
  switch (KindOf(v)) {
    case kNil:
      return false;
    case kBool:
      return std::get<bool>(v);
    case kInt:
      return std::get<int64_t>(v) != 0;
    case kFloat:
      return std::get<double>(v) != 0;
    case kString:
      return !std::get<std::string>(v).empty();
    case kLabelMap:
      return !std::get<Labels>(v).empty();
    case kQueryResult:
      return !std::get<QueryResultRef>(v).samples->empty();
    case kArgs:
      return !std::get<ArgsRef>(v)->entries.empty();
    case kData:
    case kSample:
    case kTime:
      return true;
  }
  return true;
}

bool ParseGoFloat(std::string_view s, double* out) {
  std::string t(s);
  if (t == "NaN") {
    *out = std::nan("");
    return true;
  }
  std::string_view u = t;
  double sign = 1;
  if (!u.empty() && (u[0] == '+' || u[0] == '-')) {
    sign = u[0] == '-' ? -1 : 1;
    u.remove_prefix(1);
  }
  if (u == "Inf" || u == "inf" || u == "Infinity" || u == "infinity") {
    *out = sign * HUGE_VAL;
    return true;
  }
  if (u.empty() || !(std::isdigit(static_cast<unsigned char>(u[0])) || u[0] == '.')) return false;
  double v = 0;
  auto [p, ec] = std::from_chars(u.data(), u.data() + u.size(), v);
  if (ec != std::errc() || p != u.data() + u.size()) return false;
  *out = sign * v;
  return true;
}

Result<double> ToFloat(const Value& v) {
  switch (KindOf(v)) {
    case kInt:
      return static_cast<double>(std::get<int64_t>(v));
    case kFloat:
      return std::get<double>(v);
    case kString: {
      double d = 0;
      if (!ParseGoFloat(std::get<std::string>(v), &d)) {
        return Status::Error("strconv.ParseFloat: parsing \"" + std::get<std::string>(v) +
                             "\": invalid syntax");
      }
      return d;
    }
    default:
      return Status::Error(std::string("can't convert ") + TypeName(v) + " to float");
  }
}

Result<int> Compare(const Value& a, const Value& b) {
  if (KindOf(a) != KindOf(b)) return Status::Error("incompatible types for comparison");
  switch (KindOf(a)) {
    case kInt: {
      auto x = std::get<int64_t>(a), y = std::get<int64_t>(b);
      return x < y ? -1 : x > y ? 1 : 0;
    }
    case kFloat: {
      auto x = std::get<double>(a), y = std::get<double>(b);
      if (std::isnan(x) || std::isnan(y)) return 2;  // unordered
      return x < y ? -1 : x > y ? 1 : 0;
    }
    case kString: {
      int c = std::get<std::string>(a).compare(std::get<std::string>(b));
      return c < 0 ? -1 : c > 0 ? 1 : 0;
    }
    default:
      return Status::Error("invalid type for comparison");
  }
}

Status ExecErr(int line, const std::string& msg) {
  return Status::Error("line " + std::to_string(line) + ": " + msg);
}

Result<Value> Field(int line, const Value& v, const std::string& f) {
  switch (KindOf(v)) {
    case kLabelMap:
      return Value(std::string(std::get<Labels>(v).Get(f)));
    case kData: {
      const TemplateData& d = *std::get<DataRef>(v).data;
      if (f == "Labels") return Value(d.labels);
      if (f == "ExternalLabels") return Value(d.external_labels);
      if (f == "ExternalURL") return Value(d.external_url);
      if (f == "Value") return Value(d.value);
      break;
    }
    case kSample: {
      const TemplateSample& s = *std::get<SamplePtr>(v);
      if (f == "Labels") return Value(s.labels);
      if (f == "Value") return Value(s.value);
      break;
    }
    case kArgs: {
      const auto& m = std::get<ArgsRef>(v)->entries;
      auto it = m.find(f);
      return it == m.end() ? Value() : it->second;
    }
    case kTime: {
      int64_t ms = std::get<TimeValue>(v).unix_ms;
      if (f == "Unix") return Value(ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000));
      if (f == "UnixMilli") return Value(ms);
      if (f == "UTC") return v;
      if (f == "String") return Value(TimeString(ms));
      break;
    }
    case kNil:
      return ExecErr(line, "nil pointer evaluating interface {}." + f);
    default:
      break;
  }
  return ExecErr(line, "can't evaluate field " + f + " in type " + TypeName(v));
}

Status CallSite::WantArgs(size_t n) const {
  if (args_.size() == n) return Status::Ok();
  return ExecErr(line_, "wrong number of args for " + fn_ + ": want " + std::to_string(n) +
                            " got " + std::to_string(args_.size()));
}

Status CallSite::Fail(const Status& s) const {
  return ExecErr(line_, "error calling " + fn_ + ": " + s.message());
}

Status CallSite::WrongType(size_t i, const std::string& expected) const {
  if (KindOf(args_[i]) == kNil) return ExecErr(line_, "invalid value; expected " + expected);
  return ExecErr(line_, "wrong type for value; expected " + expected + "; got " +
                            std::string(TypeName(args_[i])));
}

Result<std::string> CallSite::String(size_t i) const {
  if (KindOf(args_[i]) != kString) return WrongType(i, "string");
  return std::get<std::string>(args_[i]);
}

}  // namespace gpumon::rules::template_internal
