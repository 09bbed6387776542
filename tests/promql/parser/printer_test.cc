// Printing: Prometheus's canonical String() forms, round trips and the
// prettified multi-line form.

#include "promql/printer.h"

#include <gtest/gtest.h>

#include "promql/parser.h"
#include "tree_dump.h"

namespace gpumon::promql {
namespace {

std::string RoundTrip(std::string_view q) {
  ParseResult r = Parse(q);
  if (!r.ok()) return "ERROR: " + r.error->ToString();
  return Print(*r.expr);
}

TEST(PrinterTest, FormatDuration) {
  EXPECT_EQ(FormatDuration(0), "0s");
  EXPECT_EQ(FormatDuration(90000), "1m30s");
  EXPECT_EQ(FormatDuration(5400000), "1h30m");
  EXPECT_EQ(FormatDuration(1500), "1s500ms");
  EXPECT_EQ(FormatDuration(1), "1ms");
  EXPECT_EQ(FormatDuration(86400000), "1d");
  EXPECT_EQ(FormatDuration(7 * 86400000LL), "1w");
  EXPECT_EQ(FormatDuration(8 * 86400000LL), "8d");  // weeks only when exact
  EXPECT_EQ(FormatDuration(365 * 86400000LL), "1y");
  EXPECT_EQ(FormatDuration(90 * 86400000LL), "90d");
}

TEST(PrinterTest, CanonicalForms) {
  EXPECT_EQ(RoundTrip("sum by(job) (rate(foo{a=\"b\"}[5m] offset 1m))"),
            "sum by (job) (rate(foo{a=\"b\"}[5m] offset 1m))");
  EXPECT_EQ(RoundTrip("sum by() (foo)"), "sum(foo)");
  EXPECT_EQ(RoundTrip("sum without() (foo)"), "sum without () (foo)");
  EXPECT_EQ(RoundTrip("sum(foo) without(instance)"), "sum without (instance) (foo)");
  EXPECT_EQ(RoundTrip("sum by(\"foo.bar\", job) (foo)"), "sum by (\"foo.bar\", job) (foo)");
  EXPECT_EQ(RoundTrip("topk(5, foo)"), "topk(5, foo)");
  EXPECT_EQ(RoundTrip("count_values('value', foo)"), "count_values(\"value\", foo)");
  EXPECT_EQ(RoundTrip("a - on() c"), "a - on () c");
  EXPECT_EQ(RoundTrip("a - on(b) group_left(x, y) c"), "a - on (b) group_left (x, y) c");
  EXPECT_EQ(RoundTrip("a - on(b) group_left c"), "a - on (b) group_left () c");
  EXPECT_EQ(RoundTrip("a - ignoring(b) c"), "a - ignoring (b) c");
  EXPECT_EQ(RoundTrip("a - ignoring() c"), "a - c");
  EXPECT_EQ(RoundTrip("a - ignoring() group_right c"), "a - ignoring () group_right () c");
  EXPECT_EQ(RoundTrip("up > bool 0"), "up > bool 0");
  EXPECT_EQ(RoundTrip("a and b"), "a and b");
  EXPECT_EQ(RoundTrip("a offset -7m"), "a offset -7m");
  EXPECT_EQ(RoundTrip("a[12m] offset -3m"), "a[12m] offset -3m");
  EXPECT_EQ(RoundTrip("a[1h:5m] offset 1m"), "a[1h:5m] offset 1m");
  EXPECT_EQ(RoundTrip("a[90m:]"), "a[1h30m:]");
  EXPECT_EQ(RoundTrip("a @ 10"), "a @ 10.000");
  EXPECT_EQ(RoundTrip("a[1m] @ 10"), "a[1m] @ 10.000");
  EXPECT_EQ(RoundTrip("a offset 1m @ start()"), "a @ start() offset 1m");
  EXPECT_EQ(RoundTrip("a[1m] @ end()"), "a[1m] @ end()");
  EXPECT_EQ(RoundTrip("{__name__=\"a\"}"), "{__name__=\"a\"}");
  EXPECT_EQ(RoundTrip("{__name__=\"\",a=\"x\"}"), "{__name__=\"\",a=\"x\"}");
  EXPECT_EQ(RoundTrip("{\"a.b\"=\"c\"}"), "{\"a.b\"=\"c\"}");
  EXPECT_EQ(RoundTrip("{\"0\"=\"1\"}"), "{\"0\"=\"1\"}");
  EXPECT_EQ(RoundTrip("{\"_0\"=\"1\"}"), "{_0=\"1\"}");
  EXPECT_EQ(RoundTrip("{``=\"0\"}"), "{\"\"=\"0\"}");
  EXPECT_EQ(RoundTrip("{\"metric.name\", a='b'}"), "{__name__=\"metric.name\",a=\"b\"}");
  EXPECT_EQ(RoundTrip("a{b!~'c', d=~`e\\.f`}[1m]"), "a{b!~\"c\",d=~\"e\\\\.f\"}[1m]");
  EXPECT_EQ(RoundTrip("1048576"), "1048576");
  EXPECT_EQ(RoundTrip("0x10"), "16");
  EXPECT_EQ(RoundTrip("1e3"), "1000");
  EXPECT_EQ(RoundTrip("1.5e-7"), "0.00000015");
  EXPECT_EQ(RoundTrip("-Inf"), "-Inf");
  EXPECT_EQ(RoundTrip("+inf"), "+Inf");
  EXPECT_EQ(RoundTrip("NaN"), "NaN");
  EXPECT_EQ(RoundTrip("5m"), "300");
  EXPECT_EQ(RoundTrip("\"a\\nb\\\"c\""), "\"a\\nb\\\"c\"");
  EXPECT_EQ(RoundTrip("-foo"), "-foo");
  EXPECT_EQ(RoundTrip("-(1 + 2)"), "-(1 + 2)");
  EXPECT_EQ(RoundTrip("predict_linear(foo[1h], 3000)"), "predict_linear(foo[1h], 3000)");
  EXPECT_EQ(RoundTrip("time()"), "time()");
  EXPECT_EQ(RoundTrip("1+2*3"), "1 + 2 * 3");
}

TEST(PrinterTest, RoundTripKeepsTree) {
  const char* queries[] = {
      "-2 ^ 2",
      "2 ^ -1 * 3",
      "a - -b",
      "a + -b * c",
      "-(a offset 5m) > bool on(x) group_left(y) -b",
      "sum by (on, by, \"a b\") (x)",
      "foo{a=\"\\u00e9\\t\\x01\"}",
      "histogram_quantile(0.9, sum by (le) (rate(x_bucket[5m:30s] @ 100 offset 1h)))",
      "label_replace(up, \"a\", \"$1\", \"b\", \"(.*)\")",
      "sum(sum)",
      "offset offset 1m",
      "max_of(1, 2)",
      "0.1 + 1e-300",
      "foo[1ms]",
      "inF^---1--1*3",
      "foo @ 1234567890123.4567",
  };
  for (const char* q : queries) {
    SCOPED_TRACE(q);
    ParseResult r = Parse(q);
    ASSERT_TRUE(r.ok()) << r.error->ToString();
    const std::string printed = Print(*r.expr);
    ParseResult again = Parse(printed);
    ASSERT_TRUE(again.ok()) << printed << ": " << again.error->ToString();
    EXPECT_EQ(testing::Dump(*again.expr), testing::Dump(*r.expr)) << printed;
  }
}

TEST(PrinterTest, FormatShortStaysOnOneLine) {
  ParseResult r = Parse("sum by (job) (rate(foo[5m]))");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Format(*r.expr), "sum by (job) (rate(foo[5m]))");
}

TEST(PrinterTest, FormatSplitsLongExpressions) {
  const std::string q =
      "sum by (job) "
      "(rate(http_requests_total{job=\"api-server\",handler=\"/api/v1/query_range/with/a/long/"
      "path\"}[5m])) "
      "/ on (job) group_left () sum by (job) (rate(http_requests_total{job=\"api-server\"}[5m]))";
  ParseResult r = Parse(q);
  ASSERT_TRUE(r.ok());
  const std::string expected =
      "  sum by (job) (\n"
      "    "
      "rate(http_requests_total{job=\"api-server\",handler=\"/api/v1/query_range/with/a/long/"
      "path\"}[5m])\n"
      "  )\n"
      "/ on (job) group_left ()\n"
      "  sum by (job) (rate(http_requests_total{job=\"api-server\"}[5m]))";
  EXPECT_EQ(Format(*r.expr), expected);
  ParseResult again = Parse(Format(*r.expr));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(testing::Dump(*again.expr), testing::Dump(*r.expr));
}

TEST(PrinterTest, FormatSplitsCallArguments) {
  const std::string long_sel =
      "some_really_long_metric_name_for_testing{with_a_label=\"and a long value\",other=\"x\"}";
  ParseResult r = Parse("label_replace(" + long_sel + ", \"dst\", \"$1\", \"src\", \"(.*)\")");
  ASSERT_TRUE(r.ok());
  const std::string expected =
      "label_replace(\n  " + long_sel + ",\n  \"dst\",\n  \"$1\",\n  \"src\",\n  \"(.*)\"\n)";
  EXPECT_EQ(Format(*r.expr), expected);
}

}  // namespace
}  // namespace gpumon::promql
