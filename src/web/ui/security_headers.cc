#include "web/ui/security_headers.h"

#include <algorithm>
#include <array>
#include <utility>

namespace gpumon::web::ui {

void SetUiSecurityHeaders(http::HttpResponse& res, std::span<const std::string> keep) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kHeaders{{
      {"Content-Security-Policy", kContentSecurityPolicy},
      {"X-Content-Type-Options", "nosniff"},
      {"X-Frame-Options", "DENY"},
      {"Referrer-Policy", "same-origin"},
  }};
  for (const auto& header : kHeaders) {
    const std::string_view name = header.first;
    const bool configured = std::any_of(keep.begin(), keep.end(), [name](const std::string& k) {
      return http::EqualsIgnoreCase(k, name);
    });
    if (!configured) res.SetHeader(std::string(name), std::string(header.second));
  }
}

}  // namespace gpumon::web::ui
