// The spec parsers' text helpers: trimming, splitting, bounded integers.
#include "sim/spec_text.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpumon::sim {
namespace {

std::vector<std::string> Pieces(std::string_view s, char sep) {
  std::vector<std::string> out;
  for (std::string_view p : Split(s, sep)) out.emplace_back(p);
  return out;
}

TEST(SpecTextTest, TrimDropsSpacesAndTabsOnly) {
  EXPECT_EQ(Trim(" \tgpu=3\t "), "gpu=3");
  EXPECT_EQ(Trim("a b"), "a b");
  EXPECT_EQ(Trim(" \t "), "");
  EXPECT_EQ(Trim("\nx\n"), "\nx\n");
}

TEST(SpecTextTest, SplitKeepsEmptyPieces) {
  EXPECT_EQ(Pieces("a;;b;", ';'), (std::vector<std::string>{"a", "", "b", ""}));
  EXPECT_EQ(Pieces("", ';'), (std::vector<std::string>{""}));
  EXPECT_EQ(Pieces("xid:gpu=1", ':'), (std::vector<std::string>{"xid", "gpu=1"}));
}

TEST(SpecTextTest, ParseUintAcceptsDigitsUpToMax) {
  EXPECT_EQ(ParseUint("0", 10), 0);
  EXPECT_EQ(ParseUint("007", 10), 7);
  EXPECT_EQ(ParseUint("10", 10), 10);
  EXPECT_EQ(ParseUint("11", 10), -1);
  EXPECT_EQ(ParseUint("", 10), -1);
  EXPECT_EQ(ParseUint("-1", 10), -1);
  EXPECT_EQ(ParseUint("+1", 10), -1);
  EXPECT_EQ(ParseUint(" 1", 10), -1);
  EXPECT_EQ(ParseUint("1x", 10), -1);
  EXPECT_EQ(ParseUint("99999999999999999999999", int64_t{1} << 40), -1);
}

}  // namespace
}  // namespace gpumon::sim
