// Shared fixture for the rules tests: an in-memory head, an engine, and
// the dependencies groups need, with every notification recorded.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "promql/engine.h"
#include "rules/group.h"
#include "rules/manager.h"
#include "rules/rule_file.h"
#include "scrape/appender.h"
#include "tsdb/head/head.h"

namespace gpumon::rules::testing {

inline constexpr int64_t kMinute = 60 * 1000;

struct TestEnv {
  tsdb::head::Head head;
  promql::Engine engine;
  GroupDeps deps;
  std::vector<std::vector<Alert>> notifications;

  TestEnv() {
    deps.engine = &engine;
    deps.queryable = [this](int64_t mint, int64_t maxt) { return head.Querier(mint, maxt); };
    deps.appender = scrape::HeadAppenderFactory([this] { return head.Appender(); });
    deps.notify = [this](const std::vector<Alert>& a) { notifications.push_back(a); };
  }

  void Add(const Labels& l, int64_t t, double v) {
    auto app = head.Appender();
    ASSERT_TRUE(app->Append(0, l, t, v).ok());
    ASSERT_TRUE(app->Commit().ok());
  }

  std::shared_ptr<Group> MakeGroup(const std::string& yaml, bool should_restore = false,
                                   Labels external = {}) {
    auto spec = ParseRuleFile(yaml, "test.yml");
    EXPECT_TRUE(spec.ok()) << spec.status().message();
    if (!spec.ok()) return nullptr;
    auto groups =
        BuildGroups(spec.value(), kMinute, external, "http://gpumon:9090", should_restore, &deps);
    EXPECT_TRUE(groups.ok()) << groups.status().message();
    if (!groups.ok() || groups->empty()) return nullptr;
    return groups.value()[0];
  }

  // All samples of the series with exactly these labels.
  std::vector<tsdb::Sample> Samples(const Labels& l) {
    std::vector<tsdb::Matcher> ms;
    for (const auto& x : l)
      ms.push_back(tsdb::Matcher::Make(tsdb::MatchType::kEqual, x.name, x.value).value());
    auto q = head.Querier(tsdb::kMinTime, tsdb::kMaxTime);
    auto set = q->Select(ms);
    std::vector<tsdb::Sample> out;
    while (set->Next()) {
      if (!(set->labels() == l)) continue;
      auto it = set->Iterator();
      while (it->Next()) out.push_back(it->At());
    }
    return out;
  }

  // Labels of every series whose name is `name`.
  std::vector<Labels> Series(const std::string& name) {
    std::vector<tsdb::Matcher> ms{
        tsdb::Matcher::Make(tsdb::MatchType::kEqual, std::string(kMetricName), name).value()};
    auto q = head.Querier(tsdb::kMinTime, tsdb::kMaxTime);
    auto set = q->Select(ms);
    std::vector<Labels> out;
    while (set->Next()) out.push_back(set->labels());
    return out;
  }
};

}  // namespace gpumon::rules::testing
