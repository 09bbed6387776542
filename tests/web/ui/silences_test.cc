// Silences for the UI: Alertmanager's JSON parsed (notifier/silence.h),
// every configured Alertmanager asked and the answers merged and cached
// (notifier/silence_source.h, with a fake HTTP GET), and the endpoint's
// range filter and envelope (web/ui/silences_route.h).
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include "notifier/silence.h"
#include "notifier/silence_source.h"
#include "web/ui/silences_route.h"

namespace gpumon {
namespace {

std::string SilenceJson(const std::string& id, const std::string& starts, const std::string& ends,
                        const std::string& state = "active") {
  return R"({"id":")" + id + R"(","matchers":[{"name":"gpu","value":"3","isRegex":false,)" +
         R"("isEqual":true},{"name":"alertname","value":"Gpu.*","isRegex":true}],)" +
         R"("startsAt":")" + starts + R"(","endsAt":")" + ends + R"(","updatedAt":")" + starts +
         R"(","comment":"maintenance","createdBy":"ops","status":{"state":")" + state + R"("}})";
}

TEST(ParseSilencesTest, ReadsAlertmanagerFields) {
  auto parsed = notifier::ParseSilences(
      "[" + SilenceJson("a1", "2026-01-01T00:00:00.000Z", "2026-01-01T02:00:00Z") + "]");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  ASSERT_EQ(parsed->size(), 1u);
  const notifier::Silence& s = (*parsed)[0];
  EXPECT_EQ(s.id, "a1");
  EXPECT_EQ(s.starts_at, "2026-01-01T00:00:00.000Z");
  EXPECT_EQ(s.ends_at, "2026-01-01T02:00:00Z");
  EXPECT_EQ(s.comment, "maintenance");
  EXPECT_EQ(s.created_by, "ops");
  EXPECT_EQ(s.state, "active");
  ASSERT_EQ(s.matchers.size(), 2u);
  EXPECT_EQ(s.matchers[0].name, "gpu");
  EXPECT_EQ(s.matchers[0].value, "3");
  EXPECT_FALSE(s.matchers[0].is_regex);
  EXPECT_TRUE(s.matchers[1].is_regex);
  EXPECT_TRUE(s.matchers[1].is_equal);  // absent: true, as before Alertmanager 0.22
}

TEST(ParseSilencesTest, RejectsWhatIsNotASilenceList) {
  EXPECT_FALSE(notifier::ParseSilences("{}").ok());
  EXPECT_FALSE(notifier::ParseSilences("not json").ok());
  EXPECT_FALSE(notifier::ParseSilences(R"([{"startsAt":"x","endsAt":"y"}])").ok());
  EXPECT_FALSE(notifier::ParseSilences(R"([{"id":"a"}])").ok());
  auto empty = notifier::ParseSilences("[]");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(SilencesUrlTest, FromTheAlertsUrl) {
  EXPECT_EQ(notifier::SilencesUrlFor("http://am:9093/api/v2/alerts"),
            "http://am:9093/api/v2/silences");
  EXPECT_EQ(notifier::SilencesUrlFor("https://h/prefix/api/v2/alerts"),
            "https://h/prefix/api/v2/silences");
  EXPECT_EQ(notifier::SilencesUrlFor("http://h/custom"), "");
}

// Alertmanagers answering from a map URL → body; others fail.
struct FakeAlertmanagers {
  std::mutex mu;
  std::map<std::string, std::string> bodies;
  std::map<std::string, int> calls;
  std::map<std::string, std::string> usernames;  // basic auth user seen per URL
  int64_t last_timeout_ms = 0;

  notifier::SilenceSource::Fetch Fetch() {
    return [this](const std::string& url, const scrape::HttpClientConfig& http,
                  int64_t timeout_ms) -> Result<std::string> {
      std::lock_guard<std::mutex> lock(mu);
      ++calls[url];
      usernames[url] = http.basic_auth_username;
      last_timeout_ms = timeout_ms;
      auto it = bodies.find(url);
      if (it == bodies.end()) return Status::Error("cannot connect");
      return it->second;
    };
  }
};

scrape::AlertmanagerConfig StaticAlertmanagers(std::vector<std::string> addresses) {
  scrape::AlertmanagerConfig am;
  scrape::TargetGroup g;
  for (auto& a : addresses) g.targets.push_back(std::move(a));
  am.static_configs.push_back(std::move(g));
  return am;
}

TEST(SilenceSourceTest, MergesEveryAlertmanagerAndWarnsAboutFailures) {
  FakeAlertmanagers fake;
  fake.bodies["http://am1:9093/api/v2/silences"] =
      "[" + SilenceJson("s1", "2026-01-01T00:00:00Z", "2026-01-01T01:00:00Z") + "," +
      SilenceJson("shared", "2026-01-01T00:00:00Z", "2026-01-01T01:00:00Z") + "]";
  fake.bodies["https://am2:9093/prefix/api/v2/silences"] =
      "[" + SilenceJson("shared", "2026-01-01T00:00:00Z", "2026-01-01T01:00:00Z") + "," +
      SilenceJson("s2", "2026-01-01T00:00:00Z", "2026-01-01T01:00:00Z") + "]";
  fake.bodies["http://bad:9093/api/v2/silences"] = "<html>";
  notifier::SilenceSource source(
      {.cache_ms = 60 * 1000, .timeout_ms = 2000, .fetch = fake.Fetch()});
  EXPECT_TRUE(source.List().silences.empty());  // nothing configured
  EXPECT_TRUE(source.List().warnings.empty());

  scrape::AlertingConfig alerting;
  alerting.alertmanagers.push_back(StaticAlertmanagers({"am1:9093", "down:9093", "bad:9093"}));
  scrape::AlertmanagerConfig second = StaticAlertmanagers({"am2:9093"});
  second.scheme = "https";
  second.path_prefix = "/prefix";
  second.timeout_ms = 500;
  second.http.basic_auth_username = "alice";
  alerting.alertmanagers.push_back(second);
  source.ApplyConfig(alerting);

  notifier::SilenceList list = source.List();
  std::vector<std::string> ids;
  for (const auto& s : list.silences) ids.push_back(s.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"s1", "shared", "s2"}));  // "shared" once
  ASSERT_EQ(list.warnings.size(), 2u);
  EXPECT_NE(list.warnings[0].find("http://down:9093/api/v2/silences"), std::string::npos)
      << list.warnings[0];
  EXPECT_NE(list.warnings[1].find("http://bad:9093/api/v2/silences"), std::string::npos)
      << list.warnings[1];
  EXPECT_EQ(fake.usernames["https://am2:9093/prefix/api/v2/silences"], "alice");
  EXPECT_EQ(fake.usernames["http://am1:9093/api/v2/silences"], "");

  // Cached: a second list asks nobody.
  const int calls = fake.calls["http://am1:9093/api/v2/silences"];
  EXPECT_EQ(source.List().silences.size(), 3u);
  EXPECT_EQ(fake.calls["http://am1:9093/api/v2/silences"], calls);
  // A new configuration drops the cache.
  source.ApplyConfig(alerting);
  source.List();
  EXPECT_EQ(fake.calls["http://am1:9093/api/v2/silences"], calls + 1);
}

TEST(SilenceSourceTest, TimeoutIsTheSmallerOfEntryAndSource) {
  FakeAlertmanagers fake;
  notifier::SilenceSource source({.cache_ms = 0, .timeout_ms = 2000, .fetch = fake.Fetch()});
  scrape::AlertingConfig alerting;
  alerting.alertmanagers.push_back(StaticAlertmanagers({"a:1"}));
  alerting.alertmanagers[0].timeout_ms = 10 * 1000;
  source.ApplyConfig(alerting);
  source.List();
  EXPECT_EQ(fake.last_timeout_ms, 2000);
  alerting.alertmanagers[0].timeout_ms = 700;
  source.ApplyConfig(alerting);
  source.List();
  EXPECT_EQ(fake.last_timeout_ms, 700);
}

TEST(SilenceSourceTest, ConcurrentCallersShareOneRefresh) {
  std::atomic<int> fetches{0};
  notifier::SilenceSource source({.cache_ms = 60 * 1000,
                                  .fetch = [&](const std::string&, const scrape::HttpClientConfig&,
                                               int64_t) -> Result<std::string> {
                                    ++fetches;
                                    std::this_thread::sleep_for(std::chrono::milliseconds(100));
                                    return std::string("[]");
                                  }});
  scrape::AlertingConfig alerting;
  alerting.alertmanagers.push_back(StaticAlertmanagers({"a:1"}));
  source.ApplyConfig(alerting);
  std::vector<std::thread> browsers;
  for (int i = 0; i < 8; ++i) browsers.emplace_back([&] { source.List(); });
  for (auto& t : browsers) t.join();
  EXPECT_EQ(fetches.load(), 1);
}

// ---------------------------------------------------------------- endpoint

struct Answer {
  int status;
  rapidjson::Document json;
};

Answer Get(const http::Router& router, const std::string& query) {
  http::HttpRequest req;
  req.method = "GET";
  req.path = web::ui::kSilencesPath;
  req.query = query;
  req.target = req.path + (query.empty() ? "" : "?" + query);
  http::Router::Match m = router.Find("GET", req.path);
  EXPECT_EQ(m.kind, http::Router::MatchKind::kFound);
  http::HttpResponse res;
  m.route->handler(req, res);
  std::string body = res.body;
  if (res.stream) {
    res.stream([&](const char* d, size_t n) {
      body.append(d, n);
      return true;
    });
  }
  Answer a{res.status, {}};
  a.json.Parse(body.c_str());
  EXPECT_FALSE(a.json.HasParseError()) << body;
  return a;
}

std::vector<std::string> Ids(const Answer& a) {
  std::vector<std::string> ids;
  for (const auto& s : a.json["data"].GetArray()) ids.push_back(s["id"].GetString());
  return ids;
}

class SilencesRouteTest : public ::testing::Test {
 protected:
  SilencesRouteTest() {
    // 2026-01-01T00:00:00Z is 1767225600.
    list_.silences =
        notifier::ParseSilences(
            "[" + SilenceJson("late", "2026-01-01T02:00:00Z", "2026-01-01T03:00:00Z", "pending") +
            "," +
            SilenceJson("early", "2026-01-01T00:00:00Z", "2026-01-01T01:00:00.500+00:00",
                        "expired") +
            "," + SilenceJson("broken", "yesterday", "2026-01-01T03:00:00Z") + "]")
            .value();
    list_.warnings = {"cannot list silences of Alertmanager \"http://down/api/v2/silences\""};
    web::ui::RegisterSilencesRoute(router_, [this] { return list_; });
  }
  notifier::SilenceList list_;
  http::Router router_;
};

TEST_F(SilencesRouteTest, ListsSilencesOverlappingTheRange) {
  Answer all = Get(router_, "");
  ASSERT_EQ(all.status, 200);
  EXPECT_STREQ(all.json["status"].GetString(), "success");
  EXPECT_EQ(Ids(all), (std::vector<std::string>{"early", "late"}));  // by startsAt
  // Unix seconds and RFC 3339 both work; the bounds are exclusive overlaps.
  EXPECT_EQ(Ids(Get(router_, "start=1767225600&end=1767229200")),
            (std::vector<std::string>{"early"}));
  EXPECT_EQ(Ids(Get(router_, "start=2026-01-01T01:00:00Z&end=2026-01-01T02:00:00Z")),
            (std::vector<std::string>{"early"}));  // early ends at 01:00:00.5
  EXPECT_EQ(Ids(Get(router_, "start=2026-01-01T01:00:01Z&end=2026-01-01T02:00:00Z")),
            (std::vector<std::string>{}));
  EXPECT_EQ(Ids(Get(router_, "start=2026-01-01T02:30:00Z")), (std::vector<std::string>{"late"}));
  EXPECT_EQ(Ids(Get(router_, "end=1767225600.001")), (std::vector<std::string>{"early"}));
}

TEST_F(SilencesRouteTest, CarriesTheAlertmanagerFieldsAndWarnings) {
  Answer a = Get(router_, "start=1767225600&end=1767229200");
  const auto& s = a.json["data"][0];
  EXPECT_STREQ(s["startsAt"].GetString(), "2026-01-01T00:00:00Z");
  EXPECT_STREQ(s["endsAt"].GetString(), "2026-01-01T01:00:00.500+00:00");
  EXPECT_STREQ(s["comment"].GetString(), "maintenance");
  EXPECT_STREQ(s["createdBy"].GetString(), "ops");
  EXPECT_STREQ(s["status"]["state"].GetString(), "expired");
  ASSERT_EQ(s["matchers"].Size(), 2u);
  EXPECT_STREQ(s["matchers"][0]["name"].GetString(), "gpu");
  EXPECT_STREQ(s["matchers"][0]["value"].GetString(), "3");
  EXPECT_FALSE(s["matchers"][0]["isRegex"].GetBool());
  EXPECT_TRUE(s["matchers"][1]["isRegex"].GetBool());
  EXPECT_TRUE(s["matchers"][1]["isEqual"].GetBool());
  ASSERT_TRUE(a.json.HasMember("warnings"));
  ASSERT_EQ(a.json["warnings"].Size(), 2u);
  EXPECT_NE(std::string(a.json["warnings"][0].GetString()).find("http://down"), std::string::npos);
  EXPECT_NE(std::string(a.json["warnings"][1].GetString()).find("broken"), std::string::npos);
}

TEST_F(SilencesRouteTest, BadParametersAreBadData) {
  for (const char* q : {"start=yesterday", "end=x", "start=1767229200&end=1767225600"}) {
    Answer a = Get(router_, q);
    EXPECT_EQ(a.status, 400) << q;
    EXPECT_STREQ(a.json["status"].GetString(), "error") << q;
    EXPECT_STREQ(a.json["errorType"].GetString(), "bad_data") << q;
  }
}

TEST(SilencesRouteEmptyTest, NoAlertmanagerIsAnEmptyList) {
  http::Router router;
  web::ui::RegisterSilencesRoute(router, [] { return notifier::SilenceList{}; });
  Answer a = Get(router, "");
  EXPECT_EQ(a.status, 200);
  ASSERT_TRUE(a.json["data"].IsArray());
  EXPECT_EQ(a.json["data"].Size(), 0u);
  EXPECT_FALSE(a.json.HasMember("warnings"));
}

}  // namespace
}  // namespace gpumon
