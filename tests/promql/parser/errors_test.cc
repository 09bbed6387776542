// Invalid queries: the error message (Prometheus's wording) and its
// line:column position.

#include <gtest/gtest.h>

#include "promql/parser.h"

namespace gpumon::promql {
namespace {

std::string Err(std::string_view q) {
  ParseResult r = Parse(q);
  if (r.ok()) return "OK";
  return r.error->ToString();
}

TEST(ParseErrorTest, Format) {
  ParseError e;
  e.line = 2;
  e.column = 7;
  e.message = "unexpected end of input";
  EXPECT_EQ(e.ToString(), "2:7: parse error: unexpected end of input");
}

TEST(ParseErrorTest, LineAndColumn) {
  ParseResult r = Parse("sum(\n  foo +\n)");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error->line, 3);
  EXPECT_EQ(r.error->column, 1);
  EXPECT_EQ(r.error->pos.start, 13);
}

TEST(ParseErrorTest, Empty) {
  EXPECT_EQ(Err(""), "1:1: parse error: no expression found in input");
  EXPECT_EQ(Err("  # only a comment"), "1:1: parse error: no expression found in input");
}

TEST(ParseErrorTest, Lexer) {
  EXPECT_EQ(Err("sum("), "1:5: parse error: unclosed left parenthesis");
  EXPECT_EQ(Err("foo{"), "1:5: parse error: unexpected end of input inside braces");
  EXPECT_EQ(Err("foo)"), "1:5: parse error: unexpected right parenthesis ')'");
  EXPECT_EQ(Err("foo]"), "1:4: parse error: unexpected right bracket ']'");
  EXPECT_EQ(Err("foo["), "1:5: parse error: unexpected end of input in duration expression");
  EXPECT_EQ(Err("\"abc"), "1:1: parse error: unterminated quoted string");
  EXPECT_EQ(Err("`abc"), "1:1: parse error: unterminated raw string");
  EXPECT_EQ(Err(R"("a\q")"), "1:1: parse error: unknown escape sequence U+0071 'q'");
  EXPECT_EQ(Err("foo !~ bar"), "1:5: parse error: unexpected character after '!': '~'");
  EXPECT_EQ(Err("foo =~ bar"), "1:5: parse error: unexpected character after '=': '~'");
  EXPECT_EQ(Err("$"), "1:1: parse error: unexpected character: '$'");
  EXPECT_EQ(Err("foo{a!b=\"c\"}"),
            "1:6: parse error: unexpected character after '!' inside braces: 'b'");
  EXPECT_EQ(Err("1x"), "1:1: parse error: bad number or duration syntax: \"1\"");
  EXPECT_EQ(Err("foo[5m::]"), "1:8: parse error: unexpected colon ':'");
  EXPECT_EQ(Err("foo[:5m]"),
            "1:6: parse error: unexpected colon before duration in duration expression");
  EXPECT_EQ(Err("foo[5m x 5m]"), "1:8: parse error: unexpected character: 'x', expected ':'");
  EXPECT_EQ(Err("foo[5mm]"), "1:5: parse error: bad number or duration syntax: \"5mm\"");
  EXPECT_EQ(Err("0deadbeef"), "1:1: parse error: bad number or duration syntax: \"0de\"");
  EXPECT_EQ(Err("foo[5m"), "1:7: parse error: unclosed left bracket");
}

TEST(ParseErrorTest, Syntax) {
  EXPECT_EQ(Err("foo{a}"),
            "1:6: parse error: unexpected \"}\" in label matching, expected label matching "
            "operator");
  EXPECT_EQ(Err("foo{a=}"),
            "1:7: parse error: unexpected \"}\" in label matching, expected string");
  EXPECT_EQ(Err("foo{a=\"b\" c=\"d\"}"),
            "1:11: parse error: unexpected identifier \"c\" in label matching, expected \",\" or "
            "\"}\"");
  EXPECT_EQ(Err("sum by foo"),
            "1:8: parse error: unexpected identifier \"foo\" in grouping opts, expected \"(\"");
  EXPECT_EQ(Err("foo[]"),
            "1:5: parse error: unexpected \"]\" in subquery or range selector, expected number, "
            "duration, step(), or range()");
  EXPECT_EQ(Err("foo[5m 1m]"),
            "1:8: parse error: unexpected duration \"1m\" in subquery or range, expected \":\" or "
            "\"]\"");
  EXPECT_EQ(Err("foo offset"),
            "1:11: parse error: unexpected end of input in offset, expected number, duration, "
            "step(), or range()");
  EXPECT_EQ(Err("foo @"), "1:6: parse error: unexpected end of input in @, expected timestamp");
  EXPECT_EQ(Err("1 +"), "1:4: parse error: unexpected end of input");
  EXPECT_EQ(Err("rate(foo[5m],)"),
            "1:13: parse error: trailing commas not allowed in function call args");
  EXPECT_EQ(Err("unknown_fn(foo)"), "1:1: parse error: unknown function with name \"unknown_fn\"");
  EXPECT_EQ(Err("sum()"), "1:1: parse error: no arguments for aggregate expression provided");
  EXPECT_EQ(Err("topk(foo)"),
            "1:1: parse error: wrong number of arguments for aggregate expression provided, "
            "expected 2, got 1");
  EXPECT_EQ(Err("foo bar"), "1:5: parse error: unexpected identifier \"bar\"");
  EXPECT_EQ(Err("on"), "1:1: parse error: unexpected <on>");
  EXPECT_EQ(Err("foo + group_left bar"), "1:7: parse error: unexpected <group_left>");
}

TEST(ParseErrorTest, Modifiers) {
  EXPECT_EQ(Err("(foo)[5m]"), "1:6: parse error: ranges only allowed for vector selectors");
  EXPECT_EQ(Err("foo[5m][5m]"), "1:8: parse error: ranges only allowed for vector selectors");
  EXPECT_EQ(Err("foo offset 1m [5m]"),
            "1:15: parse error: no offset modifiers allowed before range");
  EXPECT_EQ(Err("foo @ 1 [5m]"), "1:9: parse error: no @ modifiers allowed before range");
  EXPECT_EQ(Err("foo offset 1m offset 2m"),
            "1:1: parse error: offset may not be set multiple times");
  EXPECT_EQ(Err("foo[5m] offset 1m offset 2m"),
            "1:1: parse error: offset may not be set multiple times");
  EXPECT_EQ(Err("foo @ 1 @ 2"), "1:1: parse error: @ <timestamp> may not be set multiple times");
  EXPECT_EQ(Err("rate(foo[5m]) offset 1m"),
            "1:1: parse error: offset modifier must be preceded by an instant vector selector or "
            "range vector selector or a subquery");
  EXPECT_EQ(Err("(foo) @ 1"),
            "1:1: parse error: @ modifier must be preceded by an instant vector selector or range "
            "vector selector or a subquery");
  EXPECT_EQ(Err("foo[0s]"), "1:5: parse error: duration must be greater than 0");
  EXPECT_EQ(Err("foo[5m:0s]"), "1:8: parse error: duration must be greater than 0");
  EXPECT_EQ(Err("foo @ Inf"), "1:1: parse error: timestamp out of bounds for @ modifier: +Inf");
  EXPECT_EQ(Err("foo[step]"),
            "1:9: parse error: unexpected \"]\" in subquery or range selector, expected number, "
            "duration, step(), or range()");
  EXPECT_EQ(Err("foo[step()]"),
            "1:5: parse error: experimental duration expression is not enabled");
}

TEST(ParseErrorTest, Types) {
  EXPECT_EQ(Err("rate(foo)"),
            "1:6: parse error: expected type range vector in call to function \"rate\", got "
            "instant vector");
  EXPECT_EQ(Err("abs(foo[5m])"),
            "1:5: parse error: expected type instant vector in call to function \"abs\", got "
            "range vector");
  EXPECT_EQ(Err("label_replace(foo, \"a\")"),
            "1:1: parse error: expected 5 argument(s) in call to \"label_replace\", got 2");
  EXPECT_EQ(Err("round(foo, 1, 2)"),
            "1:1: parse error: expected at most 2 argument(s) in call to \"round\", got 3");
  EXPECT_EQ(Err("label_join(foo)"),
            "1:1: parse error: expected at least 3 argument(s) in call to \"label_join\", got 1");
  EXPECT_EQ(Err("label_join(foo, \"a\", \",\", 1)"),
            "1:27: parse error: expected type string in call to function \"label_join\", got "
            "scalar");
  EXPECT_EQ(Err("1 == 1"), "1:3: parse error: comparisons between scalars must use BOOL modifier");
  EXPECT_EQ(Err("foo + bool bar"),
            "1:5: parse error: bool modifier can only be used on comparison operators");
  EXPECT_EQ(Err("1 and 2"),
            "1:1: parse error: set operator \"and\" not allowed in binary scalar expression");
  EXPECT_EQ(Err("foo or 1"),
            "1:1: parse error: set operator \"or\" not allowed in binary scalar expression");
  EXPECT_EQ(Err("foo and on(a) group_left bar"),
            "1:1: parse error: no grouping allowed for \"and\" operation");
  EXPECT_EQ(Err("foo * on(a) group_left(a) bar"),
            "1:5: parse error: label \"a\" must not occur in ON and GROUP clause at once");
  EXPECT_EQ(Err("1 + on(a) 2"),
            "1:1: parse error: vector matching only allowed between instant vectors");
  EXPECT_EQ(Err("foo[5m] + 1"),
            "1:1: parse error: binary expression must contain only scalar and instant vector "
            "types");
  EXPECT_EQ(Err("-\"a\""),
            "1:1: parse error: unary expression only allowed on expressions of type scalar or "
            "instant vector, got \"string\"");
  EXPECT_EQ(Err("{}"),
            "1:1: parse error: vector selector must contain at least one non-empty matcher");
  EXPECT_EQ(Err("{a=~\".*\", b=\"\"}"),
            "1:1: parse error: vector selector must contain at least one non-empty matcher");
  EXPECT_EQ(Err("foo{__name__=\"bar\"}"),
            "1:1: parse error: metric name must not be set twice: \"foo\" or \"bar\"");
  EXPECT_EQ(Err("foo[5m:][1m:]"),
            "1:1: parse error: subquery is only allowed on instant vector, got matrix instead");
  EXPECT_EQ(Err("sum(foo[5m])"),
            "1:5: parse error: expected type instant vector in aggregation expression, got range "
            "vector");
  EXPECT_EQ(Err("topk(\"a\", foo)"),
            "1:6: parse error: expected type scalar in aggregation parameter, got string");
  EXPECT_EQ(Err("count_values(1, foo)"),
            "1:14: parse error: expected type string in aggregation parameter, got scalar");
  EXPECT_EQ(Err("info(foo, bar)"),
            "1:11: parse error: expected label selectors only, got vector selector instead");
  // Errors inside arguments come before the call's own checks.
  EXPECT_EQ(Err("rate({})"),
            "1:6: parse error: vector selector must contain at least one non-empty matcher");
}

TEST(ParseErrorTest, Numbers) {
  EXPECT_EQ(Err("1e400"),
            "1:1: parse error: error parsing number: strconv.ParseFloat: parsing \"1e400\": value "
            "out of range");
  EXPECT_EQ(Err("1.5h"), "1:1: parse error: unknown unit \".\" in duration \"1.5h\"");
  EXPECT_EQ(Err("5m1h"), "1:1: parse error: not a valid duration string: \"5m1h\"");
  EXPECT_EQ(Err("foo offset 1e40"), "1:12: parse error: duration out of range");
  EXPECT_EQ(Err("foo[1e40]"), "1:5: parse error: duration out of range");
  EXPECT_EQ(Err("1e"), "1:1: parse error: bad number or duration syntax: \"1e\"");
}

TEST(ParseErrorTest, BadRegex) {
  ParseResult r = Parse("foo{a=~\"(\"}");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error->column, 5);
}

TEST(ParseErrorTest, HistogramLiteralRejected) {
  EXPECT_EQ(Err("{{schema:0 sum:1 count:1}}"),
            "1:1: parse error: native histogram literals ({{...}}) are not supported");
}

}  // namespace
}  // namespace gpumon::promql
