#include "tsdb/head/series_directory.h"

#include <gtest/gtest.h>

#include <vector>

namespace gpumon::tsdb::head {
namespace {

// The directory only stores pointers; fake ones are never dereferenced.
Series* Fake(uintptr_t i) { return reinterpret_cast<Series*>(i * 16); }

TEST(SeriesDirectoryTest, SetGetClearAndRefOrder) {
  SeriesDirectory d;
  EXPECT_EQ(d.Get(1), nullptr);
  EXPECT_EQ(d.Get(0), nullptr);
  const std::vector<uint64_t> refs = {9000, 1, 4095, 4096, 70000};
  for (uint64_t r : refs) ASSERT_TRUE(d.Set(r, Fake(r)));
  for (uint64_t r : refs) EXPECT_EQ(d.Get(r), Fake(r));
  EXPECT_EQ(d.Get(2), nullptr);
  std::vector<Series*> seen;
  d.ForEach([&](Series* s) { seen.push_back(s); });
  EXPECT_EQ(seen, (std::vector<Series*>{Fake(1), Fake(4095), Fake(4096), Fake(9000), Fake(70000)}));
  d.Clear(4095);
  EXPECT_EQ(d.Get(4095), nullptr);
  EXPECT_FALSE(d.Set(0, Fake(1)));
  EXPECT_FALSE(d.Set(SeriesDirectory::kMaxRef + 1, Fake(1)));
  EXPECT_TRUE(d.Set(SeriesDirectory::kMaxRef, Fake(3)));
  EXPECT_EQ(d.Get(SeriesDirectory::kMaxRef), Fake(3));
}

TEST(SeriesDirectoryTest, FreeEmptyBlocksReleasesOnlyEmptyOnes) {
  SeriesDirectory d;
  for (uint64_t r = 1; r <= 3 * 4096; ++r) d.Set(r, Fake(r));
  const size_t full = d.MemoryBytes();
  for (uint64_t r = 4096; r < 2 * 4096; ++r) d.Clear(r);  // empties the second block
  d.Clear(5);                                             // first block keeps others
  d.FreeEmptyBlocks();
  EXPECT_LT(d.MemoryBytes(), full);
  EXPECT_EQ(d.Get(4096), nullptr);
  EXPECT_EQ(d.Get(6), Fake(6));
  EXPECT_EQ(d.Get(3 * 4096), Fake(3 * 4096));
  // A freed range can be filled again.
  ASSERT_TRUE(d.Set(5000, Fake(5000)));
  EXPECT_EQ(d.Get(5000), Fake(5000));
  size_t n = 0;
  d.ForEach([&](Series*) { ++n; });
  // Block 0 without ref 5, ref 5000, block 2, ref 12288 (block 3).
  EXPECT_EQ(n, (4095u - 1) + 1 + 4096 + 1);
}

}  // namespace
}  // namespace gpumon::tsdb::head
