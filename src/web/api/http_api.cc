#include "web/api/http_api.h"

#include <memory>

#include "web/api/gzip_stream.h"
#include "web/gzip.h"

namespace gpumon::web::api {
namespace {

constexpr const char* kJsonContentType = "application/json; charset=utf-8";
constexpr const char* kTextContentType = "text/plain; charset=utf-8";

void SetCors(const http::HttpRequest& req, http::HttpResponse& res) {
  std::string origin = req.Header("Origin");
  if (origin.empty()) return;
  res.SetHeader("Access-Control-Allow-Origin", origin);
  res.SetHeader("Access-Control-Allow-Headers", "Accept, Authorization, Content-Type, Origin");
  res.SetHeader("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
  res.SetHeader("Access-Control-Expose-Headers", "Date");
  res.SetHeader("Vary", "Origin");
}

using Endpoint = std::function<ApiResponse(const http::HttpRequest&, const Params&)>;

http::Handler Wrap(Endpoint ep) {
  return [ep = std::move(ep)](const http::HttpRequest& req, http::HttpResponse& res) {
    Params p = ParamsOf(req);
    Respond(req, res, ep(req, p));
  };
}

}  // namespace

Params ParamsOf(const http::HttpRequest& req) {
  return Params::FromRequest(req.query, req.Header("Content-Type"), req.body);
}

void Respond(const http::HttpRequest& req, http::HttpResponse& res, ApiResponse r) {
  SetCors(req, res);
  res.status = r.HttpStatus();
  if (res.status == 204) return;
  if (!r.ok()) {
    // Errors are small: one piece, the content type Prometheus uses.
    res.SetContent(EncodeToString(r), "application/json");
    return;
  }
  const bool gzip = AcceptsGzip(req.Header("Accept-Encoding"));
  if (gzip) res.SetHeader("Content-Encoding", "gzip");
  res.SetHeader("Vary", "Accept-Encoding");
  auto shared = std::make_shared<ApiResponse>(std::move(r));
  res.Stream(kJsonContentType, [shared, gzip](const http::BodyWriter& write) {
    std::unique_ptr<GzipStream> gz;
    ChunkedOutput::Sink out_sink = write;
    if (gzip) {
      gz = std::make_unique<GzipStream>(write);
      out_sink = [&gz](const char* d, size_t n) { return gz->Write(std::string_view(d, n)); };
    }
    ChunkedOutput out(out_sink);
    JsonWriter w(out);
    bool ok = WriteEnvelope(*shared, w);
    out.Flush();
    ok = ok && out.ok();
    if (ok && gz) ok = gz->Finish();
    return ok;  // false: the client went away, or encoding failed; abort
  });
}

void RegisterApiRoutes(http::Router& router, const ApiHandlers& h) {
  auto both = [&router](const std::string& path, Endpoint ep) {
    auto handler = Wrap(std::move(ep));
    router.Get(path, handler);
    router.Post(path, handler);
  };
  QueryApi* query = h.query;
  SeriesApi* series = h.series;
  StatusApi* status = h.status;

  // A query stops when its client hangs up or the server shuts down.
  both("/api/v1/query", [query](const http::HttpRequest& req, const Params& p) {
    return query->Query(p, req.cancel.get());
  });
  both("/api/v1/query_range", [query](const http::HttpRequest& req, const Params& p) {
    return query->QueryRange(p, req.cancel.get());
  });
  both("/api/v1/query_exemplars",
       [query](auto&, const Params& p) { return query->QueryExemplars(p); });
  both("/api/v1/format_query", [query](auto&, const Params& p) { return query->FormatQuery(p); });
  both("/api/v1/parse_query", [query](auto&, const Params& p) { return query->ParseQuery(p); });
  both("/api/v1/labels", [series](auto&, const Params& p) { return series->LabelNames(p); });
  both("/api/v1/series", [series](auto&, const Params& p) { return series->Series(p); });
  router.Get(R"(/api/v1/label/([^/]+)/values)",
             Wrap([series](const http::HttpRequest& req, const Params& p) {
               return series->LabelValues(req.captures.at(0), p);
             }));
  router.Get("/api/v1/metadata",
             Wrap([series](auto&, const Params& p) { return series->Metadata(p); }));
  router.Get("/api/v1/status/buildinfo",
             Wrap([status](auto&, const Params& p) { return status->BuildInfo(p); }));
  router.Get("/api/v1/status/runtimeinfo",
             Wrap([status](auto&, const Params& p) { return status->RuntimeInfo(p); }));
  router.Get("/api/v1/status/config",
             Wrap([status](auto&, const Params& p) { return status->Config(p); }));
  router.Get("/api/v1/status/flags",
             Wrap([status](auto&, const Params& p) { return status->Flags(p); }));
  router.Get("/api/v1/status/tsdb",
             Wrap([status](auto&, const Params& p) { return status->Tsdb(p); }));
  AdminApi* admin = h.enable_admin ? h.admin : nullptr;
  auto admin_route = [&router, admin](const std::string& path,
                                      ApiResponse (AdminApi::*fn)(const Params&)) {
    auto handler = Wrap([admin, fn](auto&, const Params& p) {
      return admin ? (admin->*fn)(p) : AdminApi::Disabled();
    });
    router.Post(path, handler);
    router.Put(path, handler);
  };
  admin_route("/api/v1/admin/tsdb/delete_series", &AdminApi::DeleteSeries);
  admin_route("/api/v1/admin/tsdb/clean_tombstones", &AdminApi::CleanTombstones);
  admin_route("/api/v1/admin/tsdb/snapshot", &AdminApi::Snapshot);

  if (Federate* federate = h.federate) {
    router.Get("/federate", [federate, ready_fn = h.ready](const http::HttpRequest& req,
                                                           http::HttpResponse& res) {
      if (ready_fn && !ready_fn()) {
        res.status = 503;
        res.SetContent("Service Unavailable\n", kTextContentType);
        return;
      }
      FederateReply r = federate->Handle(ParamsOf(req));
      res.status = r.status;
      res.SetContent(std::move(r.body), r.content_type);
    });
  }

  router.Options(R"(/api/v1/.*)", [](const http::HttpRequest& req, http::HttpResponse& res) {
    SetCors(req, res);
    res.status = 204;
  });

  const http::RouteOptions inline_route{.max_body_bytes = std::nullopt, .run_inline = true};
  router.Get(
      "/-/healthy",
      [](const http::HttpRequest&, http::HttpResponse& res) {
        res.SetContent("gpumon server is Healthy.\n", kTextContentType);
      },
      inline_route);
  router.Get(
      "/-/ready",
      [ready_fn = h.ready](const http::HttpRequest&, http::HttpResponse& res) {
        if (ready_fn && !ready_fn()) {
          res.status = 503;
          res.SetContent("Service Unavailable\n", kTextContentType);
          return;
        }
        res.SetContent("gpumon server is Ready.\n", kTextContentType);
      },
      inline_route);
}

}  // namespace gpumon::web::api
