#include "web/api/federate.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <map>
#include <vector>

#include "exposition/text_writer.h"
#include "promql/parser.h"
#include "tsdb/sample.h"

namespace gpumon::web::api {
namespace {

constexpr const char* kTextContentType = "text/plain; version=0.0.4; charset=utf-8";

struct Point {
  int64_t t = 0;
  double v = 0;
};

FederateReply PlainError(int status, std::string msg) {
  return {status, "text/plain; charset=utf-8", std::move(msg) + "\n"};
}

}  // namespace

void AppendGoFloat(double v, std::string* out) {
  if (std::isnan(v)) {
    out->append("NaN");
    return;
  }
  if (std::isinf(v)) {
    out->append(v > 0 ? "+Inf" : "-Inf");
    return;
  }
  char buf[64];
  // Shortest round-trip digits; Go's 'g' picks exponent form when the
  // decimal exponent is < -4 or >= 6 (its rule for the shortest precision).
  auto sci = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string_view s(buf, sci.ptr - buf);
  const size_t e = s.find('e');
  const int exp = std::atoi(std::string(s.substr(e + 1)).c_str());
  if (exp < -4 || exp >= 6) {
    out->append(s);
    return;
  }
  auto fix = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  out->append(buf, fix.ptr);
}

FederateReply Federate::Handle(const Params& p) {
  std::vector<std::vector<tsdb::Matcher>> sets;
  for (const auto& text : p.GetAll("match[]")) {
    auto ms = promql::ParseMetricSelector(text);
    if (!ms.ok()) return PlainError(400, ms.status().message());
    sets.push_back(std::move(ms).value());
  }

  const int64_t maxt = now_();
  const int64_t mint = maxt - lookback_ms_;
  // The newest sample of each series, in label order; a series matched by
  // several selectors is kept once.
  std::map<Labels, Point> latest;
  if (!sets.empty()) {
    auto q = backend_.Querier(mint, maxt);
    for (const auto& ms : sets) {
      auto set = q->Select(ms);
      while (set->Next()) {
        if (latest.count(set->labels())) continue;
        auto it = set->Iterator();
        bool found = false;
        Point last;
        while (it->Next()) {
          tsdb::Sample s = it->At();
          if (s.t < mint || s.t > maxt) continue;
          last = {s.t, s.v};
          found = true;
        }
        if (!it->status().ok()) return PlainError(500, it->status().message());
        if (!found || tsdb::IsStaleNaN(last.v)) continue;
        latest.emplace(set->labels(), last);
      }
      if (!set->status().ok()) return PlainError(500, set->status().message());
    }
  }

  std::vector<std::pair<const Labels*, Point>> samples;
  samples.reserve(latest.size());
  for (const auto& [l, pt] : latest) {
    if (l.Get(kMetricName).empty()) continue;  // nameless: cannot be exposed
    samples.emplace_back(&l, pt);
  }
  std::stable_sort(samples.begin(), samples.end(), [](const auto& a, const auto& b) {
    return a.first->Get(kMetricName) < b.first->Get(kMetricName);
  });

  // External labels, plus instance="" unless configured: a federating
  // server then cannot attach its own instance label to these series.
  std::vector<Label> ext(external_.begin(), external_.end());
  if (!external_.Has("instance")) {
    ext.push_back({"instance", ""});
    std::sort(ext.begin(), ext.end());
  }

  FederateReply reply{200, kTextContentType, {}};
  std::string& out = reply.body;
  std::string_view last_name;
  for (const auto& [lp, pt] : samples) {
    const Labels& l = *lp;
    std::string_view name = l.Get(kMetricName);
    if (name != last_name) {
      out.append("# TYPE ").append(name).append(" untyped\n");
      last_name = name;
    }
    out.append(name);
    bool first = true;
    auto add = [&](const std::string& n, std::string_view v) {
      out.push_back(first ? '{' : ',');
      first = false;
      out.append(n).append("=\"");
      exposition::AppendEscapedLabelValue(v, &out);
      out.push_back('"');
    };
    for (const auto& x : l) {
      if (x.name == kMetricName || x.value.empty()) continue;
      add(x.name, x.value);
    }
    for (const auto& x : ext) {
      // A series' own label wins over an external one of the same name,
      // even when its value is empty and hence not written.
      if (!l.Has(x.name)) add(x.name, x.value);
    }
    if (!first) out.push_back('}');
    out.push_back(' ');
    AppendGoFloat(pt.v, &out);
    out.push_back(' ');
    out.append(std::to_string(pt.t));
    out.push_back('\n');
  }
  return reply;
}

}  // namespace gpumon::web::api
