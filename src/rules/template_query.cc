#include "rules/template_query.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>

#include "promql/parser/quote.h"
#include "rules/status_macros.h"
#include "rules/template_fmt.h"

namespace gpumon::rules::template_internal {

namespace {

// What a Go function given a nil *sample does.
const char kNilDereference[] = "runtime error: invalid memory address or nil pointer dereference";

// A *template.sample argument: the sample, nullptr for nil, or an error.
Result<const TemplateSample*> SampleArg(const CallSite& c, size_t i) {
  if (KindOf(c.arg(i)) == kNil) return static_cast<const TemplateSample*>(nullptr);
  if (KindOf(c.arg(i)) != kSample) return c.WrongType(i, "*template.sample");
  return std::get<SamplePtr>(c.arg(i)).get();
}

// A template.queryResult argument (nil is an empty one).
Result<QueryResultRef> QueryResultArg(const CallSite& c, size_t i) {
  if (KindOf(c.arg(i)) == kNil) return MakeQueryResult({});
  if (KindOf(c.arg(i)) != kQueryResult) return c.WrongType(i, "template.queryResult");
  return std::get<QueryResultRef>(c.arg(i));
}

bool ParseIP(const std::string& s) {
  unsigned char buf[16];
  return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

// net.JoinHostPort.
std::string JoinHostPort(const std::string& host, const std::string& port) {
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + port;
  return host + ":" + port;
}

// model.ParseDuration in nanoseconds (time.Duration).
Result<int64_t> ParseModelDuration(const std::string& s) {
  if (s == "0") return int64_t{0};
  if (s.empty()) return Status::Error("empty duration string");
  auto invalid = [&] {
    return Status::Error("not a valid duration string: " + promql::internal::GoQuote(s));
  };
  struct Unit {
    const char* suffix;
    int64_t ms;
  };
  static const Unit kUnits[] = {{"y", 1000LL * 60 * 60 * 24 * 365},
                                {"w", 1000LL * 60 * 60 * 24 * 7},
                                {"d", 1000LL * 60 * 60 * 24},
                                {"h", 1000LL * 60 * 60},
                                {"m", 1000LL * 60},
                                {"s", 1000},
                                {"ms", 1}};
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  size_t pos = 0;
  size_t next_unit = 0;  // units must come largest first, each at most once
  __int128 total_ns = 0;
  bool overflow = false;
  while (pos < s.size()) {
    size_t digits = pos;
    while (digits < s.size() && s[digits] >= '0' && s[digits] <= '9') ++digits;
    if (digits == pos) return invalid();
    size_t end = digits;
    while (end < s.size() && !(s[end] >= '0' && s[end] <= '9')) ++end;
    std::string suffix = s.substr(digits, end - digits);
    size_t u = next_unit;
    while (u < std::size(kUnits) && suffix != kUnits[u].suffix) ++u;
    if (u == std::size(kUnits)) return invalid();
    next_unit = u + 1;
    // strconv.Atoi saturates at MaxInt64 on overflow (its error is ignored).
    int64_t n = 0;
    for (size_t i = pos; i < digits; ++i) {
      int d = s[i] - '0';
      n = n > (kMax - d) / 10 ? kMax : n * 10 + d;
    }
    if (n > kMax / kUnits[u].ms / 1'000'000) overflow = true;
    total_ns += static_cast<__int128>(n) * kUnits[u].ms * 1'000'000;
    if (total_ns > kMax) overflow = true;
    pos = end;
  }
  if (overflow) return Status::Error("duration out of range");
  return static_cast<int64_t>(total_ns);
}

// url.URL.Path of an absolute or path-only URL, percent-decoded.
std::string UrlPath(const std::string& u) {
  size_t start = 0;
  size_t scheme = u.find("://");
  if (scheme != std::string::npos && u.find_first_of("/?#") > scheme) {
    start = u.find_first_of("/?#", scheme + 3);
    if (start == std::string::npos) return "";
  }
  size_t end = u.find_first_of("?#", start);
  std::string raw = u.substr(start, end == std::string::npos ? std::string::npos : end - start);
  std::string out;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '%' && i + 2 < raw.size() &&
        std::isxdigit(static_cast<unsigned char>(raw[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(raw[i + 2]))) {
      out += static_cast<char>(std::stoi(raw.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += raw[i];
    }
  }
  return out;
}

Result<Value> Query(const CallSite& c, const TemplateData& data) {
  GPUMON_RETURN_IF_ERROR(c.WantArgs(1));
  GPUMON_ASSIGN_OR_RETURN(std::string q, c.String(0));
  if (!data.query) return c.Fail(Status::Error("query not available"));
  Result<std::vector<TemplateSample>> r = data.query(q);
  if (!r.ok()) return c.Fail(r.status());
  return Value(MakeQueryResult(std::move(r).value()));
}

Result<Value> SampleFunction(const CallSite& c) {
  const std::string& fn = c.fn();
  bool labelled = fn == "label";
  GPUMON_RETURN_IF_ERROR(c.WantArgs(labelled ? 2 : 1));
  std::string name = fn == "strvalue" ? "__value__" : "";
  if (labelled) {
    GPUMON_ASSIGN_OR_RETURN(name, c.String(0));
  }
  GPUMON_ASSIGN_OR_RETURN(const TemplateSample* s, SampleArg(c, labelled ? 1 : 0));
  if (s == nullptr) return c.Fail(Status::Error(kNilDereference));
  if (fn == "value") return Value(s->value);
  return Value(std::string(s->labels.Get(name)));
}

Result<Value> HostFunction(const CallSite& c) {
  GPUMON_RETURN_IF_ERROR(c.WantArgs(1));
  GPUMON_ASSIGN_OR_RETURN(std::string hostport, c.String(0));
  std::string host, port;
  bool split = SplitHostPort(hostport, &host, &port);
  if (c.fn() == "stripPort") return Value(split ? host : hostport);
  if (!split) {
    host = hostport;
    port.clear();
  }
  if (ParseIP(host)) return Value(hostport);
  host = host.substr(0, host.find('.'));
  return Value(port.empty() ? host : JoinHostPort(host, port));
}

}  // namespace

bool SplitHostPort(const std::string& hp, std::string* host, std::string* port, std::string* err) {
  auto fail = [&](const char* why) {
    if (err) *err = "address " + hp + ": " + why;
    return false;
  };
  size_t i = hp.rfind(':');
  if (i == std::string::npos) return fail("missing port in address");
  size_t j = 0, k = 0;
  if (hp[0] == '[') {
    size_t end = hp.find(']');
    if (end == std::string::npos) return fail("missing ']' in address");
    if (end + 1 == hp.size()) return fail("missing port in address");
    if (end + 1 != i) {
      return fail(hp[end + 1] == ':' ? "too many colons in address" : "missing port in address");
    }
    *host = hp.substr(1, end - 1);
    j = 1;
    k = end + 1;
  } else {
    *host = hp.substr(0, i);
    if (host->find(':') != std::string::npos) return fail("too many colons in address");
  }
  if (hp.find('[', j) != std::string::npos) return fail("unexpected '[' in address");
  if (hp.find(']', k) != std::string::npos) return fail("unexpected ']' in address");
  *port = hp.substr(i + 1);
  return true;
}

bool IsPrometheusFunction(std::string_view fn) {
  static const std::set<std::string, std::less<>> kNames = {
      "query",       "first",         "label",     "value",       "strvalue",
      "sortByLabel", "args",          "graphLink", "tableLink",   "stripPort",
      "stripDomain", "parseDuration", "toTime",    "externalURL", "pathPrefix"};
  return kNames.count(fn) > 0;
}

Result<Value> CallPrometheusFunction(const CallSite& c, const TemplateData& data) {
  const std::string& fn = c.fn();
  if (fn == "query") return Query(c, data);
  if (fn == "first") {
    GPUMON_RETURN_IF_ERROR(c.WantArgs(1));
    GPUMON_ASSIGN_OR_RETURN(QueryResultRef r, QueryResultArg(c, 0));
    if (r.samples->empty()) {
      return c.Fail(Status::Error("first() called on vector with no elements"));
    }
    return Value(r.samples->front());
  }
  if (fn == "label" || fn == "value" || fn == "strvalue") return SampleFunction(c);
  if (fn == "sortByLabel") {
    GPUMON_RETURN_IF_ERROR(c.WantArgs(2));
    GPUMON_ASSIGN_OR_RETURN(std::string name, c.String(0));
    GPUMON_ASSIGN_OR_RETURN(QueryResultRef r, QueryResultArg(c, 1));
    std::stable_sort(r.samples->begin(), r.samples->end(),
                     [&](const SamplePtr& a, const SamplePtr& b) {
                       return a->labels.Get(name) < b->labels.Get(name);
                     });
    return Value(r);
  }
  if (fn == "args") {
    auto m = std::make_shared<ArgsMap>();
    for (size_t i = 0; i < c.args().size(); ++i) {
      m->entries["arg" + std::to_string(i)] = c.arg(i);
    }
    return Value(ArgsRef(std::move(m)));
  }
  if (fn == "graphLink" || fn == "tableLink") {
    GPUMON_RETURN_IF_ERROR(c.WantArgs(1));
    GPUMON_ASSIGN_OR_RETURN(std::string expr, c.String(0));
    return Value("/graph?g0.expr=" + QueryEscape(expr) +
                 "&g0.tab=" + (fn == "graphLink" ? "0" : "1"));
  }
  if (fn == "stripPort" || fn == "stripDomain") return HostFunction(c);
  if (fn == "parseDuration") {
    GPUMON_RETURN_IF_ERROR(c.WantArgs(1));
    GPUMON_ASSIGN_OR_RETURN(std::string s, c.String(0));
    Result<int64_t> ns = ParseModelDuration(s);
    if (!ns.ok()) return c.Fail(ns.status());
    return Value(static_cast<double>(*ns) / 1e9);
  }
  if (fn == "toTime") {
    GPUMON_RETURN_IF_ERROR(c.WantArgs(1));
    Result<double> v = ToFloat(c.arg(0));
    if (!v.ok()) return c.Fail(v.status());
    if (std::isnan(*v) || std::isinf(*v)) return c.Fail(Status::Error("value is NaN or Inf"));
    Result<int64_t> ms = FloatToTimeMs(*v);
    if (!ms.ok()) return c.Fail(ms.status());
    return Value(TimeValue{*ms});
  }
  if (fn == "externalURL" || fn == "pathPrefix") {
    GPUMON_RETURN_IF_ERROR(c.WantArgs(0));
    if (!data.function_external_url) {
      return c.Fail(Status::Error("external URL not available"));
    }
    const std::string& url = *data.function_external_url;
    return Value(fn == "externalURL" ? url : UrlPath(url));
  }
  return ExecErr(c.line(), "function \"" + fn + "\" not defined");
}

}  // namespace gpumon::rules::template_internal
