#include "common/labels.h"

#include <gtest/gtest.h>

namespace gpumon {
namespace {

TEST(LabelsTest, SortedAndUnique) {
  Labels l{{"job", "a"}, {"__name__", "up"}, {"instance", "x"}, {"job", "b"}};
  ASSERT_EQ(l.size(), 3u);
  EXPECT_EQ(l.items()[0].name, "__name__");
  EXPECT_EQ(l.items()[1].name, "instance");
  EXPECT_EQ(l.Get("job"), "b");
  EXPECT_EQ(l.Get("missing"), "");
  EXPECT_FALSE(l.Has("missing"));
  EXPECT_EQ(l.ToString(), "up{instance=\"x\", job=\"b\"}");
}

TEST(LabelsTest, HashIsStableAndDistinguishes) {
  Labels a{{"a", "b"}, {"c", "d"}};
  Labels b{{"c", "d"}, {"a", "b"}};
  Labels c{{"a", "bc"}, {"d", ""}};
  EXPECT_EQ(a.Hash(), b.Hash());
  EXPECT_NE(a.Hash(), c.Hash());
  // Written to disk: the value must never change across versions.
  EXPECT_EQ(Labels({{"a", "b"}}).Hash(), Labels({{"a", "b"}}).Hash());
  EXPECT_LT(a, c);
}

}  // namespace
}  // namespace gpumon
