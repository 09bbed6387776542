// Translating alert templates (Go text/template, as Prometheus uses them in
// alert labels and annotations) to another metric naming scheme.
//
// Contract:
// - Text outside {{ ... }} is kept, except that a source metric name (a
//   whole word) whose target is a plain rename (one series, same values and
//   labels) gets the target name: prose naming gpu_temperature_celsius
//   names DCGM_FI_DEV_GPU_TEMP.
// - In actions: `$labels.NAME` and `.Labels.NAME` get the label's target
//   name, as do the string arguments of `index $labels "NAME"`,
//   `index .Labels "NAME"` and `label "NAME"`.
// - Queries: in an action that calls `query`, the string argument of
//   `query` and the format string of `printf` (whose result is piped or
//   passed to `query`) are PromQL and go through promql::Rewrite; printf
//   verbs (%s, %v, %d, ... ; %% is a literal) are kept in place. The
//   rewritten query is written back in the literal's quoting (double quotes
//   inside a double-quoted literal become single quotes when the query has
//   none of its own).
// - A query that does not parse or rewrite, or a label without a target
//   equivalent, is an error naming it.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "promql/rewrite.h"

namespace gpumon::cli {

Result<std::string> RewriteTemplate(std::string_view text, const promql::RewriteMap& map);
// The renaming of metric names in plain text that RewriteTemplate applies
// outside actions (also for rendered text, such as expected annotations).
std::string RenameMetricsInText(std::string_view text, const promql::RewriteMap& map);

}  // namespace gpumon::cli
