// Writing labels and strings with RapidJSON, shared by every JSON writer that
// emits a label set as an object ({"name": "value", ...}, in label order).
#pragma once

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <string_view>

#include "common/labels.h"

namespace gpumon {

using LabelsJsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

inline void WriteJsonString(LabelsJsonWriter& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

inline void WriteLabelsObject(LabelsJsonWriter& w, const Labels& labels) {
  w.StartObject();
  for (const auto& l : labels) {
    WriteJsonString(w, l.name);
    WriteJsonString(w, l.value);
  }
  w.EndObject();
}

}  // namespace gpumon
