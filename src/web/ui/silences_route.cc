#include "web/ui/silences_route.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "web/api/api_error.h"
#include "web/api/http_api.h"
#include "web/api/params.h"
#include "web/api/response.h"

namespace gpumon::web::ui {
namespace {

using api::ApiResponse;

struct Listed {
  int64_t starts_at_ms;
  notifier::Silence silence;
};

bool WriteSilence(api::JsonWriter& w, const notifier::Silence& s) {
  w.StartObject();
  w.Key("id");
  w.Str(s.id);
  w.Key("matchers");
  w.StartArray();
  for (const notifier::SilenceMatcher& m : s.matchers) {
    w.StartObject();
    w.Key("name");
    w.Str(m.name);
    w.Key("value");
    w.Str(m.value);
    w.Key("isRegex");
    w.Bool(m.is_regex);
    w.Key("isEqual");
    w.Bool(m.is_equal);
    w.EndObject();
  }
  w.EndArray();
  w.Key("startsAt");
  w.Str(s.starts_at);
  w.Key("endsAt");
  w.Str(s.ends_at);
  w.Key("comment");
  w.Str(s.comment);
  w.Key("createdBy");
  w.Str(s.created_by);
  w.Key("status");
  w.StartObject();
  w.Key("state");
  w.Str(s.state);
  w.EndObject();
  return w.EndObject();
}

ApiResponse Silences(const http::HttpRequest& req,
                     const std::function<notifier::SilenceList()>& source) {
  const api::Params params = api::ParamsOf(req);
  api::TimeRangeParams range;
  if (auto err = api::ParseTimeRangeParams(params, &range)) return ApiResponse::Failure(*err);
  if (range.end < range.start) {
    return ApiResponse::Failure(
        api::InvalidParam("end", "end timestamp must not be before start time"));
  }
  notifier::SilenceList all = source();
  auto listed = std::make_shared<std::vector<Listed>>();
  std::vector<std::string> warnings = std::move(all.warnings);
  for (notifier::Silence& s : all.silences) {
    auto from = api::ParseTime(s.starts_at);
    auto to = api::ParseTime(s.ends_at);
    if (!from.ok() || !to.ok()) {
      warnings.push_back("silence " + s.id + " has unreadable times (startsAt \"" + s.starts_at +
                         "\", endsAt \"" + s.ends_at + "\"); not listed");
      continue;
    }
    if (*from<range.end&& * to> range.start) listed->push_back({*from, std::move(s)});
  }
  std::sort(listed->begin(), listed->end(), [](const Listed& a, const Listed& b) {
    return a.starts_at_ms != b.starts_at_ms ? a.starts_at_ms < b.starts_at_ms
                                            : a.silence.id < b.silence.id;
  });
  ApiResponse r = ApiResponse::Success([listed](api::JsonWriter& w) {
    w.StartArray();
    for (const Listed& l : *listed) WriteSilence(w, l.silence);
    return w.EndArray();
  });
  r.warnings = std::move(warnings);
  return r;
}

}  // namespace

void RegisterSilencesRoute(http::Router& router, std::function<notifier::SilenceList()> source) {
  router.Get(kSilencesPath,
             [source = std::move(source)](const http::HttpRequest& req, http::HttpResponse& res) {
               api::Respond(req, res, Silences(req, source));
             });
}

}  // namespace gpumon::web::ui
