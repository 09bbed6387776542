#include "tsdb/head/mem_postings.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <vector>

namespace gpumon::tsdb::head {
namespace {

using List = std::vector<uint64_t>;

TEST(MemPostingsTest, AddKeepsListsSortedEvenOutOfOrder) {
  MemPostings p;
  // name 1: value 10 or 11; name 2: value 20.
  p.Add(5, std::vector<uint32_t>{1, 10, 2, 20});
  p.Add(3, std::vector<uint32_t>{1, 10});  // older ref, as WAL replay may deliver
  p.Add(7, std::vector<uint32_t>{1, 11, 2, 20});
  p.Add(7, std::vector<uint32_t>{1, 11});  // idempotent
  EXPECT_EQ(*p.Get(1, 10), (List{3, 5}));
  EXPECT_EQ(*p.Get(1, 11), (List{7}));
  EXPECT_EQ(*p.Get(2, 20), (List{5, 7}));
  EXPECT_EQ(p.All(), (List{3, 5, 7}));
  EXPECT_EQ(p.Get(3, 30), nullptr);
}

TEST(MemPostingsTest, RemoveFiltersAndDropsEmptyLists) {
  MemPostings p;
  p.Add(1, std::vector<uint32_t>{1, 10});
  p.Add(2, std::vector<uint32_t>{1, 10});
  p.Add(3, std::vector<uint32_t>{1, 11});
  std::vector<std::pair<uint32_t, uint32_t>> pairs = {{1, 10}, {1, 11}};
  auto emptied = p.Remove(std::vector<uint64_t>{2, 3}, pairs);
  EXPECT_EQ(*p.Get(1, 10), (List{1}));
  EXPECT_EQ(p.Get(1, 11), nullptr);
  ASSERT_EQ(emptied.size(), 1u);
  EXPECT_EQ(emptied[0], (std::pair<uint32_t, uint32_t>{1, 11}));
  EXPECT_EQ(p.All(), (List{1}));
  int values = 0;
  p.ForEachValue(1, [&](uint32_t, const List&) { ++values; });
  EXPECT_EQ(values, 1);
}

TEST(MemPostingsTest, RandomAddRemoveMatchesSetModel) {
  std::mt19937_64 rng(7);
  MemPostings p;
  std::set<uint64_t> model_all;
  std::map<uint32_t, std::set<uint64_t>> model;  // value of name 1 → refs
  std::map<uint64_t, uint32_t> value_of;
  for (uint64_t ref = 1; ref <= 2000; ++ref) {
    uint32_t v = static_cast<uint32_t>(rng() % 13);
    p.Add(ref, std::vector<uint32_t>{1, v});
    model[v].insert(ref);
    model_all.insert(ref);
    value_of[ref] = v;
  }
  std::vector<uint64_t> remove;
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  for (uint64_t ref = 1; ref <= 2000; ++ref) {
    if (rng() % 3 == 0) {
      remove.push_back(ref);
      pairs.emplace_back(1, value_of[ref]);
      model[value_of[ref]].erase(ref);
      model_all.erase(ref);
    }
  }
  p.Remove(remove, pairs);
  EXPECT_EQ(p.All(), List(model_all.begin(), model_all.end()));
  for (const auto& [v, refs] : model) {
    const List* got = p.Get(1, v);
    if (refs.empty()) {
      EXPECT_EQ(got, nullptr);
    } else {
      ASSERT_NE(got, nullptr);
      EXPECT_EQ(*got, List(refs.begin(), refs.end()));
    }
  }
  EXPECT_GT(p.MemoryBytes(), model_all.size() * sizeof(uint64_t));
}

}  // namespace
}  // namespace gpumon::tsdb::head
