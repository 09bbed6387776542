#include "exposition/parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace gpumon::exposition {
namespace {

// An owned copy of an Entry, so tests can collect a whole parse.
struct Owned {
  EntryKind kind = EntryKind::kEof;
  size_t line = 0;
  std::string name;
  std::vector<Label> labels;
  double value = 0;
  std::optional<int64_t> timestamp_ms;
  bool has_exemplar = false;
  std::vector<Label> exemplar_labels;
  double exemplar_value = 0;
  std::optional<int64_t> exemplar_timestamp_ms;
  std::string text;
  MetricType type = MetricType::kUnknown;
};

Result<std::vector<Owned>> ParseAll(std::string_view input, Format format,
                                    ParserOptions options = {}) {
  Parser parser(input, format, options);
  std::vector<Owned> out;
  Entry entry;
  while (true) {
    Status status = parser.Next(entry);
    if (!status.ok()) return status;
    Owned owned;
    owned.kind = entry.kind;
    owned.line = entry.line;
    owned.name = entry.name;
    owned.labels = ToLabels(entry.labels);
    owned.value = entry.value;
    owned.timestamp_ms = entry.timestamp_ms;
    owned.text = entry.text;
    owned.type = entry.type;
    if (entry.exemplar) {
      owned.has_exemplar = true;
      owned.exemplar_labels = ToLabels(entry.exemplar->labels);
      owned.exemplar_value = entry.exemplar->value;
      owned.exemplar_timestamp_ms = entry.exemplar->timestamp_ms;
    }
    out.push_back(std::move(owned));
    if (entry.kind == EntryKind::kEof) return out;
    if (out.size() > 100000) return Status::Error("parser does not terminate");
  }
}

std::string ErrorOf(std::string_view input, Format format, ParserOptions options = {}) {
  auto result = ParseAll(input, format, options);
  if (result.ok()) return "<no error>";
  return result.status().message();
}

std::string TextError(std::string_view input) { return ErrorOf(input, Format::kText004); }
std::string OmError(std::string_view input) { return ErrorOf(input, Format::kOpenMetrics1); }

// Parses a single 0.0.4 sample line and returns its value.
double TextValue(std::string_view value) {
  std::string input = "m " + std::string(value) + "\n";
  auto result = ParseAll(input, Format::kText004);
  EXPECT_TRUE(result.ok()) << value << ": " << result.status().message();
  if (!result.ok() || result->size() != 2) return -12345;
  return (*result)[0].value;
}

// ---------------------------------------------------------------------------
// Text format 0.0.4: valid input.

TEST(TextParserTest, SamplesMetadataAndComments) {
  const std::string input =
      "# HELP gpu_temp Temperature in \\\\ degrees\\nCelsius \\\" kept\n"
      "# TYPE gpu_temp gauge\n"
      "gpu_temp{gpu=\"0\",uuid=\"GPU-1\"} 41.5\n"
      "\n"
      "   \t\n"
      "# a plain comment\n"
      "#no space comment\n"
      "# HELPER is a comment too\n"
      "gpu_temp{gpu=\"1\"} 42 1700000000000\n"
      "errors_total 7\n";
  auto result = ParseAll(input, Format::kText004);
  ASSERT_TRUE(result.ok()) << result.status().message();
  const auto& e = *result;
  ASSERT_EQ(e.size(), 6u);
  EXPECT_EQ(e[0].kind, EntryKind::kHelp);
  EXPECT_EQ(e[0].name, "gpu_temp");
  EXPECT_EQ(e[0].text, "Temperature in \\ degrees\nCelsius \\\" kept");
  EXPECT_EQ(e[0].line, 1u);
  EXPECT_EQ(e[1].kind, EntryKind::kType);
  EXPECT_EQ(e[1].type, MetricType::kGauge);
  EXPECT_EQ(e[2].kind, EntryKind::kSample);
  EXPECT_EQ(e[2].name, "gpu_temp");
  EXPECT_EQ(e[2].labels, (std::vector<Label>{{"gpu", "0"}, {"uuid", "GPU-1"}}));
  EXPECT_EQ(e[2].value, 41.5);
  EXPECT_FALSE(e[2].timestamp_ms.has_value());
  EXPECT_EQ(e[3].line, 9u);
  EXPECT_EQ(e[3].timestamp_ms, int64_t{1700000000000});
  EXPECT_EQ(e[3].labels, (std::vector<Label>{{"gpu", "1"}}));
  EXPECT_EQ(e[4].name, "errors_total");
  EXPECT_TRUE(e[4].labels.empty());
  EXPECT_EQ(e[4].value, 7);
  EXPECT_EQ(e[5].kind, EntryKind::kEof);
}

// Entry::series is the sample's name and label set exactly as written.
TEST(TextParserTest, SeriesIsTheNameAndLabelSetAsWritten) {
  const std::string text = "a 1\nb{x=\"1\",y=\"q\\\"\"}  2 1000\nc { } 3\n";
  for (Format f : {Format::kText004}) {
    Parser parser(text, f);
    Entry e;
    std::vector<std::string> series;
    while (parser.Next(e).ok() && e.kind != EntryKind::kEof) series.emplace_back(e.series);
    EXPECT_EQ(series, (std::vector<std::string>{"a", "b{x=\"1\",y=\"q\\\"\"}", "c { }"}));
  }
  Parser om("d{z=\"1\"} 4\n# EOF\n", Format::kOpenMetrics1);
  Entry e;
  ASSERT_TRUE(om.Next(e).ok());
  EXPECT_EQ(e.series, "d{z=\"1\"}");
}

TEST(TextParserTest, LabelValueEscapes) {
  auto result = ParseAll(R"(m{a="x\\y",b="q\"q",c="l\nl",d="tab\tstays",e="caf)"
                         "\xc3\xa9"
                         R"("} 1)",
                         Format::kText004);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ((*result)[0].labels, (std::vector<Label>{{"a", "x\\y"},
                                                     {"b", "q\"q"},
                                                     {"c", "l\nl"},
                                                     {"d", "tab\\tstays"},
                                                     {"e", "caf\xc3\xa9"}}));
}

TEST(TextParserTest, LenientWhitespaceTrailingCommaAndEmptyLabelSet) {
  auto result = ParseAll(
      "  m { a = \"1\" , b=\"2\", }  3  \t 5 \n"
      "n{} 4\n"
      "o{a=\"1\",}5\n"
      "p\t6\n",
      Format::kText004);
  ASSERT_TRUE(result.ok()) << result.status().message();
  const auto& e = *result;
  ASSERT_EQ(e.size(), 5u);
  EXPECT_EQ(e[0].labels, (std::vector<Label>{{"a", "1"}, {"b", "2"}}));
  EXPECT_EQ(e[0].value, 3);
  EXPECT_EQ(e[0].timestamp_ms, int64_t{5});
  EXPECT_TRUE(e[1].labels.empty());
  EXPECT_EQ(e[1].value, 4);
  EXPECT_EQ(e[2].value, 5);
  EXPECT_EQ(e[3].value, 6);
}

TEST(TextParserTest, GoFloatSyntax) {
  EXPECT_EQ(TextValue("1e3"), 1000);
  EXPECT_EQ(TextValue("1E-2"), 0.01);
  EXPECT_EQ(TextValue(".5"), 0.5);
  EXPECT_EQ(TextValue("5."), 5);
  EXPECT_EQ(TextValue("+3"), 3);
  EXPECT_EQ(TextValue("-2.5e+1"), -25);
  EXPECT_EQ(TextValue("007"), 7);
  EXPECT_EQ(TextValue("1.e2"), 100);
  EXPECT_EQ(TextValue("1.7976931348623157e308"), std::numeric_limits<double>::max());
  EXPECT_EQ(TextValue("1e-400"), 0);  // underflow rounds to zero, as in Go
  EXPECT_TRUE(std::signbit(TextValue("-1e-400")));
  EXPECT_EQ(TextValue("+Inf"), std::numeric_limits<double>::infinity());
  EXPECT_EQ(TextValue("-Inf"), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(TextValue("inf"), std::numeric_limits<double>::infinity());
  EXPECT_EQ(TextValue("+infinity"), std::numeric_limits<double>::infinity());
  EXPECT_EQ(TextValue("-INFINITY"), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(TextValue("NaN")));
  EXPECT_TRUE(std::isnan(TextValue("nan")));
  EXPECT_TRUE(std::isnan(TextValue("NAN")));
}

TEST(TextParserTest, RejectsFloatsGoRejects) {
  for (const char* bad :
       {"+nan", "-NaN", "nan(1)", "0x10", "0x1p3", "1_000", "1e400", "-1e400", "1e", ".", "e5",
        "--1", "+-1", "1.2.3", "Infinit", "infinityy", "1,5", "\xff"}) {
    std::string error = TextError("m " + std::string(bad) + "\n");
    EXPECT_EQ(error.rfind("line 1, column 3: expected sample value", 0), 0u)
        << bad << " -> " << error;
  }
}

TEST(TextParserTest, TimestampsAndTypes) {
  auto result = ParseAll(
      "# TYPE a counter\n# TYPE b untyped\n# TYPE c histogram\n# TYPE d summary\n"
      "a -5 -1000\nb 1 9223372036854775807\n",
      Format::kText004);
  ASSERT_TRUE(result.ok()) << result.status().message();
  const auto& e = *result;
  EXPECT_EQ(e[0].type, MetricType::kCounter);
  EXPECT_EQ(e[1].type, MetricType::kUnknown);
  EXPECT_EQ(e[2].type, MetricType::kHistogram);
  EXPECT_EQ(e[3].type, MetricType::kSummary);
  EXPECT_EQ(e[4].timestamp_ms, int64_t{-1000});
  EXPECT_EQ(e[5].timestamp_ms, std::numeric_limits<int64_t>::max());
}

TEST(TextParserTest, HelpWithoutTextAndNoTrailingNewline) {
  auto result = ParseAll("# HELP m\n# HELP k  two spaces\nm 1", Format::kText004);
  ASSERT_TRUE(result.ok()) << result.status().message();
  ASSERT_EQ(result->size(), 4u);
  EXPECT_EQ((*result)[0].text, "");
  EXPECT_EQ((*result)[1].text, " two spaces");
  EXPECT_EQ((*result)[2].value, 1);
  EXPECT_EQ((*result)[3].kind, EntryKind::kEof);
}

TEST(TextParserTest, EmptyInputIsJustEof) {
  auto result = ParseAll("", Format::kText004);
  ASSERT_TRUE(result.ok());
  ASSERT_EQ(result->size(), 1u);
  EXPECT_EQ((*result)[0].kind, EntryKind::kEof);
}

TEST(TextParserTest, EofAndErrorsAreSticky) {
  Parser ok_parser("m 1\n", Format::kText004);
  Entry entry;
  ASSERT_TRUE(ok_parser.Next(entry).ok());
  ASSERT_TRUE(ok_parser.Next(entry).ok());
  EXPECT_EQ(entry.kind, EntryKind::kEof);
  ASSERT_TRUE(ok_parser.Next(entry).ok());
  EXPECT_EQ(entry.kind, EntryKind::kEof);

  Parser bad_parser("m x\nm 1\n", Format::kText004);
  Status first = bad_parser.Next(entry);
  ASSERT_FALSE(first.ok());
  Status second = bad_parser.Next(entry);
  EXPECT_EQ(second.message(), first.message());
}

// ---------------------------------------------------------------------------
// Text format 0.0.4: every error class, with its position.

TEST(TextParserErrorTest, MetricName) {
  EXPECT_EQ(TextError("1abc 2\n"), "line 1, column 1: expected metric name, found \"1abc\"");
  EXPECT_EQ(TextError("ok 1\n{a=\"b\"} 1\n"),
            "line 2, column 1: expected metric name, found \"{\"");
  EXPECT_EQ(TextError("m-x 1\n"),
            "line 1, column 2: expected '{' or whitespace after metric name, found \"-x\"");
}

TEST(TextParserErrorTest, LabelSyntax) {
  EXPECT_EQ(TextError("m{1=\"a\"} 1\n"), "line 1, column 3: expected label name, found \"1\"");
  EXPECT_EQ(TextError("m{,} 1\n"), "line 1, column 3: expected label name, found \",\"");
  EXPECT_EQ(TextError("m{a=\"1\",,} 1\n"), "line 1, column 9: expected label name, found \",\"");
  EXPECT_EQ(TextError("m{a \"b\"} 1\n"),
            "line 1, column 5: expected '=' after label name, found \"\\\"\"");
  EXPECT_EQ(TextError("m{a=b} 1\n"),
            "line 1, column 5: expected '\"' starting a label value, found \"b\"");
  EXPECT_EQ(TextError("m{a=\"b\" c=\"d\"} 1\n"),
            "line 1, column 9: expected ',' or '}' after label value, found \"c\"");
  EXPECT_EQ(TextError("m{a=\"1\"\n"),
            "line 1, column 8: expected ',' or '}' after label value, found end of line");
}

TEST(TextParserErrorTest, UnterminatedLabelValue) {
  EXPECT_EQ(TextError("m{a=\"b} 1\n"),
            "line 1, column 10: expected '\"' closing the label value opened at column 5, found "
            "end of line");
  EXPECT_EQ(TextError("m{a=\"b\\"),
            "line 1, column 8: expected '\"' closing the label value opened at column 5, found "
            "end of input");
}

TEST(TextParserErrorTest, DuplicateLabels) {
  EXPECT_EQ(TextError("m{a=\"1\",b=\"2\",a=\"3\"} 1\n"),
            "line 1, column 15: duplicate label name \"a\"");
  EXPECT_EQ(TextError("m{__name__=\"x\"} 1\n"),
            "line 1, column 3: duplicate label name \"__name__\" (the metric name)");
  // Many labels take the sorting path.
  std::string line = "m{";
  for (int i = 0; i < 40; ++i) line += "l" + std::to_string(i) + "=\"v\",";
  const size_t column = line.size() + 1;
  line += "l7=\"again\"} 1\n";
  EXPECT_EQ(TextError(line),
            "line 1, column " + std::to_string(column) + ": duplicate label name \"l7\"");
}

TEST(TextParserErrorTest, ValueAndTimestamp) {
  EXPECT_EQ(TextError("m\n"), "line 1, column 2: expected sample value, found end of line");
  EXPECT_EQ(TextError("m{} \n"), "line 1, column 5: expected sample value, found end of line");
  EXPECT_EQ(TextError("m abc\n"),
            "line 1, column 3: expected sample value (float, NaN or +/-Inf), found \"abc\"");
  EXPECT_EQ(TextError("m 1 1.5\n"),
            "line 1, column 5: expected timestamp in integer milliseconds, found \"1.5\"");
  EXPECT_EQ(TextError("m 1 +5\n"),
            "line 1, column 5: expected timestamp in integer milliseconds, found \"+5\"");
  EXPECT_EQ(TextError("m 1 99999999999999999999\n"),
            "line 1, column 5: timestamp \"99999999999999999999\" out of range");
  EXPECT_EQ(TextError("m 1 2 3\n"),
            "line 1, column 7: expected end of line after timestamp, found \"3\"");
  EXPECT_EQ(TextError("m 1\r\n"),
            "line 1, column 3: expected sample value (float, NaN or +/-Inf), found \"1\\x0d\"");
}

TEST(TextParserErrorTest, Metadata) {
  EXPECT_EQ(TextError("# TYPE m bogus\n"),
            "line 1, column 10: expected metric type (counter, gauge, histogram, summary or "
            "untyped), found \"bogus\"");
  EXPECT_EQ(TextError("# TYPE m info\n"),
            "line 1, column 10: expected metric type (counter, gauge, histogram, summary or "
            "untyped), found \"info\"");
  EXPECT_EQ(TextError("# TYPE m\n"),
            "line 1, column 9: expected metric type (counter, gauge, histogram, summary or "
            "untyped), found end of line");
  EXPECT_EQ(TextError("# HELP 9m x\n"), "line 1, column 8: expected metric name, found \"9m\"");
  EXPECT_EQ(TextError("# HELP m{x} y\n"),
            "line 1, column 9: expected whitespace after metric name, found \"{\"");
}

TEST(TextParserErrorTest, NulBytesAndUtf8) {
  using namespace std::string_literals;
  EXPECT_EQ(TextError("m{a=\"x\0y\"} 1\n"s),
            "line 1, column 7: unexpected NUL byte in label value");
  EXPECT_EQ(TextError("# HELP m ab\0\n"s), "line 1, column 12: unexpected NUL byte in help text");
  EXPECT_EQ(TextError("\0m 1\n"s), "line 1, column 1: expected metric name, found \"\\x00m\"");
  EXPECT_EQ(TextError("m 1\0\n"s),
            "line 1, column 3: expected sample value (float, NaN or +/-Inf), found \"1\\x00\"");
  EXPECT_EQ(TextError("m{a=\"ok\xc3(\"} 1\n"), "line 1, column 8: label value is not valid UTF-8");
  EXPECT_EQ(TextError("m{a=\"\xed\xa0\x80\"} 1\n"),  // surrogate
            "line 1, column 6: label value is not valid UTF-8");
  EXPECT_EQ(TextError("m{a=\"\xc0\xaf\"} 1\n"),  // overlong
            "line 1, column 6: label value is not valid UTF-8");
  EXPECT_EQ(TextError("# HELP m bad \xff\n"), "line 1, column 14: help text is not valid UTF-8");
}

TEST(TextParserErrorTest, LineTooLong) {
  ParserOptions options;
  options.max_line_length = 16;
  EXPECT_EQ(ErrorOf("short 1\nm{a=\"0123456789\"} 1\n", Format::kText004, options),
            "line 2, column 17: line is longer than the maximum of 16 bytes");
  // Also without a newline anywhere in reach.
  EXPECT_EQ(ErrorOf(std::string(100, 'm'), Format::kText004, options),
            "line 1, column 17: line is longer than the maximum of 16 bytes");
  // Exactly at the limit is fine.
  EXPECT_EQ(ErrorOf("m 1234567890123\n", Format::kText004, options), "<no error>");
}

// ---------------------------------------------------------------------------
// OpenMetrics 1.0: valid input.

TEST(OpenMetricsParserTest, FullExposition) {
  const std::string input =
      "# TYPE gpu_energy_joules counter\n"
      "# UNIT gpu_energy_joules joules\n"
      "# HELP gpu_energy_joules Energy with \\\"quotes\\\", \\\\ and \\n newline.\n"
      "gpu_energy_joules_total{gpu=\"0\"} 1.5e3 1700000000.123 # {trace_id=\"abc\"} 2.5 "
      "1700000000.5\n"
      "gpu_energy_joules_created{gpu=\"0\"} 1.6e9\n"
      "# TYPE latency_seconds histogram\n"
      "latency_seconds_bucket{le=\"0.1\"} 1 # {} 0.05\n"
      "latency_seconds_bucket{le=\"+Inf\"} 2\n"
      "latency_seconds_count 2\n"
      "latency_seconds_sum 0.3\n"
      "# TYPE build info\n"
      "build_info{version=\"1.0\"} 1\n"
      "# TYPE state stateset\n"
      "state{state=\"a\"} 1\n"
      "untracked_metric -Inf\n"
      "# EOF\n";
  auto result = ParseAll(input, Format::kOpenMetrics1);
  ASSERT_TRUE(result.ok()) << result.status().message();
  const auto& e = *result;
  ASSERT_EQ(e.size(), 16u);
  EXPECT_EQ(e[0].type, MetricType::kCounter);
  EXPECT_EQ(e[1].kind, EntryKind::kUnit);
  EXPECT_EQ(e[1].text, "joules");
  EXPECT_EQ(e[2].text, "Energy with \"quotes\", \\ and \n newline.");
  EXPECT_EQ(e[3].name, "gpu_energy_joules_total");
  EXPECT_EQ(e[3].value, 1500);
  EXPECT_EQ(e[3].timestamp_ms, int64_t{1700000000123});
  ASSERT_TRUE(e[3].has_exemplar);
  EXPECT_EQ(e[3].exemplar_labels, (std::vector<Label>{{"trace_id", "abc"}}));
  EXPECT_EQ(e[3].exemplar_value, 2.5);
  EXPECT_EQ(e[3].exemplar_timestamp_ms, int64_t{1700000000500});
  EXPECT_EQ(e[4].name, "gpu_energy_joules_created");
  EXPECT_FALSE(e[4].has_exemplar);
  EXPECT_EQ(e[5].type, MetricType::kHistogram);
  EXPECT_TRUE(e[6].has_exemplar);
  EXPECT_TRUE(e[6].exemplar_labels.empty());
  EXPECT_FALSE(e[6].exemplar_timestamp_ms.has_value());
  EXPECT_FALSE(e[6].timestamp_ms.has_value());
  EXPECT_EQ(e[10].type, MetricType::kInfo);
  EXPECT_EQ(e[12].type, MetricType::kStateSet);
  EXPECT_EQ(e[14].value, -std::numeric_limits<double>::infinity());
  EXPECT_EQ(e[15].kind, EntryKind::kEof);
  EXPECT_EQ(e[15].line, 16u);
}

TEST(OpenMetricsParserTest, EofWithoutTrailingNewlineAndTimestampRounding) {
  auto result = ParseAll("a 1 1.001\nb 1 -0.5\nc 1 2e3\n# EOF", Format::kOpenMetrics1);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ((*result)[0].timestamp_ms, int64_t{1001});
  EXPECT_EQ((*result)[1].timestamp_ms, int64_t{-500});
  EXPECT_EQ((*result)[2].timestamp_ms, int64_t{2000000});
  EXPECT_EQ(result->back().kind, EntryKind::kEof);
}

TEST(OpenMetricsParserTest, CounterDeclaredWithTotalSuffixIsTolerated) {
  auto result =
      ParseAll("# TYPE a_total counter\na_total 1\na_created 2\n# EOF\n", Format::kOpenMetrics1);
  EXPECT_TRUE(result.ok()) << result.status().message();
}

TEST(OpenMetricsParserTest, SampleOutsideDeclaredFamilyStartsANewOne) {
  auto result = ParseAll("# TYPE a gauge\na 1\na_other 2\nb 3\n# TYPE c counter\n# EOF\n",
                         Format::kOpenMetrics1);
  EXPECT_TRUE(result.ok()) << result.status().message();
}

// ---------------------------------------------------------------------------
// OpenMetrics 1.0: errors.

TEST(OpenMetricsParserErrorTest, EofHandling) {
  EXPECT_EQ(OmError(""), "line 1, column 1: expected \"# EOF\", found end of input");
  EXPECT_EQ(OmError("a 1\n"), "line 2, column 1: expected \"# EOF\", found end of input");
  EXPECT_EQ(OmError("a 1\n# EOF\n\n"), "line 3, column 1: unexpected data after \"# EOF\"");
  EXPECT_EQ(OmError("# EOF\na 1\n"), "line 2, column 1: unexpected data after \"# EOF\"");
  EXPECT_EQ(OmError("a 1\n# EOF \n"),
            "line 2, column 1: expected \"# HELP\", \"# TYPE\", \"# UNIT\" or \"# EOF\", found "
            "\"# EOF \"");
}

TEST(OpenMetricsParserErrorTest, StrictLayout) {
  EXPECT_EQ(OmError("a 1\n\n# EOF\n"), "line 2, column 1: unexpected empty line");
  EXPECT_EQ(OmError("# a comment\n# EOF\n"),
            "line 1, column 1: expected \"# HELP\", \"# TYPE\", \"# UNIT\" or \"# EOF\", found "
            "\"# a com\"");
  EXPECT_EQ(OmError("a  1\n# EOF\n"), "line 1, column 3: expected sample value, found \" \"");
  EXPECT_EQ(OmError(" a 1\n# EOF\n"), "line 1, column 1: expected metric name, found \" \"");
  EXPECT_EQ(OmError("a\t1\n# EOF\n"),
            "line 1, column 2: expected '{' or ' ' after metric name, found \"\\x09\"");
  EXPECT_EQ(OmError("a{b=\"1\",} 1\n# EOF\n"),
            "line 1, column 9: expected label name, found \"}\"");
  EXPECT_EQ(OmError("a{b = \"1\"} 1\n# EOF\n"),
            "line 1, column 4: expected '=' after label name, found \" \"");
  EXPECT_EQ(OmError("a{b=\"1\"}1\n# EOF\n"),
            "line 1, column 9: expected ' ' after label set, found \"1\"");
  EXPECT_EQ(OmError("a 1 \n# EOF\n"), "line 1, column 5: expected timestamp, found end of line");
  EXPECT_EQ(OmError("a 1 2 3\n# EOF\n"),
            "line 1, column 7: expected exemplar or end of line after timestamp, found \"3\"");
  EXPECT_EQ(OmError("a 1 NaN\n# EOF\n"),
            "line 1, column 5: expected timestamp in seconds, found \"NaN\"");
  EXPECT_EQ(OmError("a 1 1e300\n# EOF\n"), "line 1, column 5: timestamp \"1e300\" out of range");
}

TEST(OpenMetricsParserErrorTest, Exemplars) {
  EXPECT_EQ(OmError("a_total 1 #{} 1\n# EOF\n"),
            "line 1, column 11: expected exemplar starting with \"# {\", found \"#\"");
  EXPECT_EQ(OmError("a 1 # {x=\"1\"}\n# EOF\n"),
            "line 1, column 14: expected ' ' before exemplar value, found end of line");
  EXPECT_EQ(OmError("a 1 # {x=\"1\"} zz\n# EOF\n"),
            "line 1, column 15: expected exemplar value, found \"zz\"");
  EXPECT_EQ(OmError("a 1 # {x=\"1\",x=\"2\"} 1\n# EOF\n"),
            "line 1, column 14: duplicate label name \"x\"");
  EXPECT_EQ(OmError("a 1 # {x=\"1\"} 1 2 3\n# EOF\n"),
            "line 1, column 18: expected end of line after exemplar, found \" \"");
}

TEST(OpenMetricsParserErrorTest, Metadata) {
  EXPECT_EQ(OmError("# TYPE a untyped\n# EOF\n"),
            "line 1, column 10: expected metric type (counter, gauge, histogram, gaugehistogram, "
            "stateset, info, summary or unknown), found \"untyped\"");
  EXPECT_EQ(OmError("# TYPE a  gauge\n# EOF\n"),
            "line 1, column 10: expected metric type (counter, gauge, histogram, gaugehistogram, "
            "stateset, info, summary or unknown), found \" gauge\"");
  EXPECT_EQ(OmError("# UNIT a_seconds bytes\n# EOF\n"),
            "line 1, column 18: unit \"bytes\" is not a suffix of metric family name "
            "\"a_seconds\"");
  EXPECT_EQ(OmError("# UNIT seconds seconds\n# EOF\n"),
            "line 1, column 16: unit \"seconds\" is not a suffix of metric family name "
            "\"seconds\"");
  EXPECT_EQ(OmError("# UNIT a_s s-x\n# EOF\n"),
            "line 1, column 13: expected unit character [a-zA-Z0-9_:] or end of line, found "
            "\"-x\"");
  EXPECT_EQ(OmError("# TYPE a gauge\n# TYPE a counter\n# EOF\n"),
            "line 2, column 8: duplicate TYPE line for metric family \"a\"");
  EXPECT_EQ(OmError("# TYPE a gauge\na 1\n# HELP a late\n# EOF\n"),
            "line 3, column 8: metadata for metric family \"a\" must come before its samples");
  EXPECT_EQ(OmError("a 1\n# TYPE a gauge\n# EOF\n"),
            "line 2, column 8: metadata for metric family \"a\" must come before its samples");
}

TEST(OpenMetricsParserErrorTest, SampleNamesMustFitTheDeclaredFamily) {
  EXPECT_EQ(OmError("# TYPE a counter\na 1\n# EOF\n"),
            "line 2, column 1: sample name \"a\" does not fit metric family \"a\" of type counter "
            "(expected \"a_total\", \"a_created\")");
  EXPECT_EQ(OmError("# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_gsum 1\n# EOF\n"),
            "line 3, column 1: sample name \"h_gsum\" does not fit metric family \"h\" of type "
            "histogram (expected \"h_bucket\", \"h_count\", \"h_sum\", \"h_created\")");
  EXPECT_EQ(OmError("# TYPE g gauge\ng_total 1\n# EOF\n"),
            "line 2, column 1: sample name \"g_total\" does not fit metric family \"g\" of type "
            "gauge (expected \"g\")");
  EXPECT_EQ(OmError("# TYPE i info\ni 1\n# EOF\n"),
            "line 2, column 1: sample name \"i\" does not fit metric family \"i\" of type info "
            "(expected \"i_info\")");
}

// ---------------------------------------------------------------------------
// Robustness: mutated inputs must end in an entry stream or an error,
// never a crash, hang or out-of-bounds read (run under ASan in CI).

TEST(ParserRobustnessTest, MutatedInputsTerminate) {
  const std::string seed =
      "# HELP m help \\n text\n# TYPE m_total counter\n# UNIT m_total total\n"
      "m_total{a=\"b\\\"c\",d=\"e\"} 1.5 1700000000 # {t=\"x\"} 1 2\n"
      "m_created 3\n# EOF\n";
  std::mt19937 rng(12345);
  const std::string alphabet = "{}=,\"\\# \t\n\0aZ_:19.e+-InfNaN\xff";
  for (int round = 0; round < 20000; ++round) {
    std::string input = seed;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < edits && !input.empty(); ++i) {
      const size_t pos = rng() % input.size();
      const char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
        case 0:
          input[pos] = c;
          break;
        case 1:
          input.insert(input.begin() + static_cast<std::ptrdiff_t>(pos), c);
          break;
        default:
          input.erase(pos, 1);
      }
    }
    for (Format format : {Format::kText004, Format::kOpenMetrics1}) {
      // Parse from a heap copy sized exactly, so ASan sees any overread.
      std::vector<char> exact(input.begin(), input.end());
      std::string_view view(exact.data(), exact.size());
      auto entries = ParseAll(view, format);
      if (!entries.ok()) {
        EXPECT_EQ(entries.status().message().rfind("line ", 0), 0u) << entries.status().message();
      }
      (void)ParseToFamilies(view, format);
    }
  }
}

// ---------------------------------------------------------------------------
// ParseToFamilies.

TEST(ParseToFamiliesTest, TextGroupsByMetadata) {
  auto result = ParseToFamilies(
      "# HELP temp Temperature.\n# TYPE temp gauge\ntemp{gpu=\"0\"} 40\ntemp{gpu=\"1\"} 41 "
      "123\n# TYPE errors_total counter\nerrors_total 3\n"
      "# TYPE lat histogram\nlat_bucket{le=\"+Inf\"} 2\nlat_sum 1\nlat_count 2\n"
      "orphan 5\n# HELP only_help Nothing else.\n",
      Format::kText004);
  ASSERT_TRUE(result.ok()) << result.status().message();
  const auto& f = *result;
  ASSERT_EQ(f.size(), 7u);
  EXPECT_EQ(f[0].name, "temp");
  EXPECT_EQ(f[0].type, MetricType::kGauge);
  EXPECT_EQ(f[0].help, "Temperature.");
  ASSERT_EQ(f[0].samples.size(), 2u);
  EXPECT_EQ(f[0].samples[1].labels, (std::vector<Label>{{"gpu", "1"}}));
  EXPECT_EQ(f[0].samples[1].value, 41);
  EXPECT_EQ(f[0].samples[1].timestamp_ms, int64_t{123});
  EXPECT_EQ(f[1].name, "errors_total");
  EXPECT_EQ(f[1].type, MetricType::kCounter);
  EXPECT_EQ(f[2].name, "lat_bucket");
  EXPECT_EQ(f[2].type, MetricType::kHistogram);
  EXPECT_EQ(f[3].name, "lat_sum");
  EXPECT_EQ(f[4].name, "lat_count");
  EXPECT_EQ(f[4].type, MetricType::kHistogram);
  EXPECT_EQ(f[5].name, "orphan");
  EXPECT_EQ(f[5].type, MetricType::kUnknown);
  EXPECT_EQ(f[6].name, "only_help");
  EXPECT_EQ(f[6].help, "Nothing else.");
  EXPECT_TRUE(f[6].samples.empty());
}

TEST(ParseToFamiliesTest, OpenMetricsFamilyNamesCarrySampleSuffixes) {
  auto result = ParseToFamilies(
      "# TYPE energy_joules counter\n# UNIT energy_joules joules\n# HELP energy_joules E.\n"
      "energy_joules_total 5\n# TYPE build info\nbuild_info{v=\"1\"} 1\n"
      "# TYPE idle counter\n# EOF\n",
      Format::kOpenMetrics1);
  ASSERT_TRUE(result.ok()) << result.status().message();
  const auto& f = *result;
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].name, "energy_joules_total");
  EXPECT_EQ(f[0].type, MetricType::kCounter);
  EXPECT_EQ(f[0].unit, "joules");
  EXPECT_EQ(f[0].help, "E.");
  EXPECT_EQ(f[1].name, "build_info");
  EXPECT_EQ(f[1].type, MetricType::kInfo);
  EXPECT_EQ(f[1].samples[0].labels, (std::vector<Label>{{"v", "1"}}));
  EXPECT_EQ(f[2].name, "idle_total");
  EXPECT_TRUE(f[2].samples.empty());
}

TEST(ParseToFamiliesTest, PropagatesErrors) {
  auto result = ParseToFamilies("m 1\n", Format::kOpenMetrics1);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(), "line 2, column 1: expected \"# EOF\", found end of input");
}

// ---------------------------------------------------------------------------
// Content types.

TEST(FormatTest, FromContentType) {
  EXPECT_EQ(FormatFromContentType("application/openmetrics-text; version=1.0.0; charset=utf-8"),
            Format::kOpenMetrics1);
  EXPECT_EQ(FormatFromContentType(" Application/OpenMetrics-Text ;version=0.0.1"),
            Format::kOpenMetrics1);
  EXPECT_EQ(FormatFromContentType("text/plain; version=0.0.4; charset=utf-8"), Format::kText004);
  EXPECT_EQ(FormatFromContentType(""), Format::kText004);
  EXPECT_EQ(FormatFromContentType("application/json"), Format::kText004);
  EXPECT_STREQ(FormatName(Format::kOpenMetrics1), "openmetrics-1.0");
  EXPECT_STREQ(FormatName(Format::kText004), "text-0.0.4");
}

// ---------------------------------------------------------------------------
// Real exporter output (third-party readings, read in place).

TEST(ReferenceReadingsTest, ParseEveryFile) {
  const std::filesystem::path dir =
      std::filesystem::path(GPUMON_SHARED_DIR) / "reference" / "gpu-readings";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << "no shared readings at " << dir;
  int files = 0;
  for (const auto& file : std::filesystem::directory_iterator(dir)) {
    if (file.path().extension() != ".metrics") continue;
    ++files;
    std::ifstream in(file.path(), std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string content = buffer.str();

    // Independent count: every non-blank line not starting with '#'.
    size_t expected_samples = 0;
    size_t expected_types = 0;
    std::map<std::string, std::string> declared;  // name -> type word
    std::istringstream lines(content);
    for (std::string line; std::getline(lines, line);) {
      if (line.starts_with("# TYPE ")) {
        ++expected_types;
        std::istringstream words(line.substr(7));
        std::string name, type;
        words >> name >> type;
        declared[name] = type;
      }
      if (!line.empty() && line[0] != '#') ++expected_samples;
    }

    auto entries = ParseAll(content, Format::kText004);
    ASSERT_TRUE(entries.ok()) << file.path() << ": " << entries.status().message();
    size_t samples = 0;
    size_t types = 0;
    size_t with_uuid = 0;
    for (const Owned& e : *entries) {
      if (e.kind == EntryKind::kType) ++types;
      if (e.kind != EntryKind::kSample) continue;
      ++samples;
      EXPECT_TRUE(e.name.starts_with("nvidia_smi_")) << e.name;
      for (const Label& label : e.labels) with_uuid += label.name == "uuid";
    }
    EXPECT_GT(samples, 50u) << file.path();
    EXPECT_EQ(samples, expected_samples) << file.path();
    EXPECT_EQ(types, expected_types) << file.path();
    EXPECT_GT(with_uuid, 0u) << file.path();

    auto families = ParseToFamilies(content, Format::kText004);
    ASSERT_TRUE(families.ok()) << families.status().message();
    size_t family_samples = 0;
    for (const MetricFamily& family : *families) {
      family_samples += family.samples.size();
      auto it = declared.find(family.name);
      if (it == declared.end()) {
        EXPECT_EQ(family.type, MetricType::kUnknown) << family.name;
      } else if (it->second == "counter") {
        EXPECT_EQ(family.type, MetricType::kCounter) << family.name;
      } else {
        EXPECT_EQ(it->second, "gauge");
        EXPECT_EQ(family.type, MetricType::kGauge) << family.name;
      }
    }
    EXPECT_EQ(family_samples, samples);
  }
  EXPECT_GT(files, 0);
}

}  // namespace
}  // namespace gpumon::exposition
