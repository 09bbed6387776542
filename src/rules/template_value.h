// The dynamic values alert templates compute with, held as Go's
// text/template holds them in interfaces; internal to the template engine
// (template*.cc).
//
// Contract:
// - Kinds: nil (also a missing args entry), bool, int (int64), float64,
//   string, map[string]string (Labels), the alert data (.Labels,
//   .ExternalLabels, .ExternalURL, .Value), and Prometheus's template types:
//   a sample (*template.sample: .Labels, .Value), a query result
//   (template.queryResult: a list of samples), the map `args` returns
//   (map[string]interface {}), and a time (*time.Time, from toTime).
// - A query result is shared, not copied: sortByLabel sorts it in place, as
//   Prometheus sorts the slice it was given, so every variable holding the
//   result sees the new order. Samples are never null.
// - Sprint follows text/template's printing (fmt.Sprint; floats as %v, maps
//   sorted by key, a sample as {map[...] value}), except that samples inside
//   a printed query result or args map show as {...} too, where Go prints
//   their addresses.
// - Truth follows text/template: nil, false, 0, "" and empty maps and lists
//   are false; samples, times and the alert data are true.
// - Field(v, name) reads a map key (missing: "" for label maps, nil for
//   args), a field of the alert data or a sample, or Unix, UnixMilli, UTC
//   and String of a time; anything else is text/template's error.
// - FloatToTimeMs and TimeString are toTime's and humanizeTimestamp's
//   conversion (model.TimeFromUnixNano) and printing (time.Time.String()).
// - CallSite holds one function call and words its errors as text/template
//   does: "wrong number of args for F: want N got M", "wrong type for value;
//   expected T; got U", "error calling F: <the function's error>", each
//   prefixed with "line N: ".
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/labels.h"
#include "common/status.h"
#include "rules/template.h"

namespace gpumon::rules::template_internal {

struct DataRef {
  const TemplateData* data = nullptr;
};

using SamplePtr = std::shared_ptr<const TemplateSample>;

struct QueryResultRef {
  std::shared_ptr<std::vector<SamplePtr>> samples;  // never null
};

struct ArgsMap;
using ArgsRef = std::shared_ptr<const ArgsMap>;

// A *time.Time of toTime: model.Time precision (milliseconds), UTC.
struct TimeValue {
  int64_t unix_ms = 0;
};

using Value = std::variant<std::monostate, bool, int64_t, double, std::string, Labels, DataRef,
                           SamplePtr, QueryResultRef, ArgsRef, TimeValue>;

// Value's alternatives, in order.
enum Kind : int {
  kNil,
  kBool,
  kInt,
  kFloat,
  kString,
  kLabelMap,
  kData,
  kSample,
  kQueryResult,
  kArgs,
  kTime,
};

inline Kind KindOf(const Value& v) { return static_cast<Kind>(v.index()); }

struct ArgsMap {
  std::map<std::string, Value> entries;  // arg0, arg1, ...
};

QueryResultRef MakeQueryResult(std::vector<TemplateSample> samples);

const char* TypeName(const Value& v);
std::string Sprint(const Value& v);
bool Truth(const Value& v);

// Go's strconv.ParseFloat for the common forms (decimal, exponent, Inf, NaN).
bool ParseGoFloat(std::string_view s, double* out);
// Prometheus's convertToFloat: float64, ints and numeric strings.
Result<double> ToFloat(const Value& v);

// -1, 0, 1, or 2 for unordered floats (NaN); an error for mismatched or
// unordered kinds.
Result<int> Compare(const Value& a, const Value& b);

Status ExecErr(int line, const std::string& msg);

Result<Value> Field(int line, const Value& v, const std::string& name);

// Go's time.Time.String() of a model.Time: "2006-01-02 15:04:05.999 +0000 UTC".
std::string TimeString(int64_t unix_ms);
// Prometheus's floatToTime: Unix seconds to a model.Time (milliseconds,
// truncated toward zero); an error when v * 1e9 overflows int64. NaN and
// Inf are the caller's to handle.
Result<int64_t> FloatToTimeMs(double v);

class CallSite {
 public:
  CallSite(int line, const std::string& fn, const std::vector<Value>& args)
      : line_(line), fn_(fn), args_(args) {}

  int line() const { return line_; }
  const std::string& fn() const { return fn_; }
  const std::vector<Value>& args() const { return args_; }
  const Value& arg(size_t i) const { return args_[i]; }

  Status WantArgs(size_t n) const;
  // The function itself failed with `s`.
  Status Fail(const Status& s) const;
  Status WrongType(size_t i, const std::string& expected) const;
  Result<std::string> String(size_t i) const;

 private:
  int line_;
  const std::string& fn_;
  const std::vector<Value>& args_;
};

}  // namespace gpumon::rules::template_internal
