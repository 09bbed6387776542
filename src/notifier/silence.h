// Silences as Alertmanager's API v2 lists them (GET /api/v2/silences),
// read for the web UI, which shades silenced windows on its charts.
//
// Contract:
// - ParseSilences reads a GettableSilences body: a JSON array of objects
//   with id, matchers [{name, value, isRegex, isEqual}], startsAt, endsAt,
//   comment, createdBy and status.state. isEqual defaults to true when
//   absent (Alertmanagers before 0.22 do not send it); comment and
//   createdBy to "". A body that is not such an array, or an entry without
//   id, startsAt or endsAt, is an error; other fields are ignored.
// - Times are kept as Alertmanager wrote them (RFC 3339); readers parse
//   them with their own time rules (the web API's ParseTime).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace gpumon::notifier {

struct SilenceMatcher {
  std::string name;
  std::string value;
  bool is_regex = false;
  bool is_equal = true;
};

struct Silence {
  std::string id;
  std::vector<SilenceMatcher> matchers;
  std::string starts_at;  // RFC 3339, as received
  std::string ends_at;
  std::string comment;
  std::string created_by;
  std::string state;  // "active", "pending" or "expired"
};

Result<std::vector<Silence>> ParseSilences(std::string_view json);

}  // namespace gpumon::notifier
