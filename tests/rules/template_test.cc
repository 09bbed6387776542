#include "rules/template.h"

#include <gtest/gtest.h>

#include <string>

namespace gpumon::rules {
namespace {

std::string Expand(const std::string& text, double value = 0,
                   Labels labels = {{"instance", "node1:9100"}, {"job", "gpu"}}) {
  auto t = Template::Parse(text);
  EXPECT_TRUE(t.ok()) << text << ": " << t.status().message();
  if (!t.ok()) return "<parse error>";
  TemplateData d;
  d.labels = std::move(labels);
  d.external_labels = Labels{{"cluster", "west"}};
  d.external_url = "http://prom.example:9090";
  d.value = value;
  auto r = t->Execute(d);
  EXPECT_TRUE(r.ok()) << text << ": " << r.status().message();
  return r.ok() ? r.value() : "<exec error>";
}

Status ExecError(const std::string& text, double value = 0) {
  auto t = Template::Parse(text);
  if (!t.ok()) return t.status();
  TemplateData d;
  d.value = value;
  auto r = t->Execute(d);
  return r.ok() ? Status::Ok() : r.status();
}

TEST(TemplateTest, PlainTextPassesThrough) {
  EXPECT_EQ(Expand("disk is full"), "disk is full");
  EXPECT_EQ(Expand(""), "");
}

TEST(TemplateTest, VariablesAndFields) {
  EXPECT_EQ(Expand("{{ $labels.instance }}"), "node1:9100");
  EXPECT_EQ(Expand("{{ .Labels.job }}/{{ $labels.job }}"), "gpu/gpu");
  EXPECT_EQ(Expand("{{ $externalLabels.cluster }}"), "west");
  EXPECT_EQ(Expand("{{ .ExternalLabels.cluster }}"), "west");
  EXPECT_EQ(Expand("{{ $externalURL }}"), "http://prom.example:9090");
  EXPECT_EQ(Expand("{{ $labels.missing }}"), "");
  EXPECT_EQ(Expand("{{ index $labels \"job\" }}"), "gpu");
}

TEST(TemplateTest, ValuesPrintLikeGoSprint) {
  EXPECT_EQ(Expand("{{ $value }}", 80), "80");
  EXPECT_EQ(Expand("{{ .Value }}", 0.5), "0.5");
  EXPECT_EQ(Expand("{{ $value }}", 1234567), "1.234567e+06");
  EXPECT_EQ(Expand("{{ $value }}", 123456), "123456");
  EXPECT_EQ(Expand("{{ $value }}", 0.00001), "1e-05");
  EXPECT_EQ(Expand("{{ 42 }} {{ true }} {{ \"s\" }}"), "42 true s");
}

// Expectations from Prometheus's template tests and Go's fmt.
TEST(TemplateTest, Humanize) {
  EXPECT_EQ(Expand("{{ humanize 0 }}"), "0");
  EXPECT_EQ(Expand("{{ humanize 1234567.0 }}"), "1.235M");
  EXPECT_EQ(Expand("{{ humanize 12345 }}"), "12.35k");
  EXPECT_EQ(Expand("{{ humanize 0.001234 }}"), "1.234m");
  EXPECT_EQ(Expand("{{ humanize \"1234567.0\" }}"), "1.235M");
  EXPECT_EQ(Expand("{{ $value | humanize }}", 1e12), "1T");
  EXPECT_EQ(Expand("{{ humanize1024 1048576.0 }}"), "1Mi");
  EXPECT_EQ(Expand("{{ humanize1024 1024 }}"), "1ki");
  EXPECT_EQ(Expand("{{ humanize1024 0.5 }}"), "0.5");
  EXPECT_EQ(Expand("{{ humanizePercentage 0.1234 }}"), "12.34%");
  EXPECT_EQ(Expand("{{ humanizePercentage 1 }}"), "100%");
}

TEST(TemplateTest, HumanizeDuration) {
  EXPECT_EQ(Expand("{{ humanizeDuration 0 }}"), "0s");
  EXPECT_EQ(Expand("{{ humanizeDuration 1 }}"), "1s");
  EXPECT_EQ(Expand("{{ humanizeDuration 1.5 }}"), "1.5s");
  EXPECT_EQ(Expand("{{ humanizeDuration 60 }}"), "1m 0s");
  EXPECT_EQ(Expand("{{ humanizeDuration 3600 }}"), "1h 0m 0s");
  EXPECT_EQ(Expand("{{ humanizeDuration 90061 }}"), "1d 1h 1m 1s");
  EXPECT_EQ(Expand("{{ humanizeDuration 0.5 }}"), "500ms");
  EXPECT_EQ(Expand("{{ humanizeDuration 0.000001 }}"), "1us");
  EXPECT_EQ(Expand("{{ humanizeDuration -3661 }}"), "-1h 1m 1s");
}

TEST(TemplateTest, HumanizeTimestamp) {
  EXPECT_EQ(Expand("{{ humanizeTimestamp 1435065584.128 }}"), "2015-06-23 13:19:44.128 +0000 UTC");
  EXPECT_EQ(Expand("{{ humanizeTimestamp 0 }}"), "1970-01-01 00:00:00 +0000 UTC");
}

TEST(TemplateTest, Printf) {
  EXPECT_EQ(Expand("{{ printf \"%.2f\" $value }}", 3.14159), "3.14");
  EXPECT_EQ(Expand("{{ $value | printf \"%.1f%%\" }}", 97.25), "97.2%");
  EXPECT_EQ(Expand("{{ printf \"%s-%d\" \"a\" 5 }}"), "a-5");
  EXPECT_EQ(Expand("{{ printf \"%5.1f|%-4s|\" 2.25 \"x\" }}"), "  2.2|x   |");
  EXPECT_EQ(Expand("{{ printf \"%d\" 1.5 }}"), "%!d(float64=1.5)");
  EXPECT_EQ(Expand("{{ printf \"%v %q\" $labels.job \"a\" }}"), "gpu \"a\"");
}

TEST(TemplateTest, StringFunctions) {
  EXPECT_EQ(Expand("{{ toUpper \"abc\" }}"), "ABC");
  EXPECT_EQ(Expand("{{ $labels.job | toUpper }}"), "GPU");
  EXPECT_EQ(Expand("{{ toLower \"ABC\" }}"), "abc");
  EXPECT_EQ(Expand("{{ title \"gpu node down\" }}"), "Gpu Node Down");
  EXPECT_EQ(Expand("{{ reReplaceAll \"(a)b\" \"x$1\" \"ab\" }}"), "xa");
  EXPECT_EQ(Expand("{{ reReplaceAll \":.*\" \"\" $labels.instance }}"), "node1");
  EXPECT_EQ(Expand("{{ reReplaceAll \"(?P<h>[a-z]+)(\\\\d)\" \"${2}-${h}\" \"node1\" }}"),
            "1-node");
  EXPECT_EQ(Expand("{{ stripPort $labels.instance }}"), "node1");
  EXPECT_EQ(Expand("{{ if match \"^node\" $labels.instance }}yes{{ end }}"), "yes");
}

TEST(TemplateTest, Conditionals) {
  const char* t =
      "{{ if gt $value 80.0 }}high{{ else if gt $value 50.0 }}mid{{ else }}low{{ end }}";
  EXPECT_EQ(Expand(t, 90), "high");
  EXPECT_EQ(Expand(t, 60), "mid");
  EXPECT_EQ(Expand(t, 10), "low");
  EXPECT_EQ(Expand("{{ if $labels.job }}job={{ $labels.job }}{{ end }}"), "job=gpu");
  EXPECT_EQ(Expand("{{ if not $labels.nope }}none{{ end }}"), "none");
  EXPECT_EQ(Expand("{{ if and (eq $labels.job \"gpu\") (ne $labels.instance \"x\") }}ok{{ end }}"),
            "ok");
  EXPECT_EQ(Expand("{{ with $labels.job }}has {{ . }}{{ else }}none{{ end }}"), "has gpu");
  EXPECT_EQ(Expand("{{ with $labels.nope }}has {{ . }}{{ else }}none{{ end }}"), "none");
}

TEST(TemplateTest, RangeAndVariables) {
  EXPECT_EQ(Expand("{{ range $k, $v := $labels }}{{ $k }}={{ $v }};{{ end }}"),
            "instance=node1:9100;job=gpu;");
  EXPECT_EQ(Expand("{{ $x := humanize $value }}v={{ $x }}", 2000), "v=2k");
  EXPECT_EQ(Expand("{{ $x := 1 }}{{ if true }}{{ $x = 2 }}{{ end }}{{ $x }}"), "2");
}

TEST(TemplateTest, TrimMarkersAndComments) {
  EXPECT_EQ(Expand("a  {{- \"b\" -}}  c"), "abc");
  EXPECT_EQ(Expand("a {{/* note */}}b"), "a b");
  EXPECT_EQ(Expand("a\n  {{- /* note */ -}}\n b"), "ab");
}

TEST(TemplateTest, ParseErrorsForUnsupportedOrInvalid) {
  // Prometheus's query functions parse (template_query_test.cc runs them);
  // functions Prometheus 2.42 does not have, or Go's html/js, do not.
  EXPECT_TRUE(Template::Parse("{{ query \"up\" | first | value }}").ok());
  auto q = Template::Parse("{{ now }}");
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.status().message().find("\"now\" is not supported"), std::string::npos)
      << q.status().message();
  EXPECT_FALSE(Template::Parse("{{ html \"x\" }}").ok());
  EXPECT_FALSE(Template::Parse("{{ nosuchfunc . }}").ok());
  EXPECT_FALSE(Template::Parse("{{ $undefined }}").ok());
  EXPECT_FALSE(Template::Parse("{{ if true }}unterminated").ok());
  EXPECT_FALSE(Template::Parse("{{ .Labels.x ").ok());
  EXPECT_FALSE(Template::Parse("{{ end }}").ok());
  EXPECT_FALSE(Template::Parse("{{ template \"x\" }}").ok());
  EXPECT_FALSE(Template::Parse("{{ define \"x\" }}{{ end }}").ok());
  auto e = Template::Parse("line1\n{{ nosuch }}");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("line 2"), std::string::npos) << e.status().message();
  EXPECT_NE(e.status().message().find("nosuch"), std::string::npos);
}

TEST(TemplateTest, ExecutionErrors) {
  // Go refuses to compare a float64 with an int.
  Status s = ExecError("{{ if gt $value 80 }}x{{ end }}", 90);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("incompatible types"), std::string::npos) << s.message();
  EXPECT_FALSE(ExecError("{{ humanize \"abc\" }}").ok());
  EXPECT_FALSE(ExecError("{{ .NoSuchField }}").ok());
}

}  // namespace
}  // namespace gpumon::rules
