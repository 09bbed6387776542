#include "promql/promqltest/runner.h"

#include <re2/re2.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "promql/parser.h"
#include "promql/promqltest/at_variants.h"
#include "promql/promqltest/compare.h"
#include "tsdb/head/head.h"
#include "tsdb/head/head_appender.h"

namespace gpumon::promql::promqltest {

namespace {

constexpr int64_t kMinute = 60'000;

bool MatchesExpectation(const Expectation& e, const std::string& text) {
  switch (e.match) {
    case Expectation::Match::kAny:
      return true;
    case Expectation::Match::kMessage:
      return e.text == text;
    case Expectation::Match::kRegex:
      return RE2::PartialMatch(text, RE2(e.text, RE2::Quiet));
  }
  return false;
}

std::string JoinMessages(const std::vector<std::string>& msgs) {
  std::string out = "[";
  for (size_t i = 0; i < msgs.size(); ++i) {
    if (i) out += "; ";
    out += msgs[i];
  }
  return out + "]";
}

// The histogram series load_with_nhcb derives from a classic histogram
// series, or nothing when `m` is not one.
std::optional<Labels> NhcbBase(const Labels& m) {
  std::string_view name = m.Get(kMetricName);
  for (std::string_view suffix : {"_bucket", "_count", "_sum"}) {
    if (name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix) {
      if (suffix == "_bucket" && !m.Has("le")) return std::nullopt;
      std::vector<Label> out;
      for (const Label& l : m) {
        if (l.name == "le") continue;
        if (l.name == kMetricName) {
          out.push_back({l.name, std::string(name.substr(0, name.size() - suffix.size()))});
        } else {
          out.push_back(l);
        }
      }
      return Labels::FromSorted(std::move(out));
    }
  }
  return std::nullopt;
}

class Runner {
 public:
  Runner(const Script& script, const RunnerOptions& opts) : script_(script), engine_(opts.engine) {
    if (!opts.filter.empty()) filter_ = std::make_unique<RE2>(opts.filter, RE2::Quiet);
    Clear();
  }

  FileReport Run() {
    report_.file = script_.file;
    for (const Command& c : script_.commands) {
      if (const auto* load = std::get_if<LoadCommand>(&c)) {
        Load(*load);
      } else if (std::holds_alternative<ClearCommand>(c)) {
        Clear();
      } else if (const auto* eval = std::get_if<EvalCommand>(&c)) {
        if (Selected(eval->query, eval->line)) report_.evals.push_back(Eval(*eval));
      } else {
        const auto& err = std::get<ErrorCommand>(c);
        report_.evals.push_back({err.line, "(script)", Outcome::kFail, err.message});
      }
    }
    return std::move(report_);
  }

 private:
  bool Selected(const std::string& query, int line) const {
    if (!filter_) return true;
    return RE2::PartialMatch(query, *filter_) ||
           RE2::PartialMatch(script_.file + ":" + std::to_string(line), *filter_);
  }

  void Clear() {
    tsdb::head::HeadOptions ho;
    // Later loads may add older points to a series; accept them all.
    ho.ooo_window_ms = int64_t{1} << 62;
    head_ = std::make_unique<tsdb::head::Head>(ho);
    histogram_series_.clear();
  }

  void Load(const LoadCommand& cmd) {
    auto fail = [&](int line, const std::string& msg) {
      report_.evals.push_back({line, "load", Outcome::kFail, msg});
    };
    // A later line for the same series replaces an earlier one.
    std::map<Labels, const SeriesSpec*> series;
    for (const SeriesSpec& s : cmd.series) {
      Result<Labels> m = ParseMetric(s.metric);
      if (!m.ok()) {
        fail(s.line, "invalid series \"" + s.metric + "\": " + m.status().message());
        continue;
      }
      if (s.histogram) {
        histogram_series_.push_back({*m, s.line});
        continue;
      }
      series[*m] = &s;
      if (cmd.with_nhcb) {
        if (std::optional<Labels> base = NhcbBase(*m)) histogram_series_.push_back({*base, s.line});
      }
    }
    auto app = head_->Appender();
    for (const auto& [labels, spec] : series) {
      for (size_t i = 0; i < spec->values.size(); ++i) {
        if (spec->values[i].omitted) continue;
        int64_t t = static_cast<int64_t>(i) * cmd.interval_ms;
        Result<uint64_t> r = app->Append(0, labels, t, spec->values[i].value);
        if (!r.ok()) {
          fail(spec->line, "load: " + r.status().message());
          break;
        }
      }
    }
    Status st = app->Commit();
    if (!st.ok()) fail(cmd.line, "load: commit failed: " + st.message());
  }

  // Why an eval has to be skipped, or "".
  std::string SkipReason(const EvalCommand& cmd, const ParseResult& parsed) const {
    if (cmd.ExpectsHistogram()) return "expected result uses native-histogram notation";
    if (parsed.ok()) {
      std::string reason;
      ForEachVectorSelector(*parsed.expr, [&](const VectorSelector& vs) {
        if (!reason.empty()) return;
        for (const auto& entry : histogram_series_) {
          const Labels& labels = entry.first;
          const auto line = entry.second;
          bool all = std::all_of(vs.matchers.begin(), vs.matchers.end(),
                                 [&](const tsdb::Matcher& m) { return m.Matches(labels); });
          if (all) {
            reason = "selects native-histogram series " + labels.ToString() + " (loaded at line " +
                     std::to_string(line) + ")";
            return;
          }
        }
      });
      return reason;
    }
    // Unparseable query: fall back to metric names mentioned in it.
    for (const auto& [labels, line] : histogram_series_) {
      std::string_view name = labels.Get(kMetricName);
      if (!name.empty() && cmd.query.find(name) != std::string::npos) {
        return "mentions native-histogram metric " + std::string(name);
      }
    }
    return "";
  }

  EvalReport Eval(const EvalCommand& cmd) {
    EvalReport r{cmd.line, cmd.query, Outcome::kPass, ""};
    ParseResult parsed = Parse(cmd.query);
    if (std::string skip = SkipReason(cmd, parsed); !skip.empty()) {
      r.outcome = Outcome::kSkip;
      r.detail = skip;
      return r;
    }
    std::string msg;
    if (!parsed.ok()) {
      msg = "query does not parse: " + parsed.error->ToString();
    } else {
      Result<Expected> exp = Expectations(cmd);
      if (!exp.ok()) {
        msg = exp.status().message();
      } else if (cmd.is_range) {
        msg = RunRange(cmd, *parsed.expr, *exp);
      } else {
        msg = RunInstant(cmd, *parsed.expr, *exp);
      }
    }
    if (!msg.empty()) {
      r.outcome = Outcome::kFail;
      r.detail = msg;
    }
    return r;
  }

  Result<Expected> Expectations(const EvalCommand& cmd) const {
    Expected exp;
    exp.scalar = cmd.expected_scalar;
    exp.str = cmd.expected_string.value_or("");
    exp.ordered = cmd.IsOrdered();
    exp.start_ms = cmd.start_ms;
    if (cmd.is_range || cmd.expect_range_vector) {
      exp.step_ms = cmd.step_ms;
      exp.end_ms = cmd.end_ms;
    } else {
      exp.start_ms = cmd.eval_ms;
    }
    int pos = 0;
    for (const SeriesSpec& s : cmd.expected) {
      Result<Labels> m = ParseMetric(s.metric);
      if (!m.ok()) {
        return Status::Error("line " + std::to_string(s.line) + ": invalid series \"" + s.metric +
                             "\": " + m.status().message());
      }
      exp.series.push_back({*m, s.values, ++pos});
    }
    return exp;
  }

  QueryResult Instant(const Expr& e, int64_t t) {
    tsdb::head::Head* h = head_.get();
    Queryable q = [h](int64_t mint, int64_t maxt) { return h->Querier(mint, maxt); };
    return engine_.InstantExpr(q, e, t);
  }
  QueryResult Range(const Expr& e, int64_t start, int64_t end, int64_t step) {
    tsdb::head::Head* h = head_.get();
    Queryable q = [h](int64_t mint, int64_t maxt) { return h->Querier(mint, maxt); };
    return engine_.RangeExpr(q, e, start, end, step);
  }

  static std::string CheckExpectedFailure(const EvalCommand& cmd, const std::string& err) {
    if (cmd.expected_fail_message && *cmd.expected_fail_message != err) {
      return "expected error \"" + *cmd.expected_fail_message + "\", but got: " + err;
    }
    if (cmd.expected_fail_regexp && !RE2::PartialMatch(err, RE2(*cmd.expected_fail_regexp))) {
      return "expected error matching pattern \"" + *cmd.expected_fail_regexp +
             "\", but got: " + err;
    }
    for (const Expectation& e : cmd.expects) {
      if (e.type != ExpectType::kFail) continue;
      if (!MatchesExpectation(e, err)) {
        return "expected error matching \"" + e.text + "\", but got: " + err;
      }
      break;  // only one `expect fail` is allowed
    }
    return "";
  }

  static std::string CheckAnnotationsOfType(const EvalCommand& cmd, ExpectType type,
                                            const std::vector<std::string>& actual,
                                            const char* kind) {
    std::vector<const Expectation*> want;
    for (const Expectation& e : cmd.expects) {
      if (e.type == type) want.push_back(&e);
    }
    if (want.empty()) return "";
    if (actual.empty()) return std::string("expected ") + kind + " annotations but none were found";
    for (const Expectation* e : want) {
      bool found = std::any_of(actual.begin(), actual.end(),
                               [&](const std::string& a) { return MatchesExpectation(*e, a); });
      if (!found) {
        return std::string("expected ") + kind + " annotation matching " +
               (e->match == Expectation::Match::kRegex ? "pattern" : "message") + " \"" + e->text +
               "\" but no matching annotation was found, found: " + JoinMessages(actual);
      }
    }
    for (const std::string& a : actual) {
      bool found = std::any_of(want.begin(), want.end(),
                               [&](const Expectation* e) { return MatchesExpectation(*e, a); });
      if (!found) return std::string("unexpected ") + kind + " annotation \"" + a + "\"";
    }
    return "";
  }

  static std::string CheckAnnotations(const EvalCommand& cmd, const Annotations& a) {
    if (cmd.warn && a.warnings.empty()) return "expected warnings but got none";
    if (cmd.info && a.infos.empty()) return "expected info annotations but got none";
    if (auto m = CheckAnnotationsOfType(cmd, ExpectType::kWarn, a.warnings, "warn"); !m.empty()) {
      return m;
    }
    if (auto m = CheckAnnotationsOfType(cmd, ExpectType::kInfo, a.infos, "info"); !m.empty()) {
      return m;
    }
    if (cmd.Has(ExpectType::kNoWarn) && !a.warnings.empty()) {
      return "unexpected warning annotations: " + JoinMessages(a.warnings);
    }
    if (cmd.Has(ExpectType::kNoInfo) && !a.infos.empty()) {
      return "unexpected info annotations: " + JoinMessages(a.infos);
    }
    return "";
  }

  // Shared by range evals and each instant query: error expectations,
  // annotations, then the result. `done` tells the caller to stop checking
  // this query (an expected error was seen).
  static std::string CheckQuery(const EvalCommand& cmd, const Expected& exp, const QueryResult& res,
                                bool& done) {
    done = false;
    if (!res.ok()) {
      done = true;
      if (cmd.IsFail()) return CheckExpectedFailure(cmd, res.error);
      return std::string("error evaluating query (") + ErrorTypeName(res.error_type) +
             "): " + res.error;
    }
    if (cmd.IsFail()) return "expected error evaluating query but got none";
    if (std::string m = CheckAnnotations(cmd, res.annotations); !m.empty()) return m;
    return CompareResult(exp, res.value);
  }

  std::string RunRange(const EvalCommand& cmd, const Expr& expr, const Expected& exp) {
    QueryResult res = Range(expr, cmd.start_ms, cmd.end_ms, cmd.step_ms);
    bool done = false;
    std::string m = CheckQuery(cmd, exp, res, done);
    if (!m.empty() && res.ok()) m += "\ngot: " + DescribeValue(res.value);
    return m;
  }

  std::string RunInstant(const EvalCommand& cmd, const Expr& expr, const Expected& exp) {
    if (std::string m = RunInstantQuery(cmd, expr, cmd.query, cmd.eval_ms, exp); !m.empty()) {
      return m;
    }
    for (const AtVariant& v : AtModifierVariants(expr, cmd.eval_ms)) {
      std::string where =
          " [with @ pinned: `" + v.query + "` at t=" + std::to_string(v.eval_ms) + "ms]";
      ParseResult p = Parse(v.query);
      if (!p.ok()) return "printed query does not parse: " + p.error->ToString() + where;
      if (std::string m = RunInstantQuery(cmd, *p.expr, v.query, v.eval_ms, exp); !m.empty()) {
        return m + where;
      }
    }
    return "";
  }

  std::string RunInstantQuery(const EvalCommand& cmd, const Expr& expr, const std::string& text,
                              int64_t t, const Expected& exp) {
    QueryResult res = Instant(expr, t);
    bool done = false;
    if (std::string m = CheckQuery(cmd, exp, res, done); !m.empty() || done) {
      if (!m.empty() && res.ok()) m += "\ngot: " + DescribeValue(res.value);
      return m;
    }
    if (cmd.exclude_from_range_query) return "";
    static const RE2 kQueryContextFuncs(R"((start|end|range|step)\(\))");
    if (RE2::PartialMatch(text, kQueryContextFuncs)) return "";

    QueryResult rres = Range(expr, t - kMinute, t + kMinute, kMinute);
    if (!rres.ok()) return "error evaluating query in range mode: " + rres.error;
    if (cmd.IsOrdered()) return "";  // range results are always sorted by labels
    const auto* mat = std::get_if<Matrix>(&rres.value);
    if (!mat) return "range mode returned a non-matrix value " + DescribeValue(rres.value);
    for (size_t i = 0; i + 1 < mat->size(); ++i) {
      if ((*mat)[i].metric > (*mat)[i + 1].metric) {
        return "range mode: matrix results should always be sorted by labels, got " +
               DescribeValue(*mat);
      }
    }
    Vector vec;
    for (const Series& s : *mat) {
      for (const FPoint& p : s.points) {
        if (p.t == t) {
          vec.push_back({s.metric, p.t, p.f});
          break;
        }
      }
    }
    std::string m;
    if (std::holds_alternative<Scalar>(res.value)) {
      if (vec.empty()) return "range mode: no point at the evaluation time for a scalar result";
      m = CompareResult(exp, Scalar{t, vec[0].f});
    } else {
      m = CompareResult(exp, vec);
    }
    if (!m.empty()) {
      return "range mode (" + std::to_string(t - kMinute) + " to " + std::to_string(t + kMinute) +
             " step 1m): " + m + "\ngot: " + DescribeValue(rres.value);
    }
    return "";
  }

  const Script& script_;
  Engine engine_;
  std::unique_ptr<RE2> filter_;
  std::unique_ptr<tsdb::head::Head> head_;
  // Series not loaded because they hold native histograms, with the line
  // that introduced them.
  std::vector<std::pair<Labels, int>> histogram_series_;
  FileReport report_;
};

}  // namespace

int FileReport::Count(Outcome o) const {
  return static_cast<int>(std::count_if(evals.begin(), evals.end(),
                                        [&](const EvalReport& e) { return e.outcome == o; }));
}

FileReport RunScript(const Script& script, const RunnerOptions& options) {
  return Runner(script, options).Run();
}

Result<FileReport> RunScriptFile(const std::string& path, const RunnerOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Error(path + ": not found or not readable");
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Status::Error(path + ": read error");
  return RunScript(ParseScript(ss.str(), path), options);
}

}  // namespace gpumon::promql::promqltest
