// An alert as the notifier sends it to Alertmanager: Prometheus's
// notifier.Alert.
//
// Contract: labels identify the alert (alertname plus the rule's labels);
// annotations are free-form name/value pairs. Times are Unix milliseconds;
// ends_at_ms == 0 means "not set" (the alert is active until Alertmanager's
// resolve timeout), an ends_at in the past marks the alert resolved.
#pragma once

#include <cstdint>
#include <string>

#include "common/labels.h"

namespace gpumon::notifier {

struct Alert {
  Labels labels;
  Labels annotations;
  int64_t starts_at_ms = 0;
  int64_t ends_at_ms = 0;
  std::string generator_url;

  bool ResolvedAt(int64_t now_ms) const { return ends_at_ms != 0 && ends_at_ms <= now_ms; }
};

}  // namespace gpumon::notifier
