// The body of Alertmanager's POST /api/v2/alerts: a JSON array of
// PostableAlert objects, as Prometheus's notifier writes it.
//
// Contract: each alert becomes {"labels":{...},"annotations":{...},
// "startsAt":"<RFC 3339>","endsAt":"<RFC 3339>","generatorURL":"..."};
// times are UTC with millisecond precision ("2024-05-01T10:00:00.123Z");
// startsAt/endsAt are left out when zero and generatorURL when empty, which
// Alertmanager reads as "not set".
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "notifier/alert.h"

namespace gpumon::notifier {

std::string EncodeAlertsV2(std::span<const Alert> alerts);

// Unix milliseconds as RFC 3339 in UTC with milliseconds.
std::string FormatRfc3339Millis(int64_t ms);

}  // namespace gpumon::notifier
