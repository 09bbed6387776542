// Every query of Prometheus's PromQL test scripts (../shared/conformance)
// must parse unless the script expects it to fail, and printing a parsed
// query must give text that parses back to the same tree. Skips when the
// shared folder is absent.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "promql/parser.h"
#include "promql/printer.h"
#include "tree_dump.h"

namespace gpumon::promql {
namespace {

namespace fs = std::filesystem;

struct CorpusQuery {
  std::string file;
  int line = 0;
  std::string query;
  bool may_fail = false;
};

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

bool StartsWith(const std::string& s, std::string_view p) { return s.rfind(p, 0) == 0; }

// Skips `n` whitespace-separated words of s; returns the rest.
std::string SkipWords(const std::string& s, int n) {
  size_t i = 0;
  for (int k = 0; k < n; ++k) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
  }
  return Trim(s.substr(i));
}

std::vector<CorpusQuery> LoadCorpus() {
  std::vector<CorpusQuery> out;
  const fs::path dir = fs::path(GPUMON_SHARED_DIR) / "conformance" / "promql";
  if (!fs::is_directory(dir)) return out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".test") continue;
    std::ifstream in(entry.path());
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    for (size_t i = 0; i < lines.size(); ++i) {
      const std::string t = Trim(lines[i]);
      if (!StartsWith(t, "eval")) continue;
      CorpusQuery q;
      q.file = entry.path().filename().string();
      q.line = static_cast<int>(i + 1);
      const std::string cmd = t.substr(0, t.find_first_of(" \t"));
      q.may_fail = cmd == "eval_fail";
      const std::string kind = SkipWords(t, 1);
      if (StartsWith(kind, "instant")) {
        q.query = SkipWords(t, 4);  // eval instant at <t>
      } else if (StartsWith(kind, "range")) {
        q.query = SkipWords(t, 8);  // eval range from <a> to <b> step <s>
      } else {
        continue;
      }
      for (size_t j = i + 1; j < lines.size(); ++j) {
        const std::string n = Trim(lines[j]);
        if (n.empty() || StartsWith(n, "eval") || StartsWith(n, "load") || StartsWith(n, "clear")) {
          break;
        }
        if (StartsWith(n, "expect fail")) q.may_fail = true;
      }
      out.push_back(std::move(q));
    }
  }
  return out;
}

TEST(CorpusTest, EveryQueryParsesAndRoundTrips) {
  const auto corpus = LoadCorpus();
  if (corpus.empty()) GTEST_SKIP() << "conformance scripts not found under " GPUMON_SHARED_DIR;
  int parsed = 0;
  for (const auto& q : corpus) {
    SCOPED_TRACE(q.file + ":" + std::to_string(q.line) + ": " + q.query);
    ParseResult r = Parse(q.query);
    if (!r.ok()) {
      EXPECT_TRUE(q.may_fail) << r.error->ToString();
      continue;
    }
    ++parsed;
    const std::string printed = Print(*r.expr);
    ParseResult again = Parse(printed);
    ASSERT_TRUE(again.ok()) << printed << " -> " << again.error->ToString();
    EXPECT_EQ(testing::Dump(*again.expr), testing::Dump(*r.expr)) << printed;
    EXPECT_EQ(Print(*again.expr), printed);
    const std::string formatted = Format(*r.expr);
    ParseResult pretty = Parse(formatted);
    ASSERT_TRUE(pretty.ok()) << formatted << " -> " << pretty.error->ToString();
    EXPECT_EQ(testing::Dump(*pretty.expr), testing::Dump(*r.expr)) << formatted;
  }
  // The scripts hold over a thousand queries; a broken loader finds none.
  EXPECT_GT(parsed, 1000);
}

}  // namespace
}  // namespace gpumon::promql
