// The security headers of every response the web UI's routes give.
//
// Contract: SetUiSecurityHeaders(res, keep) sets
//   Content-Security-Policy: kContentSecurityPolicy (scripts, styles,
//     connections only from this origin, no inline code, no plugins, no
//     framing: a script injected into a page through data could not run),
//   X-Content-Type-Options: nosniff, X-Frame-Options: DENY,
//   Referrer-Policy: same-origin
// except those whose names are in `keep`: headers the operator configured
// in the web config file (its `http_server_config.headers`), which the
// server adds to every response and which must win over these defaults.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "http/response.h"

namespace gpumon::web::ui {

inline constexpr std::string_view kContentSecurityPolicy =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'";

void SetUiSecurityHeaders(http::HttpResponse& res, std::span<const std::string> keep = {});

}  // namespace gpumon::web::ui
