// Parsing valid queries: the tree shape for each language feature.

#include "promql/parser.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tree_dump.h"

namespace gpumon::promql {
namespace {

using testing::Dump;

std::string P(std::string_view q) {
  ParseResult r = Parse(q);
  if (!r.ok()) return "ERROR: " + r.error->ToString();
  return Dump(*r.expr);
}

double Num(std::string_view q) {
  ParseResult r = Parse(q);
  EXPECT_TRUE(r.ok()) << q << ": " << (r.ok() ? "" : r.error->ToString());
  if (!r.ok()) return -12345;
  auto* n = std::get_if<NumberLiteral>(&r.expr->node);
  EXPECT_NE(n, nullptr) << q;
  return n ? n->value : -12345;
}

TEST(ParserTest, NumberLiterals) {
  EXPECT_EQ(Num("1"), 1);
  EXPECT_EQ(Num("1.5"), 1.5);
  EXPECT_EQ(Num(".5"), 0.5);
  EXPECT_EQ(Num("5."), 5);
  EXPECT_EQ(Num("1e3"), 1000);
  EXPECT_EQ(Num("1E-3"), 0.001);
  EXPECT_EQ(Num("0x1f"), 31);
  EXPECT_EQ(Num("0X1F"), 31);
  EXPECT_EQ(Num("1_000"), 1000);
  EXPECT_EQ(Num("-1"), -1);
  EXPECT_EQ(Num("+2"), 2);
  EXPECT_EQ(Num("- -3"), 3);
  EXPECT_TRUE(std::isinf(Num("Inf")));
  EXPECT_GT(Num("inf"), 0);
  EXPECT_LT(Num("-Inf"), 0);
  EXPECT_TRUE(std::isnan(Num("NaN")));
  EXPECT_TRUE(std::isnan(Num("nan")));
  EXPECT_TRUE(std::isnan(Num("nAn")));
  // Durations are numbers of seconds.
  EXPECT_EQ(Num("1h30m"), 5400);
  EXPECT_EQ(Num("5m"), 300);
  EXPECT_EQ(Num("1500ms"), 1.5);
  EXPECT_EQ(Num("1y"), 365 * 86400);
}

TEST(ParserTest, Strings) {
  EXPECT_EQ(P(R"("a\nb")"), "(str a\nb)");
  EXPECT_EQ(P(R"('it\'s')"), "(str it's)");
  EXPECT_EQ(P("`raw\\n`"), "(str raw\\n)");
  EXPECT_EQ(P(R"("\x41\101\u00e9")"), "(str AA\xc3\xa9)");
  EXPECT_EQ(P(R"("a\"b")"), "(str a\"b)");
}

TEST(ParserTest, Selectors) {
  EXPECT_EQ(P("foo"), R"((sel foo [__name__="foo"]))");
  EXPECT_EQ(P("foo:bar_total"), R"((sel foo:bar_total [__name__="foo:bar_total"]))");
  EXPECT_EQ(P(R"(foo{a="b", c!="d", e=~"f.*", g!~"h"})"),
            R"((sel foo [__name__="foo",a="b",c!="d",e=~"f.*",g!~"h"]))");
  EXPECT_EQ(P(R"({a="b"})"), R"((sel  [a="b"]))");
  EXPECT_EQ(P(R"({a="b",})"), R"((sel  [a="b"]))");
  EXPECT_EQ(P(R"({__name__=~"foo.*"})"), R"((sel  [__name__=~"foo.*"]))");
  EXPECT_EQ(P(R"({"metric.name", a="b"})"), R"((sel  [__name__="metric.name",a="b"]))");
  EXPECT_EQ(P(R"({"metric.name"})"), R"((sel  [__name__="metric.name"]))");
  EXPECT_EQ(P(R"(foo{"label.x"="v"})"), R"((sel foo [__name__="foo",label.x="v"]))");
  EXPECT_EQ(P("foo{on='x', by=\"y\"}"), R"((sel foo [__name__="foo",on="x",by="y"]))");
  EXPECT_EQ(P("foo{}"), R"((sel foo [__name__="foo"]))");
}

TEST(ParserTest, KeywordsAsMetricNames) {
  EXPECT_EQ(P("sum"), R"((sel sum [__name__="sum"]))");
  EXPECT_EQ(P("sum{a=\"b\"}"), R"((sel sum [__name__="sum",a="b"]))");
  EXPECT_EQ(P("by"), R"((sel by [__name__="by"]))");
  EXPECT_EQ(P("offset offset 5m"), R"((sel offset [__name__="offset"] off=300000))");
  EXPECT_EQ(P("start + end"),
            R"((+ {1:1} (sel start [__name__="start"]) (sel end [__name__="end"])))");
  EXPECT_EQ(P("step"), R"((sel step [__name__="step"]))");
  EXPECT_EQ(P("sum + 1"), R"((+ (sel sum [__name__="sum"]) (num 1)))");
}

TEST(ParserTest, MatrixAndModifiers) {
  EXPECT_EQ(P("foo[5m]"), R"((range (sel foo [__name__="foo"]) 300000))");
  EXPECT_EQ(P("foo[1h30m]"), R"((range (sel foo [__name__="foo"]) 5400000))");
  EXPECT_EQ(P("foo[90]"), R"((range (sel foo [__name__="foo"]) 90000))");
  EXPECT_EQ(P("foo[1.5]"), R"((range (sel foo [__name__="foo"]) 1500))");
  EXPECT_EQ(P("foo offset 5m"), R"((sel foo [__name__="foo"] off=300000))");
  EXPECT_EQ(P("foo offset -5m"), R"((sel foo [__name__="foo"] off=-300000))");
  EXPECT_EQ(P("foo[5m] offset 1m"), R"((range (sel foo [__name__="foo"] off=60000) 300000))");
  EXPECT_EQ(P("foo @ 100"), R"((sel foo [__name__="foo"] at=100000))");
  EXPECT_EQ(P("foo @ 1.5"), R"((sel foo [__name__="foo"] at=1500))");
  EXPECT_EQ(P("foo @ -10"), R"((sel foo [__name__="foo"] at=-10000))");
  EXPECT_EQ(P("foo @ start()"), R"((sel foo [__name__="foo"] at=start))");
  EXPECT_EQ(P("foo @ end()"), R"((sel foo [__name__="foo"] at=end))");
  EXPECT_EQ(P("foo @ 100 offset 5m"), R"((sel foo [__name__="foo"] off=300000 at=100000))");
  EXPECT_EQ(P("foo offset 5m @ 100"), R"((sel foo [__name__="foo"] off=300000 at=100000))");
  EXPECT_EQ(P("foo[5m] @ end() offset 1m"),
            R"((range (sel foo [__name__="foo"] off=60000 at=end) 300000))");
  EXPECT_EQ(P("foo OFFSET 1m"), R"((sel foo [__name__="foo"] off=60000))");
}

TEST(ParserTest, Subqueries) {
  EXPECT_EQ(P("foo[5m:1m]"), R"((subq (sel foo [__name__="foo"]) 300000:60000))");
  EXPECT_EQ(P("foo[5m:]"), R"((subq (sel foo [__name__="foo"]) 300000:0))");
  EXPECT_EQ(
      P("rate(foo[1m])[5m:30s] offset 1m @ 10"),
      R"((subq (call rate (range (sel foo [__name__="foo"]) 60000)) 300000:30000 off=60000 at=10000))");
  EXPECT_EQ(P("foo offset 1m [5m:]"), R"((subq (sel foo [__name__="foo"] off=60000) 300000:0))");
  EXPECT_EQ(P("(foo)[ 5m : 1m ]"), R"((subq (paren (sel foo [__name__="foo"])) 300000:60000))");
  EXPECT_EQ(
      P("min_over_time(rate(foo[1m])[5m:])"),
      R"((call min_over_time (subq (call rate (range (sel foo [__name__="foo"]) 60000)) 300000:0)))");
}

TEST(ParserTest, Precedence) {
  EXPECT_EQ(P("1 + 2 * 3"), "(+ (num 1) (* (num 2) (num 3)))");
  EXPECT_EQ(P("1 * 2 + 3"), "(+ (* (num 1) (num 2)) (num 3))");
  EXPECT_EQ(P("1 - 2 - 3"), "(- (- (num 1) (num 2)) (num 3))");
  EXPECT_EQ(P("2 ^ 3 ^ 2"), "(^ (num 2) (^ (num 3) (num 2)))");
  EXPECT_EQ(P("-2 ^ 2"), "(neg (^ (num 2) (num 2)))");
  EXPECT_EQ(P("-2 * 3"), "(* (num -2) (num 3))");
  EXPECT_EQ(P("2 ^ -1 * 3"), "(* (^ (num 2) (num -1)) (num 3))");
  EXPECT_EQ(P("1 atan2 2 + 1"), "(+ (atan2 (num 1) (num 2)) (num 1))");
  EXPECT_EQ(
      P("a or b and c unless d"),
      R"((or {n:n} (sel a [__name__="a"]) (unless {n:n} (and {n:n} (sel b [__name__="b"]) (sel c [__name__="c"])) (sel d [__name__="d"]))))");
  EXPECT_EQ(P("a > 1 + 2"), R"((> (sel a [__name__="a"]) (+ (num 1) (num 2))))");
  EXPECT_EQ(P("-a * b"), R"((* {1:1} (neg (sel a [__name__="a"])) (sel b [__name__="b"])))");
  EXPECT_EQ(
      P("a + -b * c"),
      R"((+ {1:1} (sel a [__name__="a"]) (* {1:1} (neg (sel b [__name__="b"])) (sel c [__name__="c"]))))");
  EXPECT_EQ(P("1 % 2 / 3"), "(/ (% (num 1) (num 2)) (num 3))");
}

TEST(ParserTest, BinaryModifiers) {
  EXPECT_EQ(P("a == bool b"), R"((== bool {1:1} (sel a [__name__="a"]) (sel b [__name__="b"])))");
  EXPECT_EQ(P("1 >= bool 2"), "(>= bool (num 1) (num 2))");
  EXPECT_EQ(P("a + on(x, y) b"),
            R"((+ {1:1 on(x,y)} (sel a [__name__="a"]) (sel b [__name__="b"])))");
  EXPECT_EQ(P("a + on() b"), R"((+ {1:1 on()} (sel a [__name__="a"]) (sel b [__name__="b"])))");
  EXPECT_EQ(P("a + ignoring(x) b"),
            R"((+ {1:1 ignoring(x)} (sel a [__name__="a"]) (sel b [__name__="b"])))");
  EXPECT_EQ(P("a * on(x) group_left(y) b"),
            R"((* {n:1 on(x) include(y)} (sel a [__name__="a"]) (sel b [__name__="b"])))");
  EXPECT_EQ(P("a * ignoring(x) group_right b"),
            R"((* {1:n ignoring(x)} (sel a [__name__="a"]) (sel b [__name__="b"])))");
  EXPECT_EQ(P("a > bool on(x) group_left() b"),
            R"((> bool {n:1 on(x)} (sel a [__name__="a"]) (sel b [__name__="b"])))");
  EXPECT_EQ(P("a and on(x) b"),
            R"((and {n:n on(x)} (sel a [__name__="a"]) (sel b [__name__="b"])))");
  // Matching is dropped when a side is a scalar.
  EXPECT_EQ(P("a + 1"), R"((+ (sel a [__name__="a"]) (num 1)))");
  EXPECT_EQ(P("a + on() 1"), R"((+ (sel a [__name__="a"]) (num 1)))");
  EXPECT_EQ(P("a + on(on, by, sum) b"),
            R"((+ {1:1 on(on,by,sum)} (sel a [__name__="a"]) (sel b [__name__="b"])))");
}

TEST(ParserTest, Aggregations) {
  EXPECT_EQ(P("sum(foo)"), R"((sum (sel foo [__name__="foo"])))");
  EXPECT_EQ(P("sum by (job) (foo)"), R"((sum by(job) (sel foo [__name__="foo"])))");
  EXPECT_EQ(P("sum(foo) by (job, le)"), R"((sum by(job,le) (sel foo [__name__="foo"])))");
  EXPECT_EQ(P("sum without (job) (foo)"), R"((sum without(job) (sel foo [__name__="foo"])))");
  EXPECT_EQ(P("sum(foo) without ()"), R"((sum without() (sel foo [__name__="foo"])))");
  EXPECT_EQ(P("SUM BY (job,) (foo)"), R"((sum by(job) (sel foo [__name__="foo"])))");
  EXPECT_EQ(P("topk(3, foo)"), R"((topk (num 3) (sel foo [__name__="foo"])))");
  EXPECT_EQ(P("bottomk by (a) (3, foo)"), R"((bottomk by(a) (num 3) (sel foo [__name__="foo"])))");
  EXPECT_EQ(P("quantile(0.9, foo)"), R"((quantile (num 0.9) (sel foo [__name__="foo"])))");
  EXPECT_EQ(P("count_values(\"v\", foo)"), R"((count_values (str v) (sel foo [__name__="foo"])))");
  EXPECT_EQ(P("limitk(2, foo)"), R"((limitk (num 2) (sel foo [__name__="foo"])))");
  EXPECT_EQ(P("limit_ratio(0.5, foo)"), R"((limit_ratio (num 0.5) (sel foo [__name__="foo"])))");
  EXPECT_EQ(P("group by (\"a.b\") (foo)"), R"((group by(a.b) (sel foo [__name__="foo"])))");
  EXPECT_EQ(P("avg(foo) + count(bar)"),
            R"((+ {1:1} (avg (sel foo [__name__="foo"])) (count (sel bar [__name__="bar"]))))");
}

TEST(ParserTest, Calls) {
  EXPECT_EQ(P("time()"), "(call time)");
  EXPECT_EQ(P("rate(foo[5m])"), R"((call rate (range (sel foo [__name__="foo"]) 300000)))");
  EXPECT_EQ(P("round(foo)"), R"((call round (sel foo [__name__="foo"])))");
  EXPECT_EQ(P("round(foo, 5)"), R"((call round (sel foo [__name__="foo"]) (num 5)))");
  EXPECT_EQ(
      P("label_join(foo, \"d\", \",\", \"a\", \"b\", \"c\")"),
      R"((call label_join (sel foo [__name__="foo"]) (str d) (str ,) (str a) (str b) (str c)))");
  EXPECT_EQ(P("start()"), "(call start)");
  EXPECT_EQ(P("end() - start()"), "(- (call end) (call start))");
  EXPECT_EQ(P("step()"), "(call step)");
  EXPECT_EQ(P("range()"), "(call range)");
  EXPECT_EQ(P("max_of(1, 2)"), "(call max_of (num 1) (num 2))");
  EXPECT_EQ(P("vector(time())"), "(call vector (call time))");
  EXPECT_EQ(P("info(foo, {a=\"b\"})"), R"((call info (sel foo [__name__="foo"]) (sel  [a="b"])))");
  EXPECT_EQ(P("info(foo, {a=~\".*\"})"),
            R"((call info (sel foo [__name__="foo"]) (sel  [a=~".*"])))");
  EXPECT_EQ(P("day_of_week()"), "(call day_of_week)");
}

TEST(ParserTest, ParenUnaryComments) {
  EXPECT_EQ(P("(1)"), "(paren (num 1))");
  EXPECT_EQ(P("-(1)"), "(neg (paren (num 1)))");
  EXPECT_EQ(P("-foo"), R"((neg (sel foo [__name__="foo"])))");
  EXPECT_EQ(P("+foo"), R"((pos (sel foo [__name__="foo"])))");
  EXPECT_EQ(P("foo # comment\n + 1"), R"((+ (sel foo [__name__="foo"]) (num 1)))");
  EXPECT_EQ(P("# leading\nfoo"), R"((sel foo [__name__="foo"]))");
  EXPECT_EQ(P("foo{a=\"b\" # c\n}"), R"((sel foo [__name__="foo",a="b"]))");
}

TEST(ParserTest, Types) {
  auto type = [](std::string_view q) { return Parse(q).expr->Type(); };
  EXPECT_EQ(type("1"), ValueType::kScalar);
  EXPECT_EQ(type("\"a\""), ValueType::kString);
  EXPECT_EQ(type("foo"), ValueType::kVector);
  EXPECT_EQ(type("foo[5m]"), ValueType::kMatrix);
  EXPECT_EQ(type("foo[5m:]"), ValueType::kMatrix);
  EXPECT_EQ(type("1 + 2"), ValueType::kScalar);
  EXPECT_EQ(type("foo + 2"), ValueType::kVector);
  EXPECT_EQ(type("scalar(foo)"), ValueType::kScalar);
  EXPECT_EQ(type("(-(scalar(foo)))"), ValueType::kScalar);
  EXPECT_EQ(type("sum(foo)"), ValueType::kVector);
}

TEST(ParserTest, Positions) {
  ParseResult r = Parse("sum(rate(foo[5m])) + 1");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.expr->pos.start, 0);
  EXPECT_EQ(r.expr->pos.end, 22);
  const auto& b = std::get<Binary>(r.expr->node);
  EXPECT_EQ(b.lhs->pos.end, 18);
  const auto& agg = std::get<Aggregate>(b.lhs->node);
  EXPECT_EQ(agg.expr->pos.start, 4);
  EXPECT_EQ(agg.expr->pos.end, 17);
}

TEST(ParserTest, CloneIsDeep) {
  ParseResult r =
      Parse("sum by (a) (rate(foo{x=\"y\"}[5m] offset 1m)) / on(a) group_left topk(2, bar)");
  ASSERT_TRUE(r.ok());
  ExprPtr c = Clone(*r.expr);
  EXPECT_EQ(Dump(*c), Dump(*r.expr));
  std::get<Binary>(c->node).lhs.reset();
  EXPECT_NE(std::get<Binary>(r.expr->node).lhs, nullptr);
}

TEST(ParserTest, ParseMetric) {
  auto l = ParseMetric(R"(foo{a="b", c="d"})");
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ(l->ToString(), R"(foo{a="b", c="d"})");
  auto l2 = ParseMetric(R"({__name__="x", a="b"})");
  ASSERT_TRUE(l2.ok());
  EXPECT_EQ(l2->Get("__name__"), "x");
  auto l3 = ParseMetric(R"({"my.metric", "a.b"="c"})");
  ASSERT_TRUE(l3.ok());
  EXPECT_EQ(l3->Get("__name__"), "my.metric");
  EXPECT_EQ(l3->Get("a.b"), "c");
  EXPECT_TRUE(ParseMetric("sum").ok());
  EXPECT_FALSE(ParseMetric(R"(foo{a=~"b"})").ok());
  EXPECT_FALSE(ParseMetric(R"(foo{a="b"} + 1)").ok());
}

TEST(ParserTest, ParseMetricSelector) {
  auto m = ParseMetricSelector(R"(up{job=~"a.*"})");
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->size(), 2u);
  EXPECT_EQ((*m)[0].ToString(), R"(__name__="up")");
  EXPECT_EQ((*m)[1].ToString(), R"(job=~"a.*")");
  EXPECT_TRUE(ParseMetricSelector(R"({job="x"})").ok());
  EXPECT_FALSE(ParseMetricSelector(R"({job=~".*"})").ok());
  EXPECT_FALSE(ParseMetricSelector("{}").ok());
  EXPECT_FALSE(ParseMetricSelector("up[5m]").ok());
  EXPECT_FALSE(ParseMetricSelector("rate(up[5m])").ok());
}

TEST(ParserTest, ParseDurationApi) {
  EXPECT_EQ(ParseDuration("1h30m").value(), 5400000);
  EXPECT_EQ(ParseDuration("90s").value(), 90000);
  EXPECT_EQ(ParseDuration("1.5").value(), 1500);
  EXPECT_EQ(ParseDuration("15").value(), 15000);
  EXPECT_EQ(ParseDuration("0").value(), 0);
  EXPECT_EQ(ParseDuration("1ms").value(), 1);
  EXPECT_EQ(ParseDuration("2w").value(), 14LL * 86400000);
  EXPECT_FALSE(ParseDuration("").ok());
  EXPECT_FALSE(ParseDuration("1x").ok());
  EXPECT_FALSE(ParseDuration("5m1h").ok());
  EXPECT_FALSE(ParseDuration("abc").ok());
}

}  // namespace
}  // namespace gpumon::promql
