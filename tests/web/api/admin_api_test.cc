// The TSDB admin endpoints over a real on-disk DB (blocks and head), wired
// as the server wires them: StorageBackend hooks to DB::Delete and
// DB::Snapshot. Also the routes, enabled and disabled, over HTTP.
#include "web/api/admin_api.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <regex>
#include <thread>

#include "test_util.h"
#include "tsdb/db/db.h"
#include "web/api/http_api.h"
#include "web/http_server.h"

namespace gpumon::web::api {
namespace {
namespace fs = std::filesystem;

using testing::Encode;
using testing::ParseJson;
using testing::Str;

constexpr int64_t kHour = 3600 * 1000;

tsdb::Matcher Eq(std::string n, std::string v) {
  return std::move(tsdb::Matcher::Make(tsdb::MatchType::kEqual, std::move(n), std::move(v)))
      .value();
}

// Samples per series label value "gpu" in a querier.
std::map<std::string, int> Count(tsdb::Querier& q) {
  std::map<std::string, int> n;
  std::vector<tsdb::Matcher> ms{Eq("__name__", "gpu_temp")};
  auto set = q.Select(ms);
  while (set->Next()) {
    auto it = set->Iterator();
    int c = 0;
    while (it->Next()) ++c;
    n[std::string(set->labels().Get("gpu"))] = c;
  }
  return n;
}

class AdminApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() /
            ("gpumon-admin-test-" + std::to_string(getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    fs::remove_all(dir_);
    tsdb::db::DbOptions o;
    o.maintain_interval_ms = 0;
    o.retention_ms = 0;
    o.downsample = false;
    o.wal.sync_policy = tsdb::wal::SyncPolicy::kNever;
    auto db = tsdb::db::DB::Open(dir_, o);
    ASSERT_TRUE(db.ok()) << db.status().message();
    db_ = std::move(db).value();
    // Two GPUs, a sample a minute for 6 hours: Maintain() persists the
    // older hours into blocks, the rest stays in the head.
    auto app = db_->Appender();
    for (int64_t t = 0; t < 6 * kHour; t += 60000) {
      for (int gpu = 0; gpu < 2; ++gpu) {
        Labels l{{"__name__", "gpu_temp"}, {"gpu", std::to_string(gpu)}};
        ASSERT_TRUE(app->Append(0, l, t, 40 + gpu).ok());
      }
    }
    ASSERT_TRUE(app->Commit().ok());
    ASSERT_TRUE(db_->Maintain().ok());
    ASSERT_FALSE(db_->blocks().empty());
    ASSERT_GT(db_->head().NumSeries(), 0u);

    backend_ = std::make_unique<StorageBackend>(
        [this](int64_t mint, int64_t maxt) { return db_->NewQuerier(mint, maxt); }, engine_,
        nullptr);
    AdminHooks hooks;
    hooks.delete_series = [this](std::span<const tsdb::Matcher> ms, int64_t mint, int64_t maxt) {
      return db_->Delete(ms, mint, maxt);
    };
    hooks.snapshot = [this](const std::string& dir, bool with_head) {
      return db_->Snapshot(dir, with_head);
    };
    hooks.data_dir = dir_;
    backend_->SetAdminHooks(std::move(hooks));
    admin_ = std::make_unique<AdminApi>(*backend_);
  }
  void TearDown() override {
    admin_.reset();
    backend_.reset();
    db_.reset();
    fs::remove_all(dir_);
  }

  static Params P(std::initializer_list<std::pair<std::string, std::string>> kv) {
    Params p;
    for (const auto& [k, v] : kv) p.Add(k, v);
    return p;
  }

  std::string dir_;
  std::unique_ptr<tsdb::db::DB> db_;
  promql::Engine engine_;
  std::unique_ptr<StorageBackend> backend_;
  std::unique_ptr<AdminApi> admin_;
};

TEST_F(AdminApiTest, DeleteSeriesInRange) {
  const int per_series = 6 * 60;
  {
    auto q = db_->NewQuerier(0, 6 * kHour);
    EXPECT_EQ(Count(*q), (std::map<std::string, int>{{"0", per_series}, {"1", per_series}}));
  }
  // gpu 0 from 1h to 5h (inclusive, in seconds): spans blocks and head.
  auto r = admin_->DeleteSeries(
      P({{"match[]", "gpu_temp{gpu=\"0\"}"}, {"start", "3600"}, {"end", "18000"}}));
  ASSERT_TRUE(r.ok()) << r.error->message;
  EXPECT_EQ(r.HttpStatus(), 204);
  auto q = db_->NewQuerier(0, 6 * kHour);
  EXPECT_EQ(Count(*q), (std::map<std::string, int>{{"0", per_series - 241}, {"1", per_series}}));

  // Without start/end: all time.
  r = admin_->DeleteSeries(P({{"match[]", "gpu_temp{gpu=\"1\"}"}}));
  EXPECT_EQ(r.HttpStatus(), 204);
  q = db_->NewQuerier(0, 6 * kHour);
  EXPECT_EQ(Count(*q), (std::map<std::string, int>{{"0", per_series - 241}}));
}

TEST_F(AdminApiTest, DeleteSeriesBadRequests) {
  auto r = admin_->DeleteSeries(P({}));
  EXPECT_EQ(r.HttpStatus(), 400);
  EXPECT_EQ(r.error->message, "no match[] parameter provided");
  r = admin_->DeleteSeries(P({{"match[]", "gpu_temp{"}}));
  EXPECT_EQ(r.HttpStatus(), 400);
  EXPECT_EQ(r.error->message.rfind("invalid parameter \"match[]\": ", 0), 0u) << r.error->message;
  r = admin_->DeleteSeries(P({{"match[]", "gpu_temp"}, {"start", "x"}}));
  EXPECT_EQ(r.HttpStatus(), 400);
  EXPECT_EQ(r.error->message.rfind("invalid parameter \"start\": ", 0), 0u) << r.error->message;
  // Nothing was deleted by the failed requests.
  auto q = db_->NewQuerier(0, 6 * kHour);
  EXPECT_EQ(Count(*q).at("0"), 6 * 60);
}

TEST_F(AdminApiTest, SnapshotWithAndWithoutHead) {
  auto r = admin_->Snapshot(P({}));
  ASSERT_TRUE(r.ok()) << r.error->message;
  auto d = Encode(r);
  std::string name = Str(d["data"]["name"]);
  EXPECT_TRUE(std::regex_match(name, std::regex(R"(\d{8}T\d{6}Z-[0-9a-f]{16})"))) << name;
  const fs::path snap = fs::path(dir_) / "snapshots" / name;
  ASSERT_TRUE(fs::is_directory(snap));

  // Block files are hard links of the live ones.
  const auto live = db_->blocks().front();
  struct stat a {
  }, b{};
  ASSERT_EQ(stat((fs::path(live->dir()) / "index").c_str(), &a), 0);
  ASSERT_EQ(stat((snap / fs::path(live->dir()).filename() / "index").c_str(), &b), 0);
  EXPECT_EQ(a.st_ino, b.st_ino);

  std::map<std::string, int> full;
  {
    auto q = db_->NewQuerier(0, 6 * kHour);
    full = Count(*q);
  }
  {
    // The snapshot opens as a database holding everything.
    tsdb::db::DbOptions o;
    o.maintain_interval_ms = 0;
    o.retention_ms = 0;
    auto copy = tsdb::db::DB::Open(snap.string(), o);
    ASSERT_TRUE(copy.ok()) << copy.status().message();
    auto q = (*copy)->NewQuerier(0, 6 * kHour);
    EXPECT_EQ(Count(*q), full);
  }

  r = admin_->Snapshot(P({{"skip_head", "true"}}));
  ASSERT_TRUE(r.ok()) << r.error->message;
  std::string name2 = Str(Encode(r)["data"]["name"]);
  EXPECT_NE(name2, name);
  tsdb::db::DbOptions o;
  o.maintain_interval_ms = 0;
  o.retention_ms = 0;
  auto copy = tsdb::db::DB::Open((fs::path(dir_) / "snapshots" / name2).string(), o);
  ASSERT_TRUE(copy.ok()) << copy.status().message();
  auto q = (*copy)->NewQuerier(0, 6 * kHour);
  auto blocks_only = Count(*q);
  // Only what the live blocks hold: less than everything, but not nothing.
  int64_t block_max = 0;
  for (const auto& blk : db_->blocks()) block_max = std::max(block_max, blk->meta().max_time);
  EXPECT_EQ(blocks_only.at("0"), static_cast<int>(block_max / 60000));
  EXPECT_LT(blocks_only.at("0"), full.at("0"));

  r = admin_->Snapshot(P({{"skip_head", "maybe"}}));
  EXPECT_EQ(r.HttpStatus(), 400);
  EXPECT_EQ(r.error->message,
            "invalid parameter \"skip_head\": unable to parse boolean: strconv.ParseBool: parsing "
            "\"maybe\": invalid syntax");
}

TEST_F(AdminApiTest, UnwiredOperationIsInternalError) {
  auto r = admin_->CleanTombstones(P({}));
  EXPECT_EQ(r.HttpStatus(), 500);
  EXPECT_EQ(Str(Encode(r)["errorType"]), "internal");
}

class AdminRoutesTest : public AdminApiTest, public ::testing::WithParamInterface<bool> {};

TEST_P(AdminRoutesTest, EnabledOrDisabled) {
  const bool enabled = GetParam();
  QueryApi query(*backend_, [] { return 6 * kHour; });
  SeriesApi series(*backend_);
  StatusApi status(*backend_, testing::Info("3.0.0"), [] { return int64_t{0}; });
  HttpServer server(HttpServerOptions{.threads = 2});
  ApiHandlers h{.query = &query, .series = &series, .status = &status, .ready = {}};
  h.admin = admin_.get();
  h.enable_admin = enabled;
  RegisterApiRoutes(server.router(), h);
  ASSERT_TRUE(server.Bind("127.0.0.1:0").ok());
  std::thread th([&] { (void)server.Run(); });

  httplib::Client c("127.0.0.1", server.port());
  auto r = c.Put("/api/v1/admin/tsdb/delete_series?match[]=gpu_temp", "", "text/plain");
  ASSERT_TRUE(r);
  auto s =
      c.Post("/api/v1/admin/tsdb/snapshot", "skip_head=true", "application/x-www-form-urlencoded");
  ASSERT_TRUE(s);
  auto t = c.Post("/api/v1/admin/tsdb/clean_tombstones", "", "text/plain");
  ASSERT_TRUE(t);
  server.Stop();
  th.join();

  if (!enabled) {
    for (const auto* res : {&r.value(), &s.value(), &t.value()}) {
      EXPECT_EQ(res->status, 503);
      auto d = ParseJson(res->body);
      EXPECT_EQ(Str(d["status"]), "error");
      EXPECT_EQ(Str(d["errorType"]), "unavailable");
      EXPECT_EQ(Str(d["error"]), "admin APIs disabled");
    }
    auto q = db_->NewQuerier(0, 6 * kHour);
    EXPECT_EQ(Count(*q).size(), 2u);
    EXPECT_FALSE(fs::exists(fs::path(dir_) / "snapshots"));
  } else {
    EXPECT_EQ(r->status, 204);
    EXPECT_EQ(s->status, 200);
    EXPECT_EQ(Str(ParseJson(s->body)["status"]), "success");
    EXPECT_EQ(t->status, 500);  // no clean-tombstones hook wired here
    auto q = db_->NewQuerier(0, 6 * kHour);
    EXPECT_TRUE(Count(*q).empty());
  }
}

INSTANTIATE_TEST_SUITE_P(Admin, AdminRoutesTest, ::testing::Bool());

}  // namespace
}  // namespace gpumon::web::api
