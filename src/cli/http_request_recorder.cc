#include "cli/http_request_recorder.h"

#include <mutex>

namespace gpumon::cli {

std::string HandlerLabel(std::string_view route) {
  std::string out;
  out.reserve(route.size());
  int depth = 0;
  for (size_t i = 0; i < route.size(); ++i) {
    const char c = route[i];
    if (c == '\\' && i + 1 < route.size()) {  // an escaped character is literal
      if (depth == 0) out += route[i + 1];
      ++i;
    } else if (c == '(') {
      if (depth++ == 0) out += '*';
    } else if (c == ')' && depth > 0) {
      --depth;
    } else if (depth == 0) {
      out += c;
    }
  }
  return out;
}

void HttpRequestRecorder::Attach(selfmon::ServerMetrics* metrics) {
  std::unique_lock lock(mu_);
  metrics_ = metrics;
}

void HttpRequestRecorder::Record(std::string_view route, int status, double seconds) {
  std::shared_lock lock(mu_);
  if (metrics_ != nullptr) metrics_->RecordHttpRequest(HandlerLabel(route), status, seconds);
}

}  // namespace gpumon::cli
