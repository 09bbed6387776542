// Helpers for the API tests: encode a response and parse it back.
#pragma once

#include <rapidjson/document.h>

#include <string>

#include "web/api/response.h"
#include "web/api/status_api.h"

namespace gpumon::web::api::testing {

inline rapidjson::Document ParseJson(const std::string& text) {
  rapidjson::Document d;
  d.Parse(text.c_str(), text.size());
  return d;
}

inline rapidjson::Document Encode(const ApiResponse& r) { return ParseJson(EncodeToString(r)); }

inline std::string Str(const rapidjson::Value& v) {
  return v.IsString() ? std::string(v.GetString(), v.GetStringLength())
                      : std::string("<not a string>");
}

inline ServerInfo Info(std::string version) {
  ServerInfo info;
  info.version = std::move(version);
  return info;
}

}  // namespace gpumon::web::api::testing
