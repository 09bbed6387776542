// Relabeling semantics, cases following Prometheus's documentation of
// relabel_config.
#include "scrape/relabel.h"

#include <gtest/gtest.h>

namespace gpumon::scrape {
namespace {

RelabelConfig Rule(RelabelAction action, std::vector<std::string> sources, std::string regex,
                   std::string target = "", std::string replacement = "$1") {
  RelabelConfig r;
  r.action = action;
  r.source_labels = std::move(sources);
  r.regex = std::move(regex);
  r.target_label = std::move(target);
  r.replacement = std::move(replacement);
  return r;
}

std::optional<Labels> Apply(const Labels& in, std::vector<RelabelConfig> rules) {
  for (auto& r : rules) {
    Status s = r.Compile();
    EXPECT_TRUE(s.ok()) << s.message();
  }
  return Relabel(in, rules);
}

TEST(RelabelTest, ReplaceWithGroupsAndSeparator) {
  auto out = Apply({{"a", "foo"}, {"b", "bar"}},
                   {Rule(RelabelAction::kReplace, {"a", "b"}, "f(.*);(.*)r", "d", "ch${1}-$2")});
  ASSERT_TRUE(out);
  EXPECT_EQ(out->Get("d"), "choo-ba");
  EXPECT_EQ(out->Get("a"), "foo");
}

TEST(RelabelTest, ReplaceIsFullyAnchored) {
  // "o" alone does not match "foo": the regex must match the whole value.
  auto out = Apply({{"a", "foo"}}, {Rule(RelabelAction::kReplace, {"a"}, "o", "d", "x")});
  ASSERT_TRUE(out);
  EXPECT_FALSE(out->Has("d"));
}

TEST(RelabelTest, ReplaceNamedGroupAndTemplatedTarget) {
  auto out =
      Apply({{"a", "some-name-value"}},
            {Rule(RelabelAction::kReplace, {"a"}, "some-(?P<n>[^-]+)-(?P<v>.*)", "${n}", "${v}")});
  ASSERT_TRUE(out);
  EXPECT_EQ(out->Get("name"), "value");
}

TEST(RelabelTest, ReplaceEmptyResultDeletesTarget) {
  auto out = Apply({{"a", "foo"}, {"d", "old"}},
                   {Rule(RelabelAction::kReplace, {"missing"}, "(.*)", "d", "$1")});
  ASSERT_TRUE(out);
  EXPECT_FALSE(out->Has("d"));
}

TEST(RelabelTest, DollarOneFollowedByWordCharsIsANameLikeGo) {
  // Go's Expand reads "$1x" as the group named "1x", which does not exist.
  auto out = Apply({{"a", "foo"}}, {Rule(RelabelAction::kReplace, {"a"}, "(.*)", "d", "$1x-$$")});
  ASSERT_TRUE(out);
  EXPECT_EQ(out->Get("d"), "-$");
}

TEST(RelabelTest, KeepAndDrop) {
  Labels in{{"job", "node"}, {"env", "prod"}};
  EXPECT_TRUE(Apply(in, {Rule(RelabelAction::kKeep, {"env"}, "prod|stage")}));
  EXPECT_FALSE(Apply(in, {Rule(RelabelAction::kKeep, {"env"}, "stage")}));
  EXPECT_FALSE(Apply(in, {Rule(RelabelAction::kDrop, {"env"}, "pro.")}));
  EXPECT_TRUE(Apply(in, {Rule(RelabelAction::kDrop, {"env"}, "pro")}));
  // A missing source label reads as "": keep with the default regex keeps.
  EXPECT_TRUE(Apply(in, {Rule(RelabelAction::kKeep, {"nope"}, "(.*)")}));
}

TEST(RelabelTest, KeepEqualDropEqual) {
  Labels in{{"a", "1"}, {"b", "1"}, {"c", "2"}};
  auto eq = [](RelabelAction a, std::string src, std::string target) {
    RelabelConfig r;
    r.action = a;
    r.source_labels = {std::move(src)};
    r.target_label = std::move(target);
    return r;
  };
  EXPECT_TRUE(Apply(in, {eq(RelabelAction::kKeepEqual, "a", "b")}));
  EXPECT_FALSE(Apply(in, {eq(RelabelAction::kKeepEqual, "a", "c")}));
  EXPECT_FALSE(Apply(in, {eq(RelabelAction::kDropEqual, "a", "b")}));
  EXPECT_TRUE(Apply(in, {eq(RelabelAction::kDropEqual, "a", "c")}));
}

TEST(RelabelTest, HashModUsesMd5LastEightBytes) {
  RelabelConfig r;
  r.action = RelabelAction::kHashMod;
  r.source_labels = {"a"};
  r.target_label = "shard";
  r.modulus = 1000;
  auto out = Apply({{"a", "foo"}}, {r});
  ASSERT_TRUE(out);
  // md5("foo") = acbd18db4cc2f85cedef654fccc4a4d8; 0xedef654fccc4a4d8 % 1000.
  EXPECT_EQ(out->Get("shard"), "696");
}

TEST(RelabelTest, LabelMap) {
  RelabelConfig r;
  r.action = RelabelAction::kLabelMap;
  r.regex = "__meta_kubernetes_pod_label_(.+)";
  auto out = Apply({{"__meta_kubernetes_pod_label_app", "web"}, {"x", "y"}}, {r});
  ASSERT_TRUE(out);
  EXPECT_EQ(out->Get("app"), "web");
  EXPECT_EQ(out->Get("__meta_kubernetes_pod_label_app"), "web");  // labelmap copies
}

TEST(RelabelTest, LabelDropAndLabelKeep) {
  Labels in{{"a", "1"}, {"b", "2"}, {"ab", "3"}};
  RelabelConfig drop;
  drop.action = RelabelAction::kLabelDrop;
  drop.regex = "a.*";
  auto out = Apply(in, {drop});
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, (Labels{{"b", "2"}}));
  RelabelConfig keep;
  keep.action = RelabelAction::kLabelKeep;
  keep.regex = "a";
  out = Apply(in, {keep});
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, (Labels{{"a", "1"}}));
}

TEST(RelabelTest, LowercaseUppercase) {
  RelabelConfig lo;
  lo.action = RelabelAction::kLowercase;
  lo.source_labels = {"a", "b"};
  lo.target_label = "l";
  RelabelConfig up = lo;
  up.action = RelabelAction::kUppercase;
  up.target_label = "u";
  auto out = Apply({{"a", "FoO"}, {"b", "bAr"}}, {lo, up});
  ASSERT_TRUE(out);
  EXPECT_EQ(out->Get("l"), "foo;bar");
  EXPECT_EQ(out->Get("u"), "FOO;BAR");
}

TEST(RelabelTest, RulesApplyInOrder) {
  auto out = Apply({{"a", "x"}}, {Rule(RelabelAction::kReplace, {"a"}, "(.*)", "b", "$1-1"),
                                  Rule(RelabelAction::kReplace, {"b"}, "(.*)", "c", "$1-2")});
  ASSERT_TRUE(out);
  EXPECT_EQ(out->Get("c"), "x-1-2");
}

TEST(RelabelTest, Validation) {
  auto err = [](RelabelConfig r) { return r.Compile().message(); };
  RelabelConfig r;
  r.action = RelabelAction::kHashMod;
  r.target_label = "x";
  EXPECT_EQ(err(r), "relabel configuration for hashmod requires non-zero modulus");
  r = RelabelConfig();
  EXPECT_EQ(err(r), "relabel configuration for replace action requires 'target_label' value");
  r.target_label = "0bad";
  EXPECT_EQ(err(r), "\"0bad\" is invalid 'target_label' for replace action");
  r.target_label = "${1}ok";
  EXPECT_TRUE(r.Compile().ok());
  r = RelabelConfig();
  r.action = RelabelAction::kLowercase;
  r.target_label = "${1}";
  EXPECT_EQ(err(r), "\"${1}\" is invalid 'target_label' for lowercase action");
  r = RelabelConfig();
  r.action = RelabelAction::kLabelDrop;
  r.source_labels = {"a"};
  EXPECT_EQ(err(r), "labeldrop action requires only 'regex', and no other fields");
  r = RelabelConfig();
  r.action = RelabelAction::kKeepEqual;
  r.target_label = "a";
  r.regex = "x";
  EXPECT_EQ(err(r),
            "keepequal action requires only 'source_labels' and `target_label`, and no other "
            "fields");
  r = RelabelConfig();
  r.target_label = "a";
  r.regex = "(";
  EXPECT_NE(err(r).find("invalid regex \"(\""), std::string::npos);
}

}  // namespace
}  // namespace gpumon::scrape
