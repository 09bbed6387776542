// Prometheus's template functions beyond Go's builtins and the humanizing
// and string functions: the query functions, and the link, host, duration,
// time and URL helpers, as Prometheus 2.42 has them (template/template.go);
// internal to the template engine (template*.cc).
//
// Contract (types as Go names them; errors read "error calling F: ..."):
// - query(q string) queryResult: runs q through TemplateData::query (an
//   alerting rule binds it to an instant query at its evaluation time,
//   through the rule's engine and storage); the result's samples in the
//   order the query returned them. A failing query fails the template with
//   the query's error; without a query function: "query not available".
// - first(queryResult) *sample: the first sample, or the error "first()
//   called on vector with no elements".
// - label(name string, *sample) string: the label's value ("" when
//   missing); value(*sample) float64; strvalue(*sample) string: the
//   sample's __value__ label, as Prometheus reads it. A nil sample fails
//   as Go's nil dereference does.
// - sortByLabel(name string, queryResult) queryResult: a stable sort by
//   the label's value (missing sorts as ""), done in place on the result it
//   was given, which it returns.
// - args(v ...) map[string]interface {}: {arg0: v0, arg1: v1, ...}.
// - graphLink(expr) / tableLink(expr): "/graph?g0.expr=<escaped>&g0.tab=0"
//   (resp. tab=1), the expression escaped by url.QueryEscape.
// - stripPort(hostport): the host of net.SplitHostPort, or hostport when it
//   does not split. stripDomain(hostport): an IP address unchanged,
//   otherwise the host up to its first dot, with ":port" kept when present.
// - parseDuration(s) float64: model.ParseDuration (units y w d h m s ms,
//   largest first; "0" alone allowed) in seconds; its errors
//   ("not a valid duration string: \"s\"", "empty duration string",
//   "duration out of range").
// - toTime(v) *time.Time: Unix seconds (number or numeric string) as a
//   time with model.Time's millisecond precision; NaN and Inf fail with
//   "value is NaN or Inf", overflow as floatToTime does.
// - externalURL() / pathPrefix(): TemplateData::function_external_url and
//   its path; without one they fail with "external URL not available"
//   (Prometheus fails there too in promtool test rules, which has none).
// - Arguments are checked as text/template checks a Go function's: count
//   ("wrong number of args"), then types ("wrong type for value; expected
//   T; got U"); nil passes as an empty result or a nil sample.
#pragma once

#include <string>
#include <string_view>

#include "rules/template.h"
#include "rules/template_value.h"

namespace gpumon::rules::template_internal {

// Whether `fn` is one of the functions above.
bool IsPrometheusFunction(std::string_view fn);

Result<Value> CallPrometheusFunction(const CallSite& call, const TemplateData& data);

// net.SplitHostPort; false (with Go's message in *err) when it fails.
bool SplitHostPort(const std::string& hostport, std::string* host, std::string* port,
                   std::string* err = nullptr);

}  // namespace gpumon::rules::template_internal
