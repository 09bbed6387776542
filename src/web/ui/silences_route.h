// GET /api/gpumon/v1/silences: the Alertmanager silences overlapping a time
// range, for the GPU page's silenced windows.
//
// Contract:
// - Parameters start and end (RFC 3339 or Unix seconds, as the Prometheus
//   API's times; each optional, the unbounded past / future by default;
//   end before start is an error). A silence is listed when
//   startsAt < end and endsAt > start, i.e. it silenced some of the range
//   (expired silences count: they shade the past).
// - Answer, in the Prometheus API envelope:
//   {"status":"success","data":[{"id","matchers":[{"name","value",
//   "isRegex","isEqual"}],"startsAt","endsAt","comment","createdBy",
//   "status":{"state"}}],"warnings":[...]}, silences ordered by startsAt
//   then id; warnings (an Alertmanager that could not be asked, a silence
//   with an unreadable time) never turn the answer into an error.
// - `source` is called once per request; it is the cached
//   notifier::SilenceSource in the server.
#pragma once

#include <functional>

#include "http/router.h"
#include "notifier/silence_source.h"

namespace gpumon::web::ui {

inline constexpr const char* kSilencesPath = "/api/gpumon/v1/silences";

void RegisterSilencesRoute(http::Router& router, std::function<notifier::SilenceList()> source);

}  // namespace gpumon::web::ui
