#include "common/labels.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

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

TEST(LabelsTest, EqualityDoesNotDependOnWhetherHashesWereComputed) {
  Labels a{{"a", "b"}, {"c", "d"}};
  Labels b{{"a", "b"}, {"c", "d"}};
  Labels c{{"a", "b"}, {"c", "e"}};
  EXPECT_EQ(a, b);  // neither hashed yet
  EXPECT_NE(a, c);
  (void)a.Hash();
  EXPECT_EQ(a, b);  // one hashed
  EXPECT_EQ(b, a);
  EXPECT_NE(a, c);
  EXPECT_NE(c, a);
  (void)b.Hash();
  (void)c.Hash();
  EXPECT_EQ(a, b);  // both hashed
  EXPECT_NE(a, c);
  EXPECT_NE(Labels{}, a);
  EXPECT_EQ(Labels{}, Labels::FromSorted({}));
}

TEST(LabelsTest, HashComputedLazilyIsTheSameFromEveryCopyAndThread) {
  // The value a label set hashes to must not depend on when or where it is
  // first asked for.
  const uint64_t want = Labels({{"__name__", "up"}, {"job", "x"}}).Hash();
  for (int round = 0; round < 20; ++round) {
    Labels l{{"job", "x"}, {"__name__", "up"}};
    std::vector<Labels> copies(8, l);
    std::vector<uint64_t> got(8);
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&copies, &got, t] { got[t] = copies[t].Hash(); });
    }
    for (auto& th : threads) th.join();
    for (uint64_t h : got) EXPECT_EQ(h, want);
    EXPECT_EQ(l.Hash(), want);
  }
  EXPECT_NE(Labels({{"a", "b"}}).Hash(), Labels({{"a", "c"}}).Hash());
}

}  // namespace
}  // namespace gpumon
