#include "promql/promqltest/runner.h"

#include <gtest/gtest.h>

namespace gpumon::promql::promqltest {
namespace {

FileReport RunText(const std::string& text, RunnerOptions opts = {}) {
  return RunScript(ParseScript(text, "t.test"), opts);
}

const EvalReport& At(const FileReport& r, int line) {
  for (const EvalReport& e : r.evals) {
    if (e.line == line) return e;
  }
  static EvalReport none{-1, "", Outcome::kFail, "no report for that line"};
  ADD_FAILURE() << "no eval reported at line " << line;
  return none;
}

constexpr const char* kData = R"(load 1m
  up{job="a"} 1+1x10
  up{job="b"} 10 _ 30 stale
)";

TEST(RunnerTest, PassesMatchingAndFailsWrongExpectations) {
  FileReport r = RunText(std::string(kData) + R"(
eval instant at 2m up
  up{job="a"} 3
  up{job="b"} 30

eval instant at 2m up
  up{job="a"} 3
  up{job="b"} 31

eval instant at 2m up
  up{job="a"} 3

eval instant at 4m up{job="b"}

eval range from 0 to 3m step 1m up{job="b"}
  up{job="b"} 10 10 30 _
)");
  EXPECT_EQ(At(r, 5).outcome, Outcome::kPass) << At(r, 5).detail;
  EXPECT_EQ(At(r, 9).outcome, Outcome::kFail);
  EXPECT_NE(At(r, 9).detail.find("31"), std::string::npos) << At(r, 9).detail;
  EXPECT_EQ(At(r, 13).outcome, Outcome::kFail);                      // job="b" not expected
  EXPECT_EQ(At(r, 16).outcome, Outcome::kPass) << At(r, 16).detail;  // stale: empty
  EXPECT_EQ(At(r, 18).outcome, Outcome::kPass) << At(r, 18).detail;
  EXPECT_EQ(r.Count(Outcome::kPass), 3);
  EXPECT_EQ(r.Count(Outcome::kFail), 2);
}

TEST(RunnerTest, ScalarsStringsAndOrdering) {
  FileReport r = RunText(std::string(kData) + R"(
eval instant at 2m scalar(up{job="a"})
  3

eval instant at 2m scalar(up{job="a"})
  4

eval instant at 0 "hello"
  expect string "hello"

eval instant at 2m sort_desc(up)
  expect ordered
  up{job="b"} 30
  up{job="a"} 3

eval instant at 2m sort_desc(up)
  expect ordered
  up{job="a"} 3
  up{job="b"} 30
)");
  EXPECT_EQ(At(r, 5).outcome, Outcome::kPass) << At(r, 5).detail;
  EXPECT_EQ(At(r, 8).outcome, Outcome::kFail);
  EXPECT_EQ(At(r, 11).outcome, Outcome::kPass) << At(r, 11).detail;
  EXPECT_EQ(At(r, 14).outcome, Outcome::kPass) << At(r, 14).detail;
  EXPECT_EQ(At(r, 19).outcome, Outcome::kFail);
}

TEST(RunnerTest, ExpectedFailuresAndAnnotations) {
  FileReport r = RunText(std::string(kData) + R"(
eval instant at 2m up
  expect fail

eval instant at 2m label_replace(up, "job", "x", "", "")
  expect fail msg: vector cannot contain metrics with the same labelset

eval instant at 2m label_replace(up, "job", "x", "", "")
  expect fail msg: something else

eval instant at 2m quantile(2, up)
  expect warn
  {} +Inf

eval instant at 2m quantile(2, up)
  expect no_warn
  {} +Inf

eval instant at 2m quantile(0.5, up)
  expect warn
  {} 16.5
)");
  EXPECT_EQ(At(r, 5).outcome, Outcome::kFail);  // succeeded though failure expected
  EXPECT_EQ(At(r, 8).outcome, Outcome::kPass) << At(r, 8).detail;
  EXPECT_EQ(At(r, 11).outcome, Outcome::kFail);
  EXPECT_EQ(At(r, 14).outcome, Outcome::kPass) << At(r, 14).detail;
  EXPECT_EQ(At(r, 18).outcome, Outcome::kFail);
  EXPECT_EQ(At(r, 22).outcome, Outcome::kFail);  // no warning raised
}

TEST(RunnerTest, NativeHistogramsAreSkippedPrecisely) {
  FileReport r = RunText(R"(load 1m
  floats 1 2 3
  hist {{schema:0 sum:1 count:1}}x2

eval instant at 1m floats
  floats 2

eval instant at 1m hist
  hist {{schema:0 sum:1 count:1}}

eval instant at 1m count({__name__=~".+"})
  {} 2

eval instant at 1m floats
  floats {{schema:0 sum:1 count:1}}

clear
load_with_nhcb 1m
  lat_bucket{le="1"} 1 2
  lat_bucket{le="+Inf"} 2 4

eval instant at 1m lat_bucket{le="1"}
  lat_bucket{le="1"} 2

eval instant at 1m lat
  lat {{schema:-53 sum:0 count:4 custom_values:[1] buckets:[2 2]}}

eval instant at 1m histogram_count(lat)
  {} 4

clear
load 1m
  hist 1

eval instant at 1m hist
  hist 1
)");
  EXPECT_EQ(At(r, 5).outcome, Outcome::kPass) << At(r, 5).detail;
  EXPECT_EQ(At(r, 8).outcome, Outcome::kSkip);
  EXPECT_EQ(At(r, 11).outcome, Outcome::kSkip);  // regex selects hist too
  EXPECT_EQ(At(r, 14).outcome, Outcome::kSkip);  // histogram in expected output
  EXPECT_EQ(At(r, 22).outcome, Outcome::kPass) << At(r, 22).detail;
  EXPECT_EQ(At(r, 25).outcome, Outcome::kSkip);
  EXPECT_EQ(At(r, 28).outcome, Outcome::kSkip);
  EXPECT_EQ(At(r, 35).outcome, Outcome::kPass) << At(r, 35).detail;  // clear forgets
}

TEST(RunnerTest, ScriptErrorsCountAsFailuresAndFilterSelects) {
  std::string text = std::string(kData) + R"(
eval instant at 2m up{job="a"}
  up{job="a"} 3

nonsense here

eval instant at 2m up{job="b"}
  up{job="b"} 30
)";
  FileReport r = RunText(text);
  EXPECT_EQ(At(r, 8).outcome, Outcome::kFail);
  EXPECT_EQ(r.Count(Outcome::kPass), 2);

  RunnerOptions opts;
  opts.filter = "job=\"b\"";
  FileReport f = RunText(text, opts);
  EXPECT_EQ(f.Count(Outcome::kPass), 1);
  EXPECT_EQ(f.evals.size(), 2u);  // the selected eval plus the script error
  opts.filter = "t\\.test:5$";
  FileReport g = RunText(text, opts);
  EXPECT_EQ(g.Count(Outcome::kPass), 1);
  EXPECT_EQ(At(g, 5).outcome, Outcome::kPass);
}

TEST(RunnerTest, LaterLoadsAddToEarlierOnes) {
  FileReport r = RunText(R"(load 1m
  m 1 2

load 1m
  n 5

eval instant at 1m m + on() n
  {} 7
)");
  EXPECT_EQ(At(r, 7).outcome, Outcome::kPass) << At(r, 7).detail;
}

}  // namespace
}  // namespace gpumon::promql::promqltest
