// Alert: one alert as the rule manager hands it to a notifier, with the
// fields Alertmanager's v2 API (postableAlert) needs.
//
// Contract: plain data, no behaviour. Times are Unix milliseconds.
// starts_at is when the alert started firing; ends_at is, for an active
// alert, the time until which it is valid unless resent (eval time +
// 4 * max(resend delay, group interval)), and for a resolved alert the
// time it resolved. Labels include alertname and the rule's labels;
// annotations are already expanded.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/labels.h"

namespace gpumon::rules {

struct Alert {
  Labels labels;
  Labels annotations;
  int64_t starts_at_ms = 0;
  int64_t ends_at_ms = 0;
  std::string generator_url;
};

// Called with the alerts due for (re)sending after a group evaluation.
using NotifyFunc = std::function<void(const std::vector<Alert>&)>;

}  // namespace gpumon::rules
