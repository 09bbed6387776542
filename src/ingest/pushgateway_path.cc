#include "ingest/pushgateway_path.h"

#include <vector>

#include "common/names.h"
#include "http/request.h"

namespace gpumon::ingest {
namespace {

int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '-' || c == '+') return 62;
  if (c == '_' || c == '/') return 63;
  return -1;
}

bool NeedsBase64(std::string_view v) {
  if (v.empty()) return true;
  for (char c : v) {
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '-' || c == '_' || c == '.';
    if (!plain) return true;
  }
  return false;
}

std::string EncodeBase64Url(std::string_view in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out.push_back(kAlphabet[(v >> s) & 63]);
  }
  if (in.size() - i == 1) {
    uint32_t v = uint8_t(in[i]) << 16;
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
  } else if (in.size() - i == 2) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8);
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(kAlphabet[(v >> 6) & 63]);
  }
  return out.empty() ? "=" : out;
}

}  // namespace

bool DecodeBase64Url(std::string_view in, std::string* out) {
  while (!in.empty() && in.back() == '=') in.remove_suffix(1);
  if (in.size() % 4 == 1) return false;
  out->clear();
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    int v = Base64Value(c);
    if (v < 0) return false;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out->push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return true;
}

Result<Labels> ParseGroupingPath(std::string_view path) {
  constexpr std::string_view kMetrics = "/metrics/";
  if (path.substr(0, kMetrics.size()) != kMetrics) {
    return Status::Error("push path must start with /metrics/job/<job>");
  }
  std::string_view rest = path.substr(kMetrics.size());
  std::vector<std::string_view> segments;
  while (true) {
    size_t slash = rest.find('/');
    segments.push_back(rest.substr(0, slash));
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
  if (segments[0] != "job" && segments[0] != "job@base64") {
    return Status::Error("push path must start with /metrics/job/<job>, not /metrics/" +
                         std::string(segments[0]));
  }
  if (segments.size() > 1 && segments.back().empty()) {
    return Status::Error(
        "the push path must not end in \"/\" (an empty label value is sent as "
        "<label>@base64/=)");
  }
  if (segments.size() % 2 != 0) {
    return Status::Error("label " + std::string(segments.back()) +
                         " in the push path has no value (paths are /metrics/job/<job>{/<label>/"
                         "<value>})");
  }
  std::vector<Label> labels;
  for (size_t i = 0; i < segments.size(); i += 2) {
    std::string name, value;
    if (segments[i].empty() || segments[i + 1].empty()) {
      return Status::Error(
          "empty segment in the push path after label " + std::string(segments[i]) +
          " (an empty label value is sent as <label>@base64/=; a trailing / is not allowed)");
    }
    if (!http::PercentDecode(segments[i], false, &name)) {
      return Status::Error("malformed percent escape in push path segment \"" +
                           std::string(segments[i]) + "\"");
    }
    bool base64 = false;
    constexpr std::string_view kB64 = "@base64";
    if (name.size() > kB64.size() && name.substr(name.size() - kB64.size()) == kB64) {
      name.resize(name.size() - kB64.size());
      base64 = true;
    }
    if (!IsValidLabelName(name) || name.substr(0, 2) == "__") {
      return Status::Error("invalid label name \"" + name +
                           "\" in the push path (want [a-zA-Z_][a-zA-Z0-9_]*, not starting "
                           "with __)");
    }
    if (base64) {
      std::string encoded;
      if (!http::PercentDecode(segments[i + 1], false, &encoded) ||
          !DecodeBase64Url(encoded, &value)) {
        return Status::Error("label " + name + ": invalid base64 value \"" +
                             std::string(segments[i + 1]) +
                             "\" (URL-safe alphabet A-Z a-z 0-9 - _, \"=\" padding optional)");
      }
    } else if (!http::PercentDecode(segments[i + 1], false, &value)) {
      return Status::Error("label " + name + ": malformed percent escape in \"" +
                           std::string(segments[i + 1]) + "\"");
    }
    if (!IsValidUtf8(value)) {
      return Status::Error("label " + name + ": value is not valid UTF-8");
    }
    if (value.find('\0') != std::string::npos) {
      return Status::Error("label " + name + ": value contains a NUL byte");
    }
    if (name == "job" && value.empty()) {
      return Status::Error("the job name in the push path must not be empty");
    }
    for (const auto& l : labels) {
      if (l.name == name) {
        return Status::Error("label " + name + " appears twice in the push path");
      }
    }
    labels.push_back({std::move(name), std::move(value)});
  }
  return Labels::FromUnsorted(std::move(labels));
}

std::string GroupingPath(const Labels& grouping) {
  auto segment = [](std::string_view name, std::string_view value) {
    if (NeedsBase64(value)) return "/" + std::string(name) + "@base64/" + EncodeBase64Url(value);
    return "/" + std::string(name) + "/" + std::string(value);
  };
  std::string path = "/metrics" + segment("job", grouping.Get("job"));
  for (const auto& l : grouping) {
    if (l.name != "job") path += segment(l.name, l.value);
  }
  return path;
}

}  // namespace gpumon::ingest
