// Fetching a JSON document over HTTP(S) for the discovery mechanisms that
// poll an API (http, consul, kubernetes).
//
// Contract: one GET through scrape::HttpFetchWith (so the job's TLS and
// authentication settings apply; any status but 200 is an error worded
// like Prometheus's), bounded by timeout_ms; with require_json_type the
// Content-Type must be application/json (optionally with charset utf-8),
// as http_sd demands. The body must parse as JSON; errors name the URL.
#pragma once

#include <rapidjson/document.h>

#include <cstdint>
#include <string>

#include "common/status.h"
#include "scrape/config.h"

namespace gpumon::scrape::discovery {

Status GetJson(const std::string& url, const HttpClientConfig& http, int64_t timeout_ms,
               bool require_json_type, rapidjson::Document* out);

// Percent-encodes a URL query or path component.
std::string QueryEscape(std::string_view s);

}  // namespace gpumon::scrape::discovery
