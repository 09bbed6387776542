// Prometheus's query functions and helpers in alert templates
// (src/rules/template_query.cc), and their binding in alerting rules.
#include "rules/template_query.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "rules/alerting_rule.h"
#include "rules/template.h"
#include "test_env.h"

namespace gpumon::rules {
namespace {

using testing::kMinute;
using testing::TestEnv;

// A query function answering from a table and recording what was asked.
struct FakeQueries {
  std::map<std::string, std::vector<TemplateSample>> answers;
  std::map<std::string, std::string> errors;
  std::vector<std::string> asked;

  TemplateQueryFunc Func() {
    return [this](const std::string& q) -> Result<std::vector<TemplateSample>> {
      asked.push_back(q);
      if (auto e = errors.find(q); e != errors.end()) return Status::Error(e->second);
      auto it = answers.find(q);
      if (it == answers.end()) return std::vector<TemplateSample>{};
      return it->second;
    };
  }
};

TemplateData Data(FakeQueries* fq) {
  TemplateData d;
  d.labels = Labels{{"gpu", "3"}, {"hostname", "n1"}};
  d.value = 91;
  if (fq != nullptr) d.query = fq->Func();
  return d;
}

Result<std::string> RunTemplate(const std::string& text, const TemplateData& d) {
  auto t = Template::Parse(text);
  if (!t.ok()) return t.status();
  return t->Execute(d);
}

std::string Expand(const std::string& text, FakeQueries* fq) {
  auto r = RunTemplate(text, Data(fq));
  EXPECT_TRUE(r.ok()) << text << ": " << r.status().message();
  return r.ok() ? r.value() : "<error>";
}

std::string Error(const std::string& text, FakeQueries* fq) {
  auto r = RunTemplate(text, Data(fq));
  EXPECT_FALSE(r.ok()) << text << " expanded to " << (r.ok() ? r.value() : "");
  return r.ok() ? "" : r.status().message();
}

TemplateSample S(Labels l, double v) { return {std::move(l), v}; }

const char kLimitTemplate[] =
    "{{ with printf \"gpu_memory_max_operating_temperature_celsius{hostname='%s',gpu='%s'}\" "
    "$labels.hostname $labels.gpu | query }}{{ . | first | value | humanize }}{{ end }}";
const char kLimitQuery[] = "gpu_memory_max_operating_temperature_celsius{hostname='n1',gpu='3'}";

TEST(TemplateQueryTest, QueryFirstValueAsTheRulePackWritesThem) {
  FakeQueries fq;
  fq.answers[kLimitQuery] = {
      S({{"__name__", "gpu_memory_max_operating_temperature_celsius"}, {"gpu", "3"}}, 95)};
  EXPECT_EQ(Expand(kLimitTemplate, &fq), "95");
  ASSERT_EQ(fq.asked.size(), 1u);
  EXPECT_EQ(fq.asked[0], kLimitQuery);
  // An empty result is false: `with` skips its body.
  fq.answers.clear();
  EXPECT_EQ(Expand(kLimitTemplate, &fq), "");
  EXPECT_EQ(Expand("{{ with query \"up\" }}some{{ else }}none{{ end }}", &fq), "none");
  EXPECT_EQ(Expand("{{ if query \"up\" }}some{{ else }}none{{ end }}", &fq), "none");
}

TEST(TemplateQueryTest, SampleFunctionsAndFields) {
  FakeQueries fq;
  fq.answers["up"] = {S({{"__name__", "up"}, {"instance", "a:1"}, {"job", "gpu"}}, 1),
                      S({{"__name__", "up"}, {"instance", "b:1"}, {"job", "gpu"}}, 0)};
  fq.answers["info"] = {S({{"__value__", "text"}, {"kind", "x"}}, 7)};
  EXPECT_EQ(Expand("{{ $s := query \"up\" | first }}{{ label \"instance\" $s }} {{ value $s }} "
                   "{{ $s.Labels.job }} {{ $s.Value }} [{{ label \"nope\" $s }}]",
                   &fq),
            "a:1 1 gpu 1 []");
  EXPECT_EQ(Expand("{{ query \"up\" | first | label \"instance\" }}", &fq), "a:1");
  EXPECT_EQ(Expand("{{ query \"info\" | first | strvalue }}", &fq), "text");
  EXPECT_EQ(Expand("[{{ query \"up\" | first | strvalue }}]", &fq), "[]");
  EXPECT_EQ(Expand("{{ len (query \"up\") }} {{ (index (query \"up\") 1).Labels.instance }}", &fq),
            "2 b:1");
  // text/template prints a *sample as its struct.
  EXPECT_EQ(Expand("{{ query \"info\" | first }}", &fq), "{map[__value__:text kind:x] 7}");
  // value returns a float64, which the humanizing functions and printf take.
  EXPECT_EQ(Expand("{{ query \"info\" | first | value | printf \"%.1f\" }}", &fq), "7.0");
}

TEST(TemplateQueryTest, RangeOverAQueryResult) {
  FakeQueries fq;
  fq.answers["t"] = {S({{"gpu", "0"}}, 70), S({{"gpu", "1"}}, 92.5)};
  EXPECT_EQ(Expand("{{ range query \"t\" }}{{ .Labels.gpu }}={{ .Value }};{{ end }}", &fq),
            "0=70;1=92.5;");
  EXPECT_EQ(Expand("{{ range $s := query \"t\" }}{{ label \"gpu\" $s }} {{ end }}", &fq), "0 1 ");
  EXPECT_EQ(Expand("{{ range $i, $s := query \"t\" }}{{ $i }}:{{ $s.Value }} {{ end }}", &fq),
            "0:70 1:92.5 ");
  EXPECT_EQ(Expand("{{ range query \"none\" }}x{{ else }}empty{{ end }}", &fq), "empty");
  // $ and the alert's variables stay visible inside the range.
  EXPECT_EQ(
      Expand("{{ range query \"t\" }}{{ $labels.hostname }}/{{ .Labels.gpu }} {{ end }}", &fq),
      "n1/0 n1/1 ");
}

TEST(TemplateQueryTest, SortByLabelIsStableAndSortsInPlace) {
  FakeQueries fq;
  fq.answers["m"] = {S({{"gpu", "2"}}, 1), S({{"gpu", "10"}}, 2), S({{"other", "x"}}, 3),
                     S({{"gpu", "2"}}, 4)};
  EXPECT_EQ(Expand("{{ range query \"m\" }}{{ .Value }} {{ end }}", &fq), "1 2 3 4 ");
  // String order, a missing label as "": "" < "10" < "2" = "2" (stable).
  EXPECT_EQ(Expand("{{ range sortByLabel \"gpu\" (query \"m\") }}{{ .Value }} {{ end }}", &fq),
            "3 2 1 4 ");
  EXPECT_EQ(Expand("{{ range query \"m\" | sortByLabel \"gpu\" }}{{ .Value }} {{ end }}", &fq),
            "3 2 1 4 ");
  // Prometheus sorts the slice it is given: the variable sees the new order.
  EXPECT_EQ(Expand("{{ $r := query \"m\" }}{{ $s := sortByLabel \"other\" $r }}"
                   "{{ range $r }}{{ .Value }} {{ end }}",
                   &fq),
            "1 2 4 3 ");
}

TEST(TemplateQueryTest, ErrorsFailTheExecution) {
  FakeQueries fq;
  fq.answers["one"] = {S({{"a", "b"}}, 1)};
  fq.errors["sum("] = "1:5: parse error: unclosed left parenthesis";
  std::string e = Error("x\n{{ query \"nosuch\" | first | value }}", &fq);
  EXPECT_NE(e.find("line 2: error calling first: first() called on vector with no elements"),
            std::string::npos)
      << e;
  e = Error("{{ query \"sum(\" }}", &fq);
  EXPECT_NE(e.find("error calling query: 1:5: parse error: unclosed left parenthesis"),
            std::string::npos)
      << e;
  // Without a query function the template still parses, and fails only when run.
  ASSERT_TRUE(Template::Parse(kLimitTemplate).ok());
  e = Error(kLimitTemplate, nullptr);
  EXPECT_NE(e.find("error calling query: query not available"), std::string::npos) << e;

  e = Error("{{ value nil }}", &fq);
  EXPECT_NE(e.find("error calling value: runtime error: invalid memory address"), std::string::npos)
      << e;
  e = Error("{{ first \"x\" }}", &fq);
  EXPECT_NE(e.find("expected template.queryResult; got string"), std::string::npos) << e;
  e = Error("{{ query \"one\" | first | first }}", &fq);
  EXPECT_NE(e.find("expected template.queryResult; got *template.sample"), std::string::npos) << e;
  e = Error("{{ label \"a\" }}", &fq);
  EXPECT_NE(e.find("wrong number of args for label: want 2 got 1"), std::string::npos) << e;
  e = Error("{{ query 5 }}", &fq);
  EXPECT_NE(e.find("expected string; got int"), std::string::npos) << e;
  e = Error("{{ index (query \"one\") 1 }}", &fq);
  EXPECT_NE(e.find("error calling index: reflect: slice index out of range"), std::string::npos)
      << e;
  e = Error("{{ index (query \"one\") 5 }}", &fq);
  EXPECT_NE(e.find("error calling index: index out of range: 5"), std::string::npos) << e;
  e = Error("{{ (query \"one\").Value }}", &fq);
  EXPECT_NE(e.find("can't evaluate field Value in type template.queryResult"), std::string::npos)
      << e;
  e = Error("{{ humanizeTimestamp 1e10 }}", &fq);
  EXPECT_NE(e.find("1e+10 cannot be represented as a nanoseconds timestamp since it overflows"),
            std::string::npos)
      << e;
}

TEST(TemplateQueryTest, Args) {
  EXPECT_EQ(Expand("{{ with args \"a\" 2 }}{{ .arg0 }}-{{ .arg1 }}-{{ .arg2 }}{{ end }}", nullptr),
            "a-2-<no value>");
  EXPECT_EQ(Expand("{{ args 1 nil \"x\" }}", nullptr), "map[arg0:1 arg1:<nil> arg2:x]");
  EXPECT_EQ(Expand("{{ len (args 1 2 3) }} {{ index (args 1 2) \"arg1\" }}", nullptr), "3 2");
}

TEST(TemplateQueryTest, LinksAndHosts) {
  EXPECT_EQ(Expand("{{ graphLink \"up == 0\" }}", nullptr), "/graph?g0.expr=up+%3D%3D+0&g0.tab=0");
  EXPECT_EQ(Expand("{{ tableLink \"rate(x[5m])\" }}", nullptr),
            "/graph?g0.expr=rate%28x%5B5m%5D%29&g0.tab=1");
  EXPECT_EQ(Expand("{{ stripDomain \"node-a.example.com:9400\" }}", nullptr), "node-a:9400");
  EXPECT_EQ(Expand("{{ stripDomain \"node-a.example.com\" }}", nullptr), "node-a");
  EXPECT_EQ(Expand("{{ stripDomain \"10.0.0.1:9400\" }}", nullptr), "10.0.0.1:9400");
  EXPECT_EQ(Expand("{{ stripDomain \"[2001:db8::1]:80\" }}", nullptr), "[2001:db8::1]:80");
  EXPECT_EQ(Expand("{{ stripPort \"[::1]:9400\" }}", nullptr), "::1");
  EXPECT_EQ(Expand("{{ stripPort \"node1\" }}", nullptr), "node1");
  EXPECT_EQ(Expand("{{ stripPort \"a:b:c\" }}", nullptr), "a:b:c");
  std::string host, port, err;
  EXPECT_FALSE(template_internal::SplitHostPort("[::1]", &host, &port, &err));
  EXPECT_EQ(err, "address [::1]: missing port in address");
}

TEST(TemplateQueryTest, ParseDurationAndToTime) {
  EXPECT_EQ(Expand("{{ parseDuration \"1h30m\" }}", nullptr), "5400");
  EXPECT_EQ(Expand("{{ parseDuration \"0\" }} {{ parseDuration \"500ms\" }}", nullptr), "0 0.5");
  EXPECT_EQ(Expand("{{ parseDuration \"1y\" }}", nullptr), "3.1536e+07");
  EXPECT_NE(Error("{{ parseDuration \"1.5h\" }}", nullptr)
                .find("error calling parseDuration: not a valid duration string: \"1.5h\""),
            std::string::npos);
  EXPECT_NE(Error("{{ parseDuration \"1m1h\" }}", nullptr).find("not a valid duration string"),
            std::string::npos);
  EXPECT_NE(Error("{{ parseDuration \"\" }}", nullptr).find("empty duration string"),
            std::string::npos);
  EXPECT_NE(Error("{{ parseDuration \"300y\" }}", nullptr).find("duration out of range"),
            std::string::npos);
  EXPECT_EQ(Expand("{{ toTime 1435065584.128 }}", nullptr), "2015-06-23 13:19:44.128 +0000 UTC");
  EXPECT_EQ(Expand("{{ (toTime \"1435065584.128\").Unix }}", nullptr), "1435065584");
  EXPECT_NE(
      Error("{{ toTime \"NaN\" }}", nullptr).find("error calling toTime: value is NaN or Inf"),
      std::string::npos);
}

TEST(TemplateQueryTest, ExternalUrlAndPathPrefix) {
  TemplateData d = Data(nullptr);
  d.function_external_url = "http://prom.example:9090/gpumon";
  auto r = RunTemplate("{{ externalURL }} {{ pathPrefix }}", d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, "http://prom.example:9090/gpumon /gpumon");
  d.function_external_url.reset();
  r = RunTemplate("{{ pathPrefix }}", d);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("error calling pathPrefix: external URL not available"),
            std::string::npos);
}

TEST(TemplateQueryTest, FunctionsOutsidePrometheus242AreRefusedAtParse) {
  for (const char* fn : {"now", "toDuration", "urlQueryEscape"}) {
    auto t = Template::Parse(std::string("{{ ") + fn + " }}");
    ASSERT_FALSE(t.ok()) << fn;
    EXPECT_NE(t.status().message().find("is not supported in alert templates"), std::string::npos);
    EXPECT_NE(t.status().message().find("Prometheus 2.42"), std::string::npos);
  }
  for (const char* fn : {"tmpl", "html", "js", "call", "slice"}) {
    auto t = Template::Parse(std::string("{{ ") + fn + " \"x\" }}");
    ASSERT_FALSE(t.ok()) << fn;
    EXPECT_NE(t.status().message().find("is not supported in alert templates"), std::string::npos);
  }
}

// ------------------------------------------------- in an alerting rule

const Labels kTemp{{"__name__", "gpu_temp"}, {"gpu", "0"}};
const Labels kLimit{{"__name__", "gpu_limit"}, {"gpu", "0"}};

std::string Annotation(Group& g, const std::string& name) {
  auto* rule = static_cast<AlertingRule*>(g.rules().back().get());
  auto alerts = rule->ActiveAlerts();
  EXPECT_EQ(alerts.size(), 1u);
  return alerts.empty() ? "<no alert>" : std::string(alerts[0].annotations.Get(name));
}

TEST(AlertingTemplateQueryTest, AnnotationReadsAnotherSeriesAtTheEvaluationTime) {
  TestEnv env;
  env.Add(kTemp, 0, 96);
  env.Add(kLimit, 0, 95);
  env.Add(kLimit, 90 * 1000, 90);
  env.Add(kLimit, 150 * 1000, 80);  // after the second evaluation
  auto g = env.MakeGroup(R"(groups:
- name: hot
  rules:
  - record: gpu_limit:doubled
    expr: gpu_limit * 2
  - alert: Hot
    expr: gpu_temp > 85
    annotations:
      limit: '{{ with printf "gpu_limit{gpu=''%s''}" $labels.gpu | query }}{{ . | first | value }}{{ end }}'
      doubled: '{{ query "gpu_limit:doubled" | first | value }}'
      missing: '{{ query "nosuch" | first | value }}'
)");
  ASSERT_TRUE(g);
  g->Eval(kMinute);
  EXPECT_EQ(Annotation(*g, "limit"), "95");
  // The group's earlier rule wrote its result before this rule ran.
  EXPECT_EQ(Annotation(*g, "doubled"), "190");
  EXPECT_EQ(Annotation(*g, "missing"),
            "<error expanding template: line 1: error calling first: first() called on vector "
            "with no elements>");
  // Re-expanded at each evaluation, seeing no sample after it.
  g->Eval(2 * kMinute);
  EXPECT_EQ(Annotation(*g, "limit"), "90");
  EXPECT_EQ(Annotation(*g, "doubled"), "180");
  EXPECT_EQ(g->rules().back()->status().health, RuleHealth::kGood);
}

TEST(AlertingTemplateQueryTest, QueryOffsetShiftsTheRuleNotItsTemplates) {
  TestEnv env;
  env.Add(kTemp, 0, 96);
  env.Add(kLimit, 0, 95);
  env.Add(kLimit, 90 * 1000, 90);
  auto g = env.MakeGroup(R"(groups:
- name: hot
  query_offset: 1m
  rules:
  - alert: Hot
    expr: gpu_temp > 85
    annotations:
      limit: '{{ query "gpu_limit" | first | value }}'
)");
  ASSERT_TRUE(g);
  g->Eval(2 * kMinute);  // the rule reads 1m, the template 2m (as Prometheus binds it)
  EXPECT_EQ(Annotation(*g, "limit"), "90");
}

TEST(AlertingTemplateQueryTest, DepsAdaptQueriesAndGateTheExternalUrl) {
  TestEnv env;
  env.Add(kTemp, 0, 96);
  env.Add(kLimit, 0, 95);
  int adapted = 0;
  bool refuse = false;
  env.deps.adapt_template_query = [&](promql::Expr&) -> Status {
    ++adapted;
    return refuse ? Status::Error("refused") : Status::Ok();
  };
  const char* yaml = R"(groups:
- name: hot
  rules:
  - alert: Hot
    expr: gpu_temp > 85
    annotations:
      limit: '{{ query "gpu_limit" | first | value }}'
      url: '{{ externalURL }}{{ graphLink "gpu_temp" }}'
      bad: '{{ query "sum(" }}'
      str: '{{ query "\"text\"" }}'
)";
  auto g = env.MakeGroup(yaml);
  ASSERT_TRUE(g);
  g->Eval(kMinute);
  EXPECT_EQ(Annotation(*g, "limit"), "95");
  EXPECT_EQ(Annotation(*g, "url"), "http://gpumon:9090/graph?g0.expr=gpu_temp&g0.tab=0");
  EXPECT_NE(Annotation(*g, "bad").find("error calling query: 1:5: parse error"), std::string::npos)
      << Annotation(*g, "bad");
  EXPECT_EQ(Annotation(*g, "str"),
            "<error expanding template: line 1: error calling query: rule result is not a vector "
            "or scalar>");
  EXPECT_EQ(adapted, 2);  // the queries that parsed
  refuse = true;
  g->Eval(2 * kMinute);
  EXPECT_EQ(Annotation(*g, "limit"),
            "<error expanding template: line 1: error calling query: refused>");

  TestEnv env2;
  env2.Add(kTemp, 0, 96);
  env2.deps.template_external_url = false;  // as promtool test rules runs
  auto g2 = env2.MakeGroup(yaml);
  ASSERT_TRUE(g2);
  g2->Eval(kMinute);
  EXPECT_EQ(Annotation(*g2, "url"),
            "<error expanding template: line 1: error calling externalURL: external URL not "
            "available>");
  EXPECT_EQ(Annotation(*g2, "limit"),
            "<error expanding template: line 1: error calling first: "
            "first() called on vector with no elements>");
}

}  // namespace
}  // namespace gpumon::rules
