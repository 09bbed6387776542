// Pushgateway push paths: /metrics/job/<job>{/<label>/<value>} into the
// grouping labels of a push.
//
// Contract (Pushgateway's URL rules, github.com/prometheus/pushgateway):
// - The path starts with "/metrics/job/" (or "/metrics/job@base64/"); the
//   rest is pairs of segments, a label name then its value. Each segment is
//   percent-decoded; a name suffixed "@base64" takes its value as URL-safe
//   base64 (RFC 4648 §5; "=" padding optional, a lone "=" is the empty
//   value), the only way to send a value containing "/" or an empty value.
// - Errors (each naming the segment): a job that is empty, a label without a
//   value, an empty segment ("//" or a trailing "/"), an invalid label name
//   (not [a-zA-Z_][a-zA-Z0-9_]*, or starting with "__"), the same label name
//   twice, a malformed percent escape or base64 value, a value that is not
//   UTF-8 or contains a NUL byte.
#pragma once

#include <string>
#include <string_view>

#include "common/labels.h"
#include "common/status.h"

namespace gpumon::ingest {

inline constexpr std::string_view kPushPathPrefix = "/metrics/job";

// `path` is the raw request path (not percent-decoded).
Result<Labels> ParseGroupingPath(std::string_view path);

// Decodes URL-safe base64 (padding optional; also accepts "+" and "/").
// False on a character outside the alphabet or an impossible length.
bool DecodeBase64Url(std::string_view in, std::string* out);

// The path for a grouping (job first, other labels sorted, values that need
// it base64-encoded): the inverse of ParseGroupingPath, for tests and tools.
std::string GroupingPath(const Labels& grouping);

}  // namespace gpumon::ingest
