#include "remote/queue/series_refs.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace gpumon::remote {
namespace {

TEST(SeriesRefsTest, EqualLabelsShareARefAndBareRefsResolve) {
  SeriesRefs refs;
  Labels a{{"__name__", "up"}, {"job", "a"}};
  Labels b{{"__name__", "up"}, {"job", "b"}};
  auto ra = refs.Resolve(0, a);
  auto rb = refs.Resolve(0, b);
  ASSERT_TRUE(ra && rb);
  EXPECT_NE(ra->ref, 0u);
  EXPECT_NE(ra->ref, rb->ref);
  EXPECT_EQ(refs.Resolve(0, a)->ref, ra->ref);
  auto bare = refs.Resolve(ra->ref, Labels());
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->labels, a);
  // A caller's ref that names other labels does not win over the labels.
  EXPECT_EQ(refs.Resolve(rb->ref, a)->ref, ra->ref);
  EXPECT_FALSE(refs.Resolve(ra->ref ^ (1u << 20), Labels()));
  EXPECT_EQ(refs.size(), 2u);
}

TEST(SeriesRefsTest, InnerRefIsRemembered) {
  SeriesRefs refs;
  Labels a{{"__name__", "x"}};
  auto r = refs.Resolve(0, a);
  EXPECT_EQ(r->inner_ref, 0u);
  refs.SetInner(r->ref, 77);
  EXPECT_EQ(refs.Resolve(r->ref, Labels())->inner_ref, 77u);
  EXPECT_EQ(refs.Resolve(0, a)->inner_ref, 77u);
}

TEST(SeriesRefsTest, SweepForgetsOnlyIdleSeries) {
  SeriesRefs refs;
  Labels busy{{"__name__", "busy"}};
  Labels idle{{"__name__", "idle"}};
  auto rb = refs.Resolve(0, busy);
  auto ri = refs.Resolve(0, idle);
  refs.Sweep();  // both were used since the (implicit) previous sweep
  EXPECT_EQ(refs.size(), 2u);
  ASSERT_TRUE(refs.Resolve(rb->ref, Labels()));
  refs.Sweep();
  EXPECT_EQ(refs.size(), 1u);
  EXPECT_TRUE(refs.Resolve(rb->ref, Labels()));
  EXPECT_FALSE(refs.Resolve(ri->ref, Labels()));
  auto again = refs.Resolve(0, idle);
  ASSERT_TRUE(again);
  EXPECT_NE(again->ref, ri->ref);  // never reused
}

TEST(SeriesRefsTest, ManySeriesGetDistinctRefs) {
  SeriesRefs refs;
  std::set<uint64_t> seen;
  for (int i = 0; i < 5000; ++i) {
    auto r = refs.Resolve(0, Labels{{"__name__", "m"}, {"i", std::to_string(i)}});
    ASSERT_TRUE(r);
    EXPECT_TRUE(seen.insert(r->ref).second);
  }
  for (int i = 0; i < 5000; i += 97) {
    auto r = refs.Resolve(0, Labels{{"__name__", "m"}, {"i", std::to_string(i)}});
    EXPECT_EQ(refs.Resolve(r->ref, Labels())->labels.Get("i"), std::to_string(i));
  }
}

}  // namespace
}  // namespace gpumon::remote
