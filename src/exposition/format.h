// The two text exposition formats, and choosing between them from HTTP
// headers (Accept when serving, Content-Type when scraping).
#pragma once

#include <string_view>

namespace gpumon::exposition {

enum class Format {
  kText004,       // text/plain; version=0.0.4
  kOpenMetrics1,  // application/openmetrics-text; version=1.0.0
};

// Picks the parser for a scrape response's Content-Type header value.
// "application/openmetrics-text" (any version) selects OpenMetrics; anything
// else, including an empty or unknown value, falls back to text 0.0.4 as
// Prometheus does for plain-text responses.
Format FormatFromContentType(std::string_view content_type);

// The Content-Type header value a server sends for a format.
std::string_view ContentTypeOf(Format format);

// Chooses the format to serve from an HTTP Accept header: OpenMetrics 1.0
// when the client lists application/openmetrics-text (version 1.0.0 or
// unversioned) with a q at least that of text/plain, else text 0.0.4.
Format NegotiateFormat(std::string_view accept_header);

// "text-0.0.4" or "openmetrics-1.0", for messages and flags.
const char* FormatName(Format format);

}  // namespace gpumon::exposition
