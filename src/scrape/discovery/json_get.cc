#include "scrape/discovery/json_get.h"

#include <rapidjson/error/en.h>
#include <re2/re2.h>

#include "scrape/http_fetch.h"

namespace gpumon::scrape::discovery {

Status GetJson(const std::string& url, const HttpClientConfig& http, int64_t timeout_ms,
               bool require_json_type, rapidjson::Document* out) {
  auto res = HttpFetchWith(url, timeout_ms, 0, http);
  if (!res.ok()) return res.status();
  if (require_json_type) {
    static const RE2 kJson(R"((?i)application/json(;\s*charset=("utf-8"|utf-8))?)");
    std::string type = res->content_type;
    type.erase(0, type.find_first_not_of(" \t"));
    type.erase(type.find_last_not_of(" \t") + 1);
    if (!RE2::FullMatch(type, kJson)) {
      return Status::Error("unsupported content type \"" + res->content_type + "\"");
    }
  }
  out->Parse(res->body.data(), res->body.size());
  if (out->HasParseError()) {
    return Status::Error(url + ": invalid JSON at offset " + std::to_string(out->GetErrorOffset()) +
                         ": " + rapidjson::GetParseError_En(out->GetParseError()));
  }
  return Status::Ok();
}

std::string QueryEscape(std::string_view s) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace gpumon::scrape::discovery
