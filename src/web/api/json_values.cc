#include "web/api/json_values.h"

#include <algorithm>

#include "web/api/value_format.h"

namespace gpumon::web::api {
namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

}  // namespace

bool WriteLabels(JsonWriter& w, const Labels& labels) {
  w.StartObject();
  for (const Label& l : labels) {
    w.Str(l.name);
    w.Str(l.value);
  }
  return w.EndObject() && w.ok();
}

bool WriteTimestamp(JsonWriter& w, int64_t ms) {
  char buf[32];
  size_t n = FormatTimestamp(ms, buf);
  return w.Raw(std::string_view(buf, n), rapidjson::kNumberType);
}

bool WriteSampleValue(JsonWriter& w, double v) {
  char buf[32];
  size_t n = FormatSampleValue(v, buf);
  return w.Str(std::string_view(buf, n));
}

bool WritePoint(JsonWriter& w, int64_t ms, double v) {
  w.StartArray();
  WriteTimestamp(w, ms);
  WriteSampleValue(w, v);
  return w.EndArray();
}

const char* ResultTypeName(const promql::Value& v) {
  return std::visit(Overloaded{
                        [](const promql::Scalar&) { return "scalar"; },
                        [](const promql::String&) { return "string"; },
                        [](const promql::Vector&) { return "vector"; },
                        [](const promql::Matrix&) { return "matrix"; },
                    },
                    v);
}

size_t SeriesCount(const promql::Value& v) {
  if (auto* vec = std::get_if<promql::Vector>(&v)) return vec->size();
  if (auto* m = std::get_if<promql::Matrix>(&v)) return m->size();
  return 0;
}

bool WriteValue(JsonWriter& w, const promql::Value& v, size_t limit) {
  return std::visit(Overloaded{
                        [&](const promql::Scalar& s) { return WritePoint(w, s.t, s.v); },
                        [&](const promql::String& s) {
                          w.StartArray();
                          WriteTimestamp(w, s.t);
                          w.Str(s.v);
                          return w.EndArray();
                        },
                        [&](const promql::Vector& vec) {
                          size_t n = limit > 0 ? std::min(limit, vec.size()) : vec.size();
                          w.StartArray();
                          for (size_t i = 0; i < n; ++i) {
                            w.StartObject();
                            w.Key("metric");
                            WriteLabels(w, vec[i].metric);
                            w.Key("value");
                            WritePoint(w, vec[i].t, vec[i].f);
                            w.EndObject();
                            if (!w.ok()) return false;
                          }
                          return w.EndArray();
                        },
                        [&](const promql::Matrix& m) {
                          size_t n = limit > 0 ? std::min(limit, m.size()) : m.size();
                          w.StartArray();
                          for (size_t i = 0; i < n; ++i) {
                            w.StartObject();
                            w.Key("metric");
                            WriteLabels(w, m[i].metric);
                            w.Key("values");
                            w.StartArray();
                            for (const promql::FPoint& p : m[i].points) WritePoint(w, p.t, p.f);
                            w.EndArray();
                            w.EndObject();
                            if (!w.ok()) return false;
                          }
                          return w.EndArray();
                        },
                    },
                    v);
}

bool WriteQueryData(JsonWriter& w, const promql::Value& v, size_t limit) {
  w.StartObject();
  w.Key("resultType");
  w.String(ResultTypeName(v));
  w.Key("result");
  if (!WriteValue(w, v, limit)) return false;
  return w.EndObject() && w.ok();
}

}  // namespace gpumon::web::api
