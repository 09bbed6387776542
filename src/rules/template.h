// Alert templates: the subset of Go's text/template that Prometheus alert
// labels and annotations use, with Prometheus's template functions.
//
// Contract:
// - Parse accepts text with {{ ... }} actions ({{- and -}} trim spaces):
//   pipelines of commands joined by |; operands . .Field.chain $var
//   $var.field "string" `raw` numbers true false nil (pipe); variable
//   declarations ($x := pipe) and assignments ($x = pipe); if/else if/else,
//   with/else, range (over a label map, with optional $k, $v :=), end;
//   comments {{/* */}}. Predefined variables: $ (the data), $labels,
//   $externalLabels, $externalURL, $value; the data has the fields .Labels,
//   .ExternalLabels, .ExternalURL, .Value.
// - Functions: humanize, humanize1024, humanizeDuration,
//   humanizePercentage, humanizeTimestamp, printf, print, println,
//   toUpper, toLower, title, reReplaceAll, match, stripPort, safeHtml,
//   eq, ne, lt, le, gt, ge, and, or, not, len, index, urlquery.
//   Anything else (an unknown function, an undefined variable, define,
//   template, block, break, continue) is a parse error, so an unsupported
//   template fails when the rule file loads rather than at alert time.
// - Execute follows text/template's rules: a missing map key reads as "",
//   printing uses fmt.Sprint formatting (floats as %v), comparisons of
//   mismatched kinds (int vs float) are errors. Errors name the line.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/labels.h"
#include "common/status.h"

namespace gpumon::rules {

struct TemplateData {
  Labels labels;
  Labels external_labels;
  std::string external_url;
  double value = 0;
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
