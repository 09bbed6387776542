// A scrape whose samples cannot be stored (the WAL write fails, e.g. a full
// disk) is a failed scrape: the target is down with the storage's error,
// and it comes back up once writes work again.
#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

#include "scrape/manager.h"
#include "scrape/scrape_loop.h"
#include "scrape/targets_json.h"
#include "tsdb/head/head.h"
#include "tsdb/matcher.h"

namespace gpumon::scrape {
namespace {

// A WAL that fails like a full disk while `full` is set.
class FullDiskSink : public tsdb::head::WalSink {
 public:
  bool full = false;
  Status LogSeries(std::span<const tsdb::head::RefSeries>) override { return Write(); }
  Status LogSamples(std::span<const tsdb::head::RefSample>) override { return Write(); }

 private:
  Status Write() const {
    if (!full) return Status::Ok();
    return Status::Error(std::string("wal: write failed on wal/00000000: ") +
                         std::strerror(ENOSPC));
  }
};

size_t StoredSamples(const tsdb::head::Head& head, const std::string& name) {
  auto q = head.Querier(0, 1'000'000);
  std::vector<tsdb::Matcher> m = {
      tsdb::Matcher::Make(tsdb::MatchType::kEqual, "__name__", name).value()};
  auto set = q->Select(m, {});
  size_t n = 0;
  while (set->Next()) {
    auto it = set->Iterator();
    while (it->Next()) ++n;
  }
  return n;
}

TEST(ScrapeStorageFailureTest, FailedCommitMarksTheTargetDownWithTheStorageError) {
  tsdb::head::Head head;
  head.health().set_recovery_hold(std::chrono::nanoseconds(0));  // recovery tested in tsdb/
  FullDiskSink sink;
  head.SetWalSink(&sink);
  Target target;
  target.labels = Labels{{"instance", "h:1"}, {"job", "j"}};
  target.url = "http://h:1/metrics";
  target.scrape_pool = "j";
  target.interval_ms = 1000;
  target.timeout_ms = 500;
  Fetcher fetch = [](const std::string&, int64_t, uint64_t) -> Result<FetchResult> {
    return FetchResult{"a 1\nb 2\n", "text/plain; version=0.0.4"};
  };
  ScrapeLoop loop(target, {}, HeadAppenderFactory([&head] { return head.Appender(); }), fetch);

  loop.ScrapeOnce(1000);
  ASSERT_EQ(loop.Status().health, Health::kUp);
  EXPECT_EQ(loop.Status().last_samples, 2u);

  sink.full = true;
  loop.ScrapeOnce(2000);
  TargetStatus st = loop.Status();
  EXPECT_EQ(st.health, Health::kDown);
  EXPECT_NE(st.last_error.find("storing the scrape failed"), std::string::npos) << st.last_error;
  EXPECT_NE(st.last_error.find("No space left on device"), std::string::npos) << st.last_error;
  EXPECT_EQ(st.scrape_failures_total, 1u);
  EXPECT_EQ(st.last_samples, 0u);
  EXPECT_EQ(st.samples_appended_total, 2u);
  EXPECT_EQ(StoredSamples(head, "a"), 1u);
  EXPECT_FALSE(head.health().writable());
  EXPECT_EQ(head.health().failures(tsdb::AppendFailure::kDiskFull), 7u);  // 2 samples + 5 report

  // The targets API shows it as Prometheus would.
  TargetSnapshot snap;
  snap.labels = target.labels;
  snap.scrape_pool = "j";
  snap.scrape_url = target.url;
  snap.health = st.health;
  snap.last_error = st.last_error;
  std::string json = TargetsJson({snap}, {}, {}, "", "");
  EXPECT_NE(json.find("\"health\":\"down\""), std::string::npos) << json;
  EXPECT_NE(json.find("No space left on device"), std::string::npos) << json;

  sink.full = false;
  loop.ScrapeOnce(3000);
  st = loop.Status();
  EXPECT_EQ(st.health, Health::kUp);
  EXPECT_EQ(st.last_error, "");
  EXPECT_EQ(StoredSamples(head, "a"), 2u);
  EXPECT_TRUE(head.health().writable());
}

}  // namespace
}  // namespace gpumon::scrape
