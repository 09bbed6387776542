#include "notifier/silence.h"

#include <rapidjson/document.h>

namespace gpumon::notifier {
namespace {

std::string StringField(const rapidjson::Value& obj, const char* name) {
  auto it = obj.FindMember(name);
  if (it == obj.MemberEnd() || !it->value.IsString()) return "";
  return std::string(it->value.GetString(), it->value.GetStringLength());
}

bool BoolField(const rapidjson::Value& obj, const char* name, bool fallback) {
  auto it = obj.FindMember(name);
  return it != obj.MemberEnd() && it->value.IsBool() ? it->value.GetBool() : fallback;
}

}  // namespace

Result<std::vector<Silence>> ParseSilences(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsArray()) {
    return Status::Error("silences: the body is not a JSON array");
  }
  std::vector<Silence> out;
  out.reserve(doc.Size());
  for (const rapidjson::Value& v : doc.GetArray()) {
    if (!v.IsObject()) return Status::Error("silences: an entry is not an object");
    Silence s;
    s.id = StringField(v, "id");
    s.starts_at = StringField(v, "startsAt");
    s.ends_at = StringField(v, "endsAt");
    if (s.id.empty()) return Status::Error("silences: an entry has no id");
    if (s.starts_at.empty() || s.ends_at.empty()) {
      return Status::Error("silences: silence " + s.id + " has no startsAt or endsAt");
    }
    s.comment = StringField(v, "comment");
    s.created_by = StringField(v, "createdBy");
    if (auto st = v.FindMember("status"); st != v.MemberEnd() && st->value.IsObject()) {
      s.state = StringField(st->value, "state");
    }
    if (auto ms = v.FindMember("matchers"); ms != v.MemberEnd() && ms->value.IsArray()) {
      for (const rapidjson::Value& m : ms->value.GetArray()) {
        if (!m.IsObject()) continue;
        s.matchers.push_back({.name = StringField(m, "name"),
                              .value = StringField(m, "value"),
                              .is_regex = BoolField(m, "isRegex", false),
                              .is_equal = BoolField(m, "isEqual", true)});
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace gpumon::notifier
