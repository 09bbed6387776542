#include "web/api/response.h"

namespace gpumon::web::api {
namespace {

constexpr size_t kMaxAnnotations = 10;

void WriteAnnotations(JsonWriter& w, const char* key, const char* kind,
                      const std::vector<std::string>& list) {
  if (list.empty()) return;
  w.Key(key);
  w.StartArray();
  size_t n = std::min(list.size(), kMaxAnnotations);
  for (size_t i = 0; i < n; ++i) w.Str(list[i]);
  if (list.size() > n) {
    w.Str(std::to_string(list.size() - n) + " more " + kind + " annotations omitted");
  }
  w.EndArray();
}

}  // namespace

int ApiResponse::HttpStatus() const {
  if (error) return HttpStatusOf(error->kind);
  return data ? 200 : 204;
}

bool WriteEnvelope(const ApiResponse& r, JsonWriter& w) {
  w.StartObject();
  w.Key("status");
  w.String(r.error ? "error" : "success");
  if (r.data) {
    w.Key("data");
    if (!r.data(w)) return false;
  }
  if (r.error) {
    w.Key("errorType");
    w.String(ErrorKindName(r.error->kind));
    w.Key("error");
    w.Str(r.error->message);
  } else {
    WriteAnnotations(w, "warnings", "warning", r.warnings);
    WriteAnnotations(w, "infos", "info", r.infos);
  }
  return w.EndObject() && w.ok();
}

std::string EncodeToString(const ApiResponse& r) {
  std::string out;
  ChunkedOutput o([&out](const char* d, size_t n) {
    out.append(d, n);
    return true;
  });
  JsonWriter w(o);
  WriteEnvelope(r, w);
  o.Flush();
  return out;
}

}  // namespace gpumon::web::api
