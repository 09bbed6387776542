// One POST of encoded alerts to one Alertmanager.
//
// Contract: PostAlerts sends `body` as application/json to `url`
// (http or https) with the config's client settings: basic auth (password
// or password_file), Authorization "<type> <credentials>" (credentials or
// credentials_file; files are read on every call, surrounding whitespace
// trimmed, so rotated secrets apply without a reload), TLS CA file, client
// certificate and key, insecure_skip_verify, follow_redirects. Connect,
// read and write are each bounded by timeout_ms. Any 2xx answer is
// success; anything else is an error naming the URL and the status or the
// transport failure.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"
#include "scrape/config.h"

namespace gpumon::notifier {

Status PostAlerts(const std::string& url, const scrape::HttpClientConfig& http, int64_t timeout_ms,
                  const std::string& body);

}  // namespace gpumon::notifier
