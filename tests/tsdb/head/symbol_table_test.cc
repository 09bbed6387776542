#include "tsdb/head/symbol_table.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpumon::tsdb::head {
namespace {

TEST(SymbolTableTest, InternReturnsSameIdForSameString) {
  SymbolTable t;
  uint32_t a = t.Intern("gpu");
  uint32_t b = t.Intern("uuid");
  EXPECT_NE(a, b);
  EXPECT_EQ(t.Intern("gpu"), a);
  EXPECT_EQ(t.Get(a), "gpu");
  EXPECT_EQ(t.Get(b), "uuid");
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t.Find("gpu"), a);
  EXPECT_FALSE(t.Find("nope").has_value());
}

TEST(SymbolTableTest, ReleaseFreesAtZeroAndReusesIds) {
  SymbolTable t;
  uint32_t a = t.Intern("x");
  t.Intern("x");
  t.Release(a);
  EXPECT_TRUE(t.Find("x").has_value());  // one reference left
  t.Release(a);
  EXPECT_FALSE(t.Find("x").has_value());
  EXPECT_EQ(t.size(), 0u);
  uint32_t b = t.Intern("y");
  EXPECT_EQ(b, a);  // the freed id is reused
  EXPECT_EQ(t.Get(b), "y");
}

TEST(SymbolTableTest, ManySymbolsAcrossSegmentsStayAddressable) {
  SymbolTable t;
  std::vector<uint32_t> ids;
  for (int i = 0; i < 20000; ++i) ids.push_back(t.Intern("sym" + std::to_string(i)));
  // Addresses of earlier entries stay valid as segments are added.
  for (int i = 0; i < 20000; i += 997) EXPECT_EQ(t.Get(ids[i]), "sym" + std::to_string(i));
  EXPECT_EQ(t.size(), 20000u);
  EXPECT_GT(t.MemoryBytes(), 20000u * 8);
}

TEST(SymbolTableTest, EmptyStringIsASymbol) {
  SymbolTable t;
  uint32_t e = t.Intern("");
  EXPECT_EQ(t.Get(e), "");
  EXPECT_EQ(t.Find(""), e);
}

}  // namespace
}  // namespace gpumon::tsdb::head
