// Rule unit-test files: the YAML format `promtool test rules` reads, as a
// model and a strict loader.
//
// Contract:
// - The accepted fields are promtool's (2.42): rule_files, evaluation_interval,
//   group_eval_order, tests[].{interval, input_series[].{series, values},
//   alert_rule_test[].{eval_time, alertname, exp_alerts[].{exp_labels,
//   exp_annotations}}, promql_expr_test[].{expr, eval_time,
//   exp_samples[].{labels, value}}, external_labels, external_url, name}.
// - Decoding follows gopkg.in/yaml.v2's UnmarshalStrict, so a file promtool
//   rejects is rejected here: unknown fields, duplicate keys and values of the
//   wrong YAML kind are errors; string fields take any scalar (null reads as
//   ""); durations are Prometheus durations ("0" alone is zero); `value` is a
//   YAML 1.1 number (plain integer or float, .inf, .nan; a quoted string or
//   a bool is an error); map values keep empty strings.
// - Nothing beyond decoding is checked here (series notation, PromQL and the
//   rule files are the runner's business, as in promtool).
// - Every error found is reported, one per line, each as
//   "<file>:<line>:<column>: field "<path>": <what>", with a path such as
//   tests[0].alert_rule_test[1].eval_time (indices from 0).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/labels.h"
#include "common/status.h"

namespace gpumon::rules {

struct UnitTestSeries {
  std::string series;  // `metric{label="value"}`
  std::string values;  // expanding notation: `1+2x10 _ stale`
  int line = 0;        // 1-based line of the item in its file
};

struct UnitTestAlert {
  Labels exp_labels;       // may hold empty values, as promtool's map does
  Labels exp_annotations;  // idem
};

struct AlertTestCase {
  int64_t eval_time_ms = 0;
  std::string alertname;
  std::vector<UnitTestAlert> exp_alerts;
  int line = 0;
};

struct UnitTestSample {
  std::string labels;  // series notation; "" means no labels
  double value = 0;
};

struct PromqlTestCase {
  std::string expr;
  int64_t eval_time_ms = 0;
  std::vector<UnitTestSample> exp_samples;
  int line = 0;
};

struct UnitTestGroup {
  int64_t interval_ms = 0;  // spacing of input_series points (0 as promtool: all at t=0)
  std::vector<UnitTestSeries> input_series;
  std::vector<AlertTestCase> alert_rule_test;
  std::vector<PromqlTestCase> promql_expr_test;
  Labels external_labels;
  std::string external_url;
  std::string name;
  int line = 0;
};

struct UnitTestFile {
  std::string path;
  std::vector<std::string> rule_files;  // as written (relative to the file's folder)
  int64_t evaluation_interval_ms = 0;   // 0: not set (promtool's default is 1m)
  std::vector<std::string> group_eval_order;
  std::vector<UnitTestGroup> tests;
};

Result<UnitTestFile> LoadUnitTestFile(const std::string& path);
// `path` names the source in errors and is kept in the result.
Result<UnitTestFile> ParseUnitTestFile(std::string_view yaml, const std::string& path);

}  // namespace gpumon::rules
