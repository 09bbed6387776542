// The rules and alerts endpoints of Prometheus's HTTP API over a
// RuleManager: GET /api/v1/rules and GET /api/v1/alerts.
//
// Contract (Prometheus web/api/v1 rules() and alerts()):
// - /api/v1/rules → {"groups":[{"name","file","rules":[...],"interval",
//   "limit","evaluationTime","lastEvaluation"}]}; alerting rules carry
//   state, name, query, duration, keepFiringFor, labels, annotations,
//   alerts, health, lastError (when set), evaluationTime, lastEvaluation,
//   type "alerting"; recording rules name, query, labels, health,
//   lastError, evaluationTime, lastEvaluation, type "recording".
//   Parameters: type=alert|record (else bad_data `invalid parameter
//   "type"`), rule_name[], rule_group[], file[], match[] (label matchers
//   against rule labels), exclude_alerts=true|false. Groups left without
//   rules by the filters are omitted.
// - /api/v1/alerts → {"alerts":[...]}: every pending or firing alert with
//   labels, annotations, state, activeAt, keepFiringSince (when set), and
//   value as Go's FormatFloat(v, 'e', -1).
// - Times are RFC 3339 with trailing fractional zeros trimmed; a rule never
//   evaluated reports "0001-01-01T00:00:00Z" like Go's zero time; durations
//   and intervals are seconds as JSON numbers in Go's float formatting.
#pragma once

#include <string>

#include "http/router.h"
#include "rules/manager.h"
#include "web/api/params.h"
#include "web/api/response.h"

namespace gpumon::rules {

web::api::ApiResponse RulesResponse(const RuleManager& manager, const web::api::Params& params);
web::api::ApiResponse AlertsResponse(const RuleManager& manager);

// Routes GET /api/v1/rules and GET /api/v1/alerts. The manager must
// outlive the server.
void RegisterRuleRoutes(http::Router& router, RuleManager& manager);

// Go's time.Time JSON (RFC 3339, nanosecond form, zeros trimmed, UTC).
std::string GoJsonTime(int64_t ms);
// Go's encoding/json rendering of a float64.
std::string GoJsonFloat(double v);

}  // namespace gpumon::rules
