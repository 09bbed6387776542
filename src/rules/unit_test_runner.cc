#include "rules/unit_test_runner.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "common/path_glob.h"
#include "promql/engine.h"
#include "promql/parser.h"
#include "promql/parser/quote.h"
#include "promql/printer.h"
#include "promql/promqltest/series_values.h"
#include "rules/alerting_rule.h"
#include "rules/group.h"
#include "rules/manager.h"
#include "rules/prometheus2_compat.h"
#include "rules/rule_check.h"
#include "scrape/appender.h"
#include "tsdb/head/head.h"
#include "tsdb/head/head_appender.h"
#include "tsdb/sample.h"

namespace gpumon::rules {

using promql::internal::GoQuote;  // strconv.Quote, as promtool's %q prints

std::string GoLabelsString(const Labels& l) {
  std::string out = "{";
  bool first = true;
  for (const auto& x : l) {
    if (!first) out += ", ";
    first = false;
    out += x.name + "=" + GoQuote(x.value);
  }
  return out + "}";
}

std::string GoFloatE(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  for (int prec = 0; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof(buf), "%.*E", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

std::string GoTimeDuration(int64_t ms) {
  if (ms == 0) return "0s";
  std::string sign = ms < 0 ? "-" : "";
  uint64_t u = ms < 0 ? static_cast<uint64_t>(-(ms + 1)) + 1 : static_cast<uint64_t>(ms);
  if (u < 1000) return sign + std::to_string(u) + "ms";
  uint64_t h = u / 3600000, m = (u / 60000) % 60, s = (u / 1000) % 60, frac = u % 1000;
  std::string secs = std::to_string(s);
  if (frac != 0) {
    char f[8];
    std::snprintf(f, sizeof(f), "%03" PRIu64, frac);
    std::string fs = f;
    while (!fs.empty() && fs.back() == '0') fs.pop_back();
    secs += "." + fs;
  }
  std::string out = sign;
  if (h > 0) out += std::to_string(h) + "h";
  if (h > 0 || m > 0) out += std::to_string(m) + "m";
  return out + secs + "s";
}

namespace {

constexpr int64_t kMinuteMs = 60 * 1000;

// filepath.Join(dir, file) for the rule_files entries promtool resolves.
std::string JoinPath(const std::string& dir, const std::string& file) {
  if (file.empty() || file[0] == '/') return file;
  std::filesystem::path p = std::filesystem::path(dir) / file;
  std::string s = p.lexically_normal().string();
  if (s.size() > 1 && s.back() == '/') s.pop_back();
  return s.empty() ? "." : s;
}

// An alert as promtool compares it.
using AlertSet = std::vector<std::pair<Labels, Labels>>;

std::string IndentLines(const std::string& lines, const std::string& indent) {
  std::string out;
  size_t pos = 0;
  bool first = true;
  while (true) {
    size_t nl = lines.find('\n', pos);
    if (!first) out += indent;
    first = false;
    out += lines.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    if (nl == std::string::npos) break;
    out += '\n';
    pos = nl + 1;
  }
  return out;
}

std::string AlertSetString(const AlertSet& set) {
  if (set.empty()) return "[]";
  std::string s;
  for (size_t i = 0; i < set.size(); ++i) {
    std::string one =
        "Labels:" + GoLabelsString(set[i].first) + "\nAnnotations:" + GoLabelsString(set[i].second);
    s += (i == 0 ? "[\n" : ",\n") + std::to_string(i) + ":" + IndentLines("\n" + one, "  ");
  }
  return s + "\n]";
}

using SampleSet = std::vector<std::pair<Labels, double>>;

std::string SampleSetString(const SampleSet& set) {
  if (set.empty()) return "nil";
  std::string s;
  for (size_t i = 0; i < set.size(); ++i) {
    s += (i == 0 ? "" : ", ") + GoLabelsString(set[i].first) + " " + GoFloatE(set[i].second);
  }
  return s;
}

bool SameSamples(const SampleSet& a, const SampleSet& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    // reflect.DeepEqual: labels equal, values == (NaN never equals).
    if (!(a[i].first == b[i].first) || !(a[i].second == b[i].second)) return false;
  }
  return true;
}

// One input series, its points in time order, appended lazily.
struct InputSeries {
  Labels labels;
  std::vector<tsdb::Sample> points;
  size_t next = 0;
};

class TestGroupRun {
 public:
  TestGroupRun(const UnitTestGroup& tg, int64_t eval_interval_ms,
               const std::map<std::string, int>& order, const std::vector<RuleFileSpec>& rule_files,
               const UnitTestOptions& opts)
      : tg_(tg),
        eval_interval_ms_(eval_interval_ms),
        order_(order),
        rule_files_(rule_files),
        opts_(opts),
        engine_(EngineOptions(eval_interval_ms, opts)) {}

  std::vector<std::string> Run() {
    if (!LoadSeries()) return errs_;
    if (!BuildRuleGroups()) return errs_;

    // The alert tests by eval time, each checked after the evaluation at
    // the last step <= its time.
    std::map<int64_t, std::vector<const AlertTestCase*>> alert_tests;
    for (const AlertTestCase& a : tg_.alert_rule_test) {
      if (a.alertname.empty()) {
        std::string in_group = tg_.name.empty() ? "" : " (in TestGroup " + tg_.name + ")";
        return {
            "an item under alert_rule_test misses required attribute alertname at "
            "eval_time " +
            promql::FormatDuration(a.eval_time_ms) + in_group};
      }
      alert_tests[a.eval_time_ms].push_back(&a);
    }
    auto next_alert = alert_tests.begin();

    const int64_t maxt = MaxEvalTime();
    for (int64_t ts = 0; ts <= maxt; ts += eval_interval_ms_) {
      std::vector<std::string> eval_errs;
      if (Status st = AppendTill(ts); !st.ok()) {
        errs_.push_back(st.message());
      } else {
        for (Group* g : groups_) {
          g->Eval(ts);
          for (const auto& r : g->rules()) {
            RuleStatus s = r->status();
            if (s.health == RuleHealth::kBad) {
              eval_errs.push_back("    rule: " + r->name() + ", time: " + GoTimeDuration(ts) +
                                  ", err: " + s.last_error);
            }
          }
        }
      }
      errs_.insert(errs_.end(), eval_errs.begin(), eval_errs.end());
      if (!eval_errs.empty()) return errs_;

      while (next_alert != alert_tests.end() && ts <= next_alert->first &&
             next_alert->first < ts + eval_interval_ms_) {
        CheckAlerts(next_alert->second);
        ++next_alert;
      }
    }
    for (const PromqlTestCase& c : tg_.promql_expr_test) CheckExpr(c);
    return errs_;
  }

 private:
  static promql::EngineOptions EngineOptions(int64_t eval_interval_ms,
                                             const UnitTestOptions& opts) {
    promql::EngineOptions o;
    o.lookback_delta_ms = opts.prometheus3 ? 5 * kMinuteMs : kPrometheus2LookbackMs;
    o.max_samples = 10000;
    o.timeout_ms = 100 * 1000;
    o.default_eval_step_ms = eval_interval_ms;
    return o;
  }

  promql::Queryable Queryable() {
    tsdb::head::Head* h = &head_;
    return [h](int64_t mint, int64_t maxt) { return h->Querier(mint, maxt); };
  }

  int64_t MaxEvalTime() const {
    int64_t m = 0;
    for (const auto& a : tg_.alert_rule_test) m = std::max(m, a.eval_time_ms);
    for (const auto& p : tg_.promql_expr_test) m = std::max(m, p.eval_time_ms);
    return m;
  }

  // Parses input_series like promtool's `load <interval>` block.
  bool LoadSeries() {
    std::map<Labels, size_t> index;
    for (const UnitTestSeries& s : tg_.input_series) {
      std::string line = s.series + " " + s.values;
      auto fail = [&](const std::string& msg) {
        errs_.push_back("input series at line " + std::to_string(s.line) + " (" + line +
                        "): " + msg);
        return false;
      };
      auto parts = promql::promqltest::SplitSeriesLine(line);
      if (!parts.ok()) return fail(parts.status().message());
      Result<Labels> metric = promql::ParseMetric(parts->metric);
      if (!metric.ok()) return fail(metric.status().message());
      auto values = promql::promqltest::ExpandSeriesValues(parts->values);
      if (!values.ok()) return fail(values.status().message());
      if (values->histogram) return fail("native histogram samples are not supported");
      InputSeries in;
      in.labels = *metric;
      int64_t t = 0;
      for (const auto& v : values->values) {
        // With interval 0 every point lies at t=0; promtool keeps the first.
        if (!v.omitted && (in.points.empty() || t > in.points.back().t)) {
          in.points.push_back({t, v.value});
        }
        t += tg_.interval_ms;
      }
      auto [it, inserted] = index.emplace(in.labels, series_.size());
      if (inserted) {
        series_.push_back(std::move(in));
      } else {
        series_[it->second] = std::move(in);
      }
    }
    return true;
  }

  Status AppendTill(int64_t ts) {
    auto app = head_.Appender();
    bool any = false;
    for (InputSeries& s : series_) {
      while (s.next < s.points.size() && s.points[s.next].t <= ts) {
        const tsdb::Sample& p = s.points[s.next++];
        Result<uint64_t> r = app->Append(0, s.labels, p.t, p.v);
        if (!r.ok()) return r.status();
        any = true;
      }
    }
    return any ? app->Commit() : Status::Ok();
  }

  bool BuildRuleGroups() {
    deps_.engine = &engine_;
    deps_.queryable = Queryable();
    tsdb::head::Head* h = &head_;
    deps_.appender = scrape::HeadAppenderFactory([h] { return h->Appender(); });
    deps_.now_ms = [] { return int64_t{0}; };
    // promtool runs rules without an external URL, and its template queries
    // select with the same windows as the rules.
    deps_.template_external_url = false;
    if (!opts_.prometheus3) {
      deps_.adapt_template_query = [](promql::Expr& e) -> Status {
        if (std::string why = Prometheus2Incompatibility(e); !why.empty()) {
          return Status::Error(why);
        }
        WidenWindowsForPrometheus2(e);
        return Status::Ok();
      };
    }
    for (const RuleFileSpec& spec : rule_files_) {
      auto built = BuildGroups(spec, tg_.interval_ms, tg_.external_labels, tg_.external_url,
                               /*should_restore=*/false, &deps_);
      if (!built.ok()) {
        errs_.push_back(built.status().message());
        return false;
      }
      owned_.insert(owned_.end(), built->begin(), built->end());
    }
    for (const auto& g : owned_) groups_.push_back(g.get());
    auto rank = [&](const Group* g) {
      auto it = order_.find(g->name());
      return it == order_.end() ? 0 : it->second;
    };
    std::stable_sort(groups_.begin(), groups_.end(),
                     [&](const Group* a, const Group* b) { return rank(a) < rank(b); });
    return true;
  }

  void CheckAlerts(const std::vector<const AlertTestCase*>& cases) {
    std::set<std::string> names;
    for (const AlertTestCase* c : cases) names.insert(c->alertname);
    std::map<std::string, AlertSet> got;
    for (Group* g : groups_) {
      for (const auto& r : g->rules()) {
        if (!r->alerting() || !names.count(r->name())) continue;
        auto& set = got[r->name()];
        for (const ActiveAlert& a : static_cast<const AlertingRule&>(*r).ActiveAlerts()) {
          if (a.state == AlertState::kFiring) set.emplace_back(a.labels, a.annotations);
        }
      }
    }
    for (const AlertTestCase* c : cases) {
      AlertSet g = got[c->alertname];
      AlertSet exp;
      for (const UnitTestAlert& a : c->exp_alerts) {
        std::vector<Label> ls;
        for (const auto& l : a.exp_labels) {
          if (l.name != "alertname") ls.push_back(l);
        }
        ls.push_back({"alertname", c->alertname});
        exp.emplace_back(Labels::FromUnsorted(std::move(ls)), a.exp_annotations);
      }
      std::sort(g.begin(), g.end());
      std::sort(exp.begin(), exp.end());
      if (g == exp) continue;
      std::string name = tg_.name.empty() ? "" : "    name: " + tg_.name + ",\n";
      errs_.push_back(name + "    alertname: " + c->alertname +
                      ", time: " + promql::FormatDuration(c->eval_time_ms) +
                      ", \n        exp:" + IndentLines(AlertSetString(exp), "            ") +
                      ", \n        got:" + IndentLines(AlertSetString(g), "            "));
    }
  }

  void CheckExpr(const PromqlTestCase& c) {
    const std::string where =
        "    expr: " + GoQuote(c.expr) + ", time: " + promql::FormatDuration(c.eval_time_ms);
    promql::ParseResult p = promql::Parse(c.expr);
    if (!p.ok()) {
      errs_.push_back(where + ", err: " + p.error->ToString());
      return;
    }
    if (!opts_.prometheus3) {
      if (std::string why = Prometheus2Incompatibility(*p.expr); !why.empty()) {
        errs_.push_back(where + ", err: " + why);
        return;
      }
      WidenWindowsForPrometheus2(*p.expr);
    }
    promql::QueryResult r = engine_.InstantExpr(Queryable(), *p.expr, c.eval_time_ms);
    if (!r.ok()) {
      errs_.push_back(where + ", err: " + r.error);
      return;
    }
    SampleSet got;
    if (auto* v = std::get_if<promql::Vector>(&r.value)) {
      for (const auto& s : *v) got.emplace_back(s.metric, s.f);
    } else if (auto* s = std::get_if<promql::Scalar>(&r.value)) {
      got.emplace_back(Labels(), s->v);
    } else {
      errs_.push_back(where + ", err: rule result is not a vector or scalar");
      return;
    }
    SampleSet exp;
    for (const UnitTestSample& s : c.exp_samples) {
      Labels l;
      if (s.labels.find_first_not_of(" \t\r\n") != std::string::npos) {
        Result<Labels> m = promql::ParseMetric(s.labels);
        if (!m.ok()) {
          errs_.push_back(where + ", err: labels " + GoQuote(s.labels) + ": " +
                          m.status().message());
          return;
        }
        l = *m;
      }
      exp.emplace_back(std::move(l), s.value);
    }
    auto by_labels = [](const auto& a, const auto& b) { return a.first < b.first; };
    std::stable_sort(got.begin(), got.end(), by_labels);
    std::stable_sort(exp.begin(), exp.end(), by_labels);
    if (SameSamples(exp, got)) return;
    errs_.push_back(where + ",\n        exp: " + SampleSetString(exp) +
                    "\n        got: " + SampleSetString(got));
  }

  const UnitTestGroup& tg_;
  const int64_t eval_interval_ms_;
  const std::map<std::string, int>& order_;
  const std::vector<RuleFileSpec>& rule_files_;
  const UnitTestOptions& opts_;
  tsdb::head::Head head_;
  promql::Engine engine_;
  GroupDeps deps_;
  std::vector<InputSeries> series_;
  std::vector<std::shared_ptr<Group>> owned_;
  std::vector<Group*> groups_;  // in evaluation order
  std::vector<std::string> errs_;
};

}  // namespace

UnitTestReport RunUnitTests(const UnitTestFile& file, const UnitTestOptions& opts) {
  UnitTestReport rep;
  std::string dir = std::filesystem::path(file.path).parent_path().string();
  if (dir.empty()) dir = ".";
  std::vector<std::string> paths;
  for (const std::string& rf : file.rule_files) {
    std::string pattern = JoinPath(dir, rf);
    std::vector<std::string> m = GlobPaths(pattern);
    if (m.empty()) rep.warnings.push_back("no file match pattern " + pattern);
    paths.insert(paths.end(), m.begin(), m.end());
  }
  const int64_t interval =
      file.evaluation_interval_ms > 0 ? file.evaluation_interval_ms : kMinuteMs;
  std::map<std::string, int> order;
  for (size_t i = 0; i < file.group_eval_order.size(); ++i) {
    if (!order.emplace(file.group_eval_order[i], static_cast<int>(i)).second) {
      rep.errors.push_back("group name repeated in evaluation order: " + file.group_eval_order[i]);
      return rep;
    }
  }
  if (file.tests.empty()) return rep;

  // promtool loads the rule files for every test group; they are the same
  // each time, so load them once and repeat a failure per test group.
  std::vector<RuleFileSpec> specs;
  std::string load_error;
  for (const std::string& p : paths) {
    Result<RuleFileSpec> spec = LoadRuleFileChecked(p, opts.prometheus3);
    if (!spec.ok()) {
      load_error = spec.status().message();
      break;
    }
    if (!opts.prometheus3) {
      for (auto& g : spec->groups) {
        for (auto& r : g.rules) {
          promql::ParseResult parsed = promql::Parse(r.expr);
          if (!parsed.ok()) continue;  // BuildGroups reports it
          WidenWindowsForPrometheus2(*parsed.expr);
          r.expr = promql::Print(*parsed.expr);
        }
      }
    }
    specs.push_back(std::move(spec).value());
  }
  for (const UnitTestGroup& tg : file.tests) {
    if (!load_error.empty()) {
      rep.errors.push_back(load_error);
      continue;
    }
    TestGroupRun run(tg, interval, order, specs, opts);
    std::vector<std::string> errs = run.Run();
    rep.errors.insert(rep.errors.end(), errs.begin(), errs.end());
  }
  return rep;
}

UnitTestReport RunUnitTestFile(const std::string& path, const UnitTestOptions& opts) {
  Result<UnitTestFile> file = LoadUnitTestFile(path);
  if (!file.ok()) {
    UnitTestReport rep;
    rep.errors.push_back(file.status().message());
    return rep;
  }
  return RunUnitTests(*file, opts);
}

}  // namespace gpumon::rules
