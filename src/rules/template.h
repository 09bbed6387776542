// Alert templates: the subset of Go's text/template that Prometheus alert
// labels and annotations use, with Prometheus 2.42's template functions.
//
// Contract:
// - Parse accepts text with {{ ... }} actions ({{- and -}} trim spaces):
//   pipelines of commands joined by |; operands . .Field.chain $var
//   $var.field "string" `raw` numbers true false nil (pipe); variable
//   declarations ($x := pipe) and assignments ($x = pipe); if/else if/else,
//   with/else, range (over a label map, a query result or an args map,
//   with optional $k, $v := — for a query result $i, $sample :=), end;
//   comments {{/* */}}. Predefined variables: $ (the data), $labels,
//   $externalLabels, $externalURL, $value; the data has the fields .Labels,
//   .ExternalLabels, .ExternalURL, .Value.
// - Functions: humanize, humanize1024, humanizeDuration,
//   humanizePercentage, humanizeTimestamp, printf, print, println,
//   toUpper, toLower, title, reReplaceAll, match, safeHtml, eq, ne, lt, le,
//   gt, ge, and, or, not, len, index, urlquery; and (template_query.h)
//   query, first, label, value, strvalue, sortByLabel, args, graphLink,
//   tableLink, stripPort, stripDomain, parseDuration, toTime, externalURL,
//   pathPrefix. Anything else (an unknown function, one added after
//   Prometheus 2.42 such as now or toDuration, Go's html, js, call, slice,
//   an undefined variable, define, template, block, break, continue) is a
//   parse error, so an unsupported template fails when the rule file loads
//   rather than at alert time.
// - Values: besides strings, numbers, bools and label maps, `query` yields
//   a query result (a list of samples; len, index N, range, first,
//   sortByLabel), whose samples have .Labels (a label map with __name__)
//   and .Value (float64); `args` yields a map (.arg0, ...); toTime a time
//   (.Unix, .UnixMilli, printed as Go prints a time.Time).
// - Execute follows text/template's rules: a missing map key reads as "",
//   printing uses fmt.Sprint formatting (floats as %v), comparisons of
//   mismatched kinds (int vs float) are errors. Errors name the line.
// - `query` runs through TemplateData::query; without one it fails with
//   "query not available", so a template using it still parses (rule-file
//   validation) and only its execution needs a query function.
//   externalURL and pathPrefix read TemplateData::function_external_url and
//   fail without it.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/labels.h"
#include "common/status.h"

namespace gpumon::rules {

// One sample of a query result, as Prometheus's templates see it
// (template.sample): all its labels, __name__ included, and its value.
struct TemplateSample {
  Labels labels;
  double value = 0;
};

// Runs a PromQL query for the `query` function: the instant vector (a
// scalar as one sample without labels) or the query's error.
using TemplateQueryFunc = std::function<Result<std::vector<TemplateSample>>(const std::string&)>;

struct TemplateData {
  Labels labels;
  Labels external_labels;
  std::string external_url;  // .ExternalURL and $externalURL
  double value = 0;
  // Set by the alerting rule at evaluation time; empty: `query` fails.
  TemplateQueryFunc query;
  // The server's external URL for the externalURL and pathPrefix functions;
  // unset (as in promtool test rules): they fail.
  std::optional<std::string> function_external_url;
};

class Template {
 public:
  static Result<Template> Parse(std::string_view text);
  Result<std::string> Execute(const TemplateData& data) const;

  struct Node;

 private:
  std::shared_ptr<const Node> root_;
};

// Prometheus's humanizing functions, also used outside templates.
std::string Humanize(double v);
std::string Humanize1024(double v);
std::string HumanizeDuration(double seconds);
std::string HumanizePercentage(double ratio);
std::string HumanizeTimestamp(double unix_seconds);
// Go's fmt %v of a float64 (strconv 'g' with the shortest precision).
std::string FormatGoFloat(double v);

}  // namespace gpumon::rules
