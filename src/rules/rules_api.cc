#include "rules/rules_api.h"

#include <charconv>
#include <cmath>
#include <set>

#include "common/utc_time.h"
#include "promql/parser.h"
#include "rules/alerting_rule.h"
#include "rules/recording_rule.h"
#include "web/api/http_api.h"
#include "web/api/json_values.h"

namespace gpumon::rules {

namespace wa = web::api;

std::string GoJsonTime(int64_t ms) {
  if (ms == kNoTime) return "0001-01-01T00:00:00Z";
  return FormatUtcMs(ms, "%Y-%m-%dT%H:%M:%S") + "Z";
}

std::string GoJsonFloat(double v) {
  if (!std::isfinite(v)) return "0";  // Go refuses these; never produced here
  if (v == 0) return "0";
  char buf[64];
  double a = std::fabs(v);
  if (a < 1e-6 || a >= 1e21) {
    auto r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
    std::string s(buf, r.ptr);
    // Go writes e-07 as e-7.
    size_t e = s.find('e');
    if (e != std::string::npos && e + 3 < s.size() + 1 && s[e + 2] == '0' && s.size() == e + 4) {
      s.erase(e + 2, 1);
    }
    return s;
  }
  auto r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::fixed);
  return std::string(buf, r.ptr);
}

namespace {

// strconv.FormatFloat(v, 'e', -1, 64).
std::string GoExpFloat(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  return std::string(buf, r.ptr);
}

bool Num(wa::JsonWriter& w, double v) { return w.Raw(GoJsonFloat(v), rapidjson::kNumberType); }

bool WriteAlert(wa::JsonWriter& w, const ActiveAlert& a) {
  w.StartObject();
  w.Key("labels");
  wa::WriteLabels(w, a.labels);
  w.Key("annotations");
  wa::WriteLabels(w, a.annotations);
  w.Key("state");
  w.Str(AlertStateName(a.state));
  w.Key("activeAt");
  w.Str(GoJsonTime(a.active_at_ms));
  if (a.keep_firing_since_ms != kNoTime) {
    w.Key("keepFiringSince");
    w.Str(GoJsonTime(a.keep_firing_since_ms));
  }
  w.Key("value");
  w.Str(GoExpFloat(a.value));
  return w.EndObject();
}

struct RuleFilter {
  bool alerts = true;
  bool records = true;
  bool exclude_alerts = false;
  std::set<std::string> names, groups, files;
  std::vector<std::vector<tsdb::Matcher>> matchers;

  bool Matches(const Labels& l) const {
    if (matchers.empty()) return true;
    for (const auto& set : matchers) {
      bool all = true;
      for (const auto& m : set) all = all && m.Matches(l);
      if (all) return true;
    }
    return false;
  }
};

void WriteRule(wa::JsonWriter& w, const Rule& r, const RuleFilter& f) {
  RuleStatus st = r.status();
  w.StartObject();
  if (r.alerting()) {
    const auto& ar = static_cast<const AlertingRule&>(r);
    w.Key("state");
    w.Str(AlertStateName(ar.State()));
    w.Key("name");
    w.Str(r.name());
    w.Key("query");
    w.Str(r.query());
    w.Key("duration");
    Num(w, ar.hold_ms() / 1000.0);
    w.Key("keepFiringFor");
    Num(w, ar.keep_firing_for_ms() / 1000.0);
    w.Key("labels");
    wa::WriteLabels(w, r.labels());
    w.Key("annotations");
    wa::WriteLabels(w, ar.annotations());
    w.Key("alerts");
    if (f.exclude_alerts) {
      w.Null();
    } else {
      w.StartArray();
      for (const auto& a : ar.ActiveAlerts()) WriteAlert(w, a);
      w.EndArray();
    }
  } else {
    w.Key("name");
    w.Str(r.name());
    w.Key("query");
    w.Str(r.query());
    w.Key("labels");
    wa::WriteLabels(w, r.labels());
  }
  w.Key("health");
  w.Str(RuleHealthName(st.health));
  if (!st.last_error.empty()) {
    w.Key("lastError");
    w.Str(st.last_error);
  }
  w.Key("evaluationTime");
  Num(w, st.evaluation_seconds);
  w.Key("lastEvaluation");
  w.Str(GoJsonTime(st.last_evaluation_ms));
  w.Key("type");
  w.Str(r.alerting() ? "alerting" : "recording");
  w.EndObject();
}

std::set<std::string> SetOf(std::vector<std::string> v) { return {v.begin(), v.end()}; }

}  // namespace

wa::ApiResponse RulesResponse(const RuleManager& manager, const wa::Params& params) {
  RuleFilter f;
  std::string type = params.Get("type");
  for (auto& c : type) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (!type.empty() && type != "alert" && type != "record") {
    return wa::ApiResponse::Failure(
        wa::InvalidParam("type", "not supported value " + wa::GoQuote(type)));
  }
  f.alerts = type.empty() || type == "alert";
  f.records = type.empty() || type == "record";
  std::string ex = params.Get("exclude_alerts");
  for (auto& c : ex) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ex == "true" || ex == "1" || ex == "t") {
    f.exclude_alerts = true;
  } else if (!ex.empty() && ex != "false" && ex != "0" && ex != "f") {
    return wa::ApiResponse::Failure(wa::InvalidParam(
        "exclude_alerts", "error converting exclude_alerts: strconv.ParseBool: parsing " +
                              wa::GoQuote(ex) + ": invalid syntax"));
  }
  f.names = SetOf(params.GetAll("rule_name[]"));
  f.groups = SetOf(params.GetAll("rule_group[]"));
  f.files = SetOf(params.GetAll("file[]"));
  for (const auto& m : params.GetAll("match[]")) {
    auto ms = promql::ParseMetricSelector(m);
    if (!ms.ok()) {
      wa::ApiError e;
      e.kind = wa::ErrorKind::kBadData;
      e.message = ms.status().message();
      return wa::ApiResponse::Failure(e);
    }
    f.matchers.push_back(std::move(ms).value());
  }
  auto groups = manager.Groups();
  return wa::ApiResponse::Success([groups, f](wa::JsonWriter& w) {
    w.StartObject();
    w.Key("groups");
    w.StartArray();
    for (const auto& g : groups) {
      if (!f.groups.empty() && !f.groups.count(g->name())) continue;
      if (!f.files.empty() && !f.files.count(g->file())) continue;
      std::vector<const Rule*> rules;
      for (const auto& r : g->rules()) {
        if (!f.names.empty() && !f.names.count(r->name())) continue;
        if (r->alerting() ? !f.alerts : !f.records) continue;
        if (!f.Matches(r->labels())) continue;
        rules.push_back(r.get());
      }
      if (rules.empty()) continue;
      w.StartObject();
      w.Key("name");
      w.Str(g->name());
      w.Key("file");
      w.Str(g->file());
      w.Key("rules");
      w.StartArray();
      for (const Rule* r : rules) WriteRule(w, *r, f);
      w.EndArray();
      w.Key("interval");
      Num(w, g->interval_ms() / 1000.0);
      w.Key("limit");
      w.Int64(g->limit());
      w.Key("evaluationTime");
      Num(w, g->evaluation_seconds());
      w.Key("lastEvaluation");
      w.Str(GoJsonTime(g->last_evaluation_ms()));
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    return w.ok();
  });
}

wa::ApiResponse AlertsResponse(const RuleManager& manager) {
  auto groups = manager.Groups();
  return wa::ApiResponse::Success([groups](wa::JsonWriter& w) {
    w.StartObject();
    w.Key("alerts");
    w.StartArray();
    for (const auto& g : groups) {
      for (const auto& r : g->rules()) {
        if (!r->alerting()) continue;
        for (const auto& a : static_cast<const AlertingRule&>(*r).ActiveAlerts()) {
          WriteAlert(w, a);
        }
      }
    }
    w.EndArray();
    w.EndObject();
    return w.ok();
  });
}

void RegisterRuleRoutes(http::Router& router, RuleManager& manager) {
  router.Get("/api/v1/rules", [&manager](const http::HttpRequest& req, http::HttpResponse& res) {
    wa::Respond(req, res, RulesResponse(manager, wa::ParamsOf(req)));
  });
  router.Get("/api/v1/alerts", [&manager](const http::HttpRequest& req, http::HttpResponse& res) {
    wa::Respond(req, res, AlertsResponse(manager));
  });
}

}  // namespace gpumon::rules
