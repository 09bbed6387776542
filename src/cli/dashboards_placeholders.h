// Grafana template variables in PromQL: replacing them with placeholders the
// PromQL parser accepts, and putting them back after a rewrite.
//
// A Grafana query is PromQL with variables in it: `$name`, `${name}`,
// `${name:format}`, `[[name]]` and the built-in macros (`$__rate_interval`,
// `$__interval`, `$__range`, `$__range_s`, ...). Grafana substitutes them as
// text before the query reaches the data source, so the stored query is not
// PromQL until then.
//
// Contract:
// - Substitute() scans the query the way PromQL's lexer does for quotes: a
//   variable inside a string literal ("...", '...', `...`) is left as it is
//   (a label matcher value such as hostname=~"$node" is valid PromQL).
//   Outside strings, a variable right after `[`, after the `:` of a
//   subquery or after `offset` becomes a placeholder duration; anywhere else
//   it becomes a placeholder number. Each distinct variable text gets its own
//   placeholder, distinct from the others and from ordinary values
//   (hundreds of days; odd seconds).
// - Restore() replaces every printed placeholder (as promql::Print writes the
//   duration or the number) by the variable text it stands for. A rewrite may
//   copy a subexpression (the `or` of several variants), so a placeholder may
//   be restored several times; Restore() fails when a placeholder that was
//   substituted no longer appears at all.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace gpumon::cli {

class GrafanaPlaceholders {
 public:
  // `query` with its variables replaced by placeholders (PromQL text).
  Result<std::string> Substitute(std::string_view query);
  // `printed` (promql::Print of the rewritten query) with the variables back.
  Result<std::string> Restore(std::string_view printed) const;

 private:
  struct Placeholder {
    std::string variable;  // as written in the query, e.g. "$__rate_interval"
    std::string printed;   // how the placeholder reads after promql::Print
    bool duration = false;
  };
  std::string PlaceholderFor(const std::string& variable, bool duration);
  std::vector<Placeholder> placeholders_;
};

// The length of the Grafana variable reference starting at text[pos] (which
// is '$' or '['), or 0 when none starts there.
size_t GrafanaVariableLength(std::string_view text, size_t pos);

// The variable's name: "node" for "$node", "${node:regex}" and "[[node]]".
std::string GrafanaVariableName(std::string_view reference);

}  // namespace gpumon::cli
