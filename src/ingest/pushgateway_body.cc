#include "ingest/pushgateway_body.h"

#include "exposition/format.h"
#include "exposition/parser.h"
#include "remote/body_decompress.h"

namespace gpumon::ingest {
namespace {

std::string Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

std::string Lower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

}  // namespace

DecodedPushBody DecodePushBody(std::string_view content_type, std::string_view content_encoding,
                               std::string_view body, size_t max_decoded_bytes) {
  DecodedPushBody out;
  const std::string type = Lower(Trim(content_type));
  if (type.find("application/vnd.google.protobuf") != std::string::npos) {
    out.status = 415;
    out.message =
        "protobuf pushes are not supported by this agent; push the Prometheus text format "
        "(Content-Type: text/plain; version=0.0.4) or OpenMetrics text";
    return out;
  }
  const std::string encoding = Lower(Trim(content_encoding));
  std::string inflated;
  if (encoding == "gzip") {
    auto d = remote::DecompressBody("gzip", body, max_decoded_bytes);
    if (d.status != 200) {
      out.status = d.status;
      out.message = "push body: " + d.message;
      return out;
    }
    inflated = std::move(d.data);
    body = inflated;
  } else if (!encoding.empty() && encoding != "identity") {
    out.status = 415;
    out.message = "unsupported Content-Encoding \"" + encoding + "\" (use gzip or none)";
    return out;
  }
  const exposition::Format format = exposition::FormatFromContentType(content_type);
  auto parsed = exposition::ParseToFamilies(body, format);
  if (!parsed.ok()) {
    out.status = 400;
    out.message = std::string("push body (") + exposition::FormatName(format) +
                  "): " + parsed.status().message();
    return out;
  }
  for (const auto& f : *parsed) {
    for (const auto& s : f.samples) {
      if (s.timestamp_ms) {
        std::string series = f.name + "{";
        for (size_t i = 0; i < s.labels.size(); ++i) {
          if (i) series += ",";
          series += s.labels[i].name + "=\"" + s.labels[i].value + "\"";
        }
        out.status = 400;
        out.message = "pushed sample " + series +
                      "} has a timestamp; pushed metrics must not carry timestamps (the scrape "
                      "sets them, as with Pushgateway)";
        return out;
      }
    }
  }
  out.families = std::move(parsed).value();
  return out;
}

}  // namespace gpumon::ingest
