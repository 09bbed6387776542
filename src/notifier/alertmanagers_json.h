// The data of Prometheus's GET /api/v1/alertmanagers:
// {"activeAlertmanagers":[{"url":"..."}],"droppedAlertmanagers":[{"url":...}]}.
//
// Contract: header-only so that any rapidjson writer (the web API's
// streaming JsonWriter, or a StringBuffer writer) can be used without this
// module depending on the web module. URLs are written in the given order.
#pragma once

#include <string>
#include <vector>

namespace gpumon::notifier {

template <typename Writer>
bool WriteAlertmanagersJson(Writer& w, const std::vector<std::string>& active,
                            const std::vector<std::string>& dropped) {
  auto list = [&](const char* key, const std::vector<std::string>& urls) {
    w.Key(key);
    w.StartArray();
    for (const auto& u : urls) {
      w.StartObject();
      w.Key("url");
      w.String(u.data(), static_cast<unsigned>(u.size()));
      w.EndObject();
    }
    return w.EndArray();
  };
  w.StartObject();
  list("activeAlertmanagers", active);
  list("droppedAlertmanagers", dropped);
  return w.EndObject();
}

}  // namespace gpumon::notifier
