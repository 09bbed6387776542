#include <gtest/gtest.h>

#include <cmath>

#include "promql/functions.h"
#include "test_util.h"

namespace gpumon::promql::testing {
namespace {

Status Exec(std::string_view fn, std::vector<Value> args, Vector& out) {
  return Invoke(fn, std::move(args), out);
}

Vector One(Labels l, double f = 1) { return Vector{Sample{std::move(l), 0, f}}; }

TEST(LabelReplace, ExpandsGroups) {
  Vector out;
  ASSERT_TRUE(
      Exec("label_replace",
           {One(Labels{{"__name__", "m"}, {"src", "source-value-10"}}), String{0, "dst"},
            String{0, "destination-value-$1"}, String{0, "src"}, String{0, "source-value-(.*)"}},
           out)
          .ok());
  ASSERT_EQ(out.size(), 1u);
  // The name stays.
  EXPECT_EQ(
      out[0].metric,
      (Labels{{"__name__", "m"}, {"dst", "destination-value-10"}, {"src", "source-value-10"}}));
}

TEST(LabelReplace, TemplateForms) {
  auto expand = [](const char* tmpl, const char* regex, const char* value) {
    Vector out;
    Status st = Exec("label_replace",
                     {One(Labels{{"src", value}}), String{0, "dst"}, String{0, tmpl},
                      String{0, "src"}, String{0, regex}},
                     out);
    EXPECT_TRUE(st.ok()) << st.message();
    return std::string(out.at(0).metric.Get("dst"));
  };
  EXPECT_EQ(expand("${1}x", "(a)(b)", "ab"), "ax");
  EXPECT_EQ(expand("$1x", "(a)(b)", "ab"), "");  // group "1x" does not exist
  EXPECT_EQ(expand("$2-$1", "(a)(b)", "ab"), "b-a");
  EXPECT_EQ(expand("$$1", "(a)", "a"), "$1");
  EXPECT_EQ(expand("${name}!", "(?P<name>a+)", "aaa"), "aaa!");
  EXPECT_EQ(expand("$", "a", "a"), "$");
  EXPECT_EQ(expand("x$9", "(a)", "a"), "x");
  // Anchored: a partial match does not count, so dst is not set.
  EXPECT_EQ(expand("y", "b", "abc"), "");
  // Dot matches newline.
  EXPECT_EQ(expand("$1", "(.*)", "a\nb"), "a\nb");
}

TEST(LabelReplace, EmptyReplacementDeletes) {
  Vector out;
  ASSERT_TRUE(Exec("label_replace",
                   {One(Labels{{"a", "x"}, {"b", "y"}}), String{0, "a"}, String{0, ""},
                    String{0, "b"}, String{0, ".*"}},
                   out)
                  .ok());
  EXPECT_EQ(out[0].metric, (Labels{{"b", "y"}}));
}

TEST(LabelReplace, Errors) {
  Vector out;
  Status st = Exec("label_replace",
                   {One(Labels{{"src", "a"}}), String{0, "dst"}, String{0, "v-$1"},
                    String{0, "src"}, String{0, "(.*"}},
                   out);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), "invalid regular expression in label_replace(): (.*");
  st = Exec("label_replace",
            {One(Labels{{"src", "a"}}), String{0, "\xff"}, String{0, ""}, String{0, "src"},
             String{0, "(.*)"}},
            out);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), "invalid destination label name in label_replace(): \xff");
  // Two samples end up with the same labels.
  Vector two{Sample{Labels{{"src", "a"}}, 0, 1}, Sample{Labels{{"src", "b"}}, 0, 2}};
  st = Exec("label_replace", {two, String{0, "src"}, String{0, ""}, String{0, ""}, String{0, ""}},
            out);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), "vector cannot contain metrics with the same labelset");
}

TEST(LabelJoin, Joins) {
  Vector out;
  ASSERT_TRUE(Exec("label_join",
                   {One(Labels{{"__name__", "m"}, {"src", "a"}, {"src1", "b"}}), String{0, "dst"},
                    String{0, ", "}, String{0, "src"}, String{0, "src1"}, String{0, "missing"}},
                   out)
                  .ok());
  EXPECT_EQ(out[0].metric.Get("dst"), "a, b, ");
  EXPECT_EQ(out[0].metric.Get("__name__"), "m");
  out.clear();
  // No source labels: dst is empty, so it is removed.
  ASSERT_TRUE(Exec("label_join",
                   {One(Labels{{"dst", "x"}, {"k", "v"}}), String{0, "dst"}, String{0, ","}}, out)
                  .ok());
  EXPECT_EQ(out[0].metric, (Labels{{"k", "v"}}));
}

TEST(Sort, ByValueNaNLast) {
  Vector in{Sample{Labels{{"i", "a"}}, 0, 3}, Sample{Labels{{"i", "b"}}, 0, NAN},
            Sample{Labels{{"i", "c"}}, 0, 1}, Sample{Labels{{"i", "d"}}, 0, 2}};
  Vector asc, desc;
  ASSERT_TRUE(Exec("sort", {in}, asc).ok());
  ASSERT_TRUE(Exec("sort_desc", {in}, desc).ok());
  ASSERT_EQ(asc.size(), 4u);
  EXPECT_EQ(asc[0].f, 1);
  EXPECT_EQ(asc[2].f, 3);
  EXPECT_TRUE(std::isnan(asc[3].f));
  EXPECT_EQ(desc[0].f, 3);
  EXPECT_EQ(desc[2].f, 1);
  EXPECT_TRUE(std::isnan(desc[3].f));
}

TEST(Sort, ByLabelNatural) {
  Vector in;
  for (const char* inst : {"10", "9", "a2", "a10", "a1"}) {
    in.push_back(Sample{Labels{{"inst", inst}}, 0, 0});
  }
  Vector out;
  ASSERT_TRUE(Exec("sort_by_label", {in, String{0, "inst"}}, out).ok());
  std::vector<std::string> got;
  for (const auto& s : out) got.emplace_back(s.metric.Get("inst"));
  EXPECT_EQ(got, (std::vector<std::string>{"9", "10", "a1", "a2", "a10"}));
  out.clear();
  ASSERT_TRUE(Exec("sort_by_label_desc", {in, String{0, "inst"}}, out).ok());
  got.clear();
  for (const auto& s : out) got.emplace_back(s.metric.Get("inst"));
  EXPECT_EQ(got, (std::vector<std::string>{"a10", "a2", "a1", "10", "9"}));
}

TEST(Sort, ByLabelTieBreaksOnAllLabels) {
  Vector in{Sample{Labels{{"g", "1"}, {"x", "b"}}, 0, 0},
            Sample{Labels{{"g", "1"}, {"x", "a"}}, 0, 0}};
  Vector out;
  ASSERT_TRUE(Exec("sort_by_label", {in, String{0, "g"}}, out).ok());
  EXPECT_EQ(out[0].metric.Get("x"), "a");
}

}  // namespace
}  // namespace gpumon::promql::testing
