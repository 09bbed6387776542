#include "tsdb/index/postings.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <vector>

namespace gpumon::tsdb::index {
namespace {

Postings RandomList(std::mt19937_64& rng, size_t n, uint64_t universe) {
  std::set<uint64_t> s;
  std::uniform_int_distribution<uint64_t> d(0, universe - 1);
  while (s.size() < n) s.insert(d(rng));
  return Postings(s.begin(), s.end());
}

Postings RefIntersect(const Postings& a, const Postings& b) {
  Postings out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

TEST(PostingsTest, SmallCases) {
  Postings a{1, 3, 5, 7}, b{3, 4, 5, 8}, empty;
  EXPECT_EQ(Intersect(a, b), (Postings{3, 5}));
  EXPECT_EQ(Merge(a, b), (Postings{1, 3, 4, 5, 7, 8}));
  EXPECT_EQ(Without(a, b), (Postings{1, 7}));
  EXPECT_EQ(Without(b, a), (Postings{4, 8}));
  EXPECT_TRUE(Intersects(a, b));
  EXPECT_FALSE(Intersects(a, Postings{2, 4, 6}));
  EXPECT_TRUE(Intersect(a, empty).empty());
  EXPECT_EQ(Merge(a, empty), a);
  EXPECT_EQ(Without(a, empty), a);
  EXPECT_TRUE(Without(empty, a).empty());
  EXPECT_FALSE(Intersects(empty, a));
  EXPECT_TRUE(IntersectAll({}).empty());
  EXPECT_TRUE(MergeAll({}).empty());
}

// Compares every operation with std::set algorithms on random lists of very
// different sizes, so both the linear and the galloping paths run.
TEST(PostingsTest, MatchesReferenceOnRandomLists) {
  std::mt19937_64 rng(42);
  const size_t sizes[] = {0, 1, 2, 10, 100, 5000};
  for (uint64_t universe : {uint64_t{64}, uint64_t{20000}, uint64_t{1} << 40}) {
    for (size_t na : sizes) {
      for (size_t nb : sizes) {
        if (na > universe || nb > universe) continue;
        Postings a = RandomList(rng, na, universe);
        Postings b = RandomList(rng, nb, universe);
        Postings inter = RefIntersect(a, b);
        EXPECT_EQ(Intersect(a, b), inter) << na << " " << nb;
        EXPECT_EQ(Intersects(a, b), !inter.empty());
        Postings uni;
        std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(uni));
        EXPECT_EQ(Merge(a, b), uni);
        Postings diff;
        std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(diff));
        EXPECT_EQ(Without(a, b), diff);
      }
    }
  }
}

TEST(PostingsTest, ManyListsAndDenseUnion) {
  std::mt19937_64 rng(7);
  for (size_t k : {1, 2, 3, 17}) {
    std::vector<Postings> lists;
    for (size_t i = 0; i < k; ++i) lists.push_back(RandomList(rng, 50 + 37 * i, 3000));
    std::vector<std::span<const uint64_t>> spans(lists.begin(), lists.end());
    std::set<uint64_t> uni;
    Postings inter = lists[0];
    DenseUnion dense(3000);
    for (const auto& l : lists) {
      uni.insert(l.begin(), l.end());
      inter = RefIntersect(inter, l);
      dense.Add(l);
    }
    EXPECT_EQ(MergeAll(spans), Postings(uni.begin(), uni.end()));
    EXPECT_EQ(dense.Take(), Postings(uni.begin(), uni.end()));
    EXPECT_EQ(IntersectAll(spans), inter);
  }
  DenseUnion d(10);
  d.Add(Postings{3, 9, 10, 11});  // 10 and 11 are outside the universe
  EXPECT_EQ(d.Take(), (Postings{3, 9}));
}

}  // namespace
}  // namespace gpumon::tsdb::index
