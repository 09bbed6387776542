// Fuzz target for the query API's parameters as a request carries them:
// the URL query string, a form body and its content type go through
// Params::FromRequest, then through the parsers of time, duration, limit
// and step (params.cc) and the checks of /api/v1/query and
// /api/v1/query_range (query_api.cc), against a backend that answers
// without evaluating.
//
// Input: "<content type>\n<query string>\n<body>" (missing parts empty).
// Checked: no crash, hang or undefined behaviour; every answer encodes to
// valid JSON with Prometheus's envelope and a known status; the backend
// only sees ranges the endpoint promised to accept (end >= start,
// step > 0, at most 11,000 steps).
#include <rapidjson/document.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "web/api/params.h"
#include "web/api/query_api.h"

namespace {

using gpumon::web::api::ApiBackend;
using gpumon::web::api::ApiResponse;
using gpumon::web::api::HeadSummary;
using gpumon::web::api::Params;
using gpumon::web::api::QueryApi;

class NullBackend : public ApiBackend {
 public:
  std::unique_ptr<gpumon::tsdb::Querier> Querier(int64_t, int64_t) override { return nullptr; }
  gpumon::promql::QueryResult InstantQuery(const gpumon::promql::Expr&, int64_t,
                                           const gpumon::promql::QueryOptions& opts) override {
    if (opts.cancel != nullptr) std::abort();  // none was passed
    gpumon::promql::QueryResult r;
    r.value = gpumon::promql::Vector{};
    return r;
  }
  gpumon::promql::QueryResult RangeQuery(const gpumon::promql::Expr&, int64_t start, int64_t end,
                                         int64_t step,
                                         const gpumon::promql::QueryOptions&) override {
    if (end < start || step <= 0) std::abort();
    if ((static_cast<__int128>(end) - start) / step > 11000) std::abort();
    gpumon::promql::QueryResult r;
    r.value = gpumon::promql::Matrix{};
    return r;
  }
  HeadSummary Head() override { return {}; }
};

void CheckResponse(const ApiResponse& r) {
  const int status = r.HttpStatus();
  if (status != 200 && status != 400 && status != 422 && status != 499 && status != 500 &&
      status != 503) {
    std::abort();
  }
  const std::string body = gpumon::web::api::EncodeToString(r);
  rapidjson::Document d;
  d.Parse(body.c_str(), body.size());
  if (d.HasParseError() || !d.IsObject() || !d.HasMember("status")) std::abort();
  if (!r.ok() && (!d.HasMember("errorType") || !d.HasMember("error"))) std::abort();
}

// The parsers on one value; results need only be well defined.
void ParseAll(std::string_view v) {
  (void)gpumon::web::api::ParseTime(v);
  (void)gpumon::web::api::ParseDuration(v);
  (void)gpumon::web::api::ParseLimit(v);
  (void)gpumon::web::api::UrlDecode(v);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;  // the parser's depth and the checks are linear; keep runs fast
  std::string_view in(reinterpret_cast<const char*>(data), size);
  std::string_view parts[3];
  for (int i = 0; i < 2; ++i) {
    const size_t nl = in.find('\n');
    if (nl == std::string_view::npos) break;
    parts[i] = in.substr(0, nl);
    in.remove_prefix(nl + 1);
  }
  // What is left is the last part read: the body if both separators were
  // there, else the query string or the content type.
  if (parts[0].data() == nullptr) {
    parts[0] = in;
  } else if (parts[1].data() == nullptr) {
    parts[1] = in;
  } else {
    parts[2] = in;
  }

  const Params p = Params::FromRequest(parts[1], parts[0], parts[2]);
  for (const char* name :
       {"query", "time", "start", "end", "step", "timeout", "lookback_delta", "limit"}) {
    ParseAll(p.Get(name));
    (void)p.GetAll(name);
  }
  ParseAll(parts[2]);

  NullBackend backend;
  QueryApi api(backend, [] { return int64_t{1'700'000'000'000}; });
  CheckResponse(api.Query(p));
  CheckResponse(api.QueryRange(p));
  return 0;
}
