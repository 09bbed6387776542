#include "web/api/http_api.h"

#include <memory>

#include "web/api/gzip_stream.h"
#include "web/gzip.h"

namespace gpumon::web::api {
namespace {

// With a charset parameter, cpp-httplib leaves the body alone (it would
// otherwise compress chunked JSON itself, possibly as brotli); we compress.
constexpr const char* kJsonContentType = "application/json; charset=utf-8";

void SetCors(const httplib::Request& req, httplib::Response& res) {
  std::string origin = req.get_header_value("Origin");
  if (origin.empty()) return;
  res.set_header("Access-Control-Allow-Origin", origin);
  res.set_header("Access-Control-Allow-Headers", "Accept, Authorization, Content-Type, Origin");
  res.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
  res.set_header("Access-Control-Expose-Headers", "Date");
  res.set_header("Vary", "Origin");
}

using Endpoint = std::function<ApiResponse(const httplib::Request&, const Params&)>;

httplib::Server::Handler Wrap(Endpoint ep) {
  return [ep = std::move(ep)](const httplib::Request& req, httplib::Response& res) {
    Params p = ParamsOf(req);
    Respond(req, res, ep(req, p));
  };
}

}  // namespace

Params ParamsOf(const httplib::Request& req) {
  std::string_view target = req.target;
  size_t q = target.find('?');
  std::string_view query = q == std::string_view::npos ? std::string_view() : target.substr(q + 1);
  return Params::FromRequest(query, req.get_header_value("Content-Type"), req.body);
}

void Respond(const httplib::Request& req, httplib::Response& res, ApiResponse r) {
  SetCors(req, res);
  res.status = r.HttpStatus();
  if (res.status == 204) return;
  if (!r.ok()) {
    // Errors are small: one piece, the content type Prometheus uses.
    res.set_content(EncodeToString(r), "application/json");
    return;
  }
  const bool gzip = AcceptsGzip(req.get_header_value("Accept-Encoding"));
  if (gzip) res.set_header("Content-Encoding", "gzip");
  res.set_header("Vary", "Accept-Encoding");
  auto shared = std::make_shared<ApiResponse>(std::move(r));
  res.set_chunked_content_provider(
      kJsonContentType, [shared, gzip](size_t /*offset*/, httplib::DataSink& sink) {
        auto raw = [&sink](const char* d, size_t n) { return sink.write(d, n); };
        std::unique_ptr<GzipStream> gz;
        ChunkedOutput::Sink out_sink = raw;
        if (gzip) {
          gz = std::make_unique<GzipStream>(raw);
          out_sink = [&gz](const char* d, size_t n) { return gz->Write(std::string_view(d, n)); };
        }
        ChunkedOutput out(out_sink);
        JsonWriter w(out);
        bool ok = WriteEnvelope(*shared, w);
        out.Flush();
        ok = ok && out.ok();
        if (ok && gz) ok = gz->Finish();
        if (!ok) return false;  // the client went away: drop the connection
        sink.done();
        return true;
      });
}

void RegisterApiRoutes(httplib::Server& server, const ApiHandlers& h) {
  auto both = [&server](const std::string& path, Endpoint ep) {
    auto handler = Wrap(std::move(ep));
    server.Get(path, handler);
    server.Post(path, handler);
  };
  QueryApi* query = h.query;
  SeriesApi* series = h.series;
  StatusApi* status = h.status;

  both("/api/v1/query", [query](auto&, const Params& p) { return query->Query(p); });
  both("/api/v1/query_range", [query](auto&, const Params& p) { return query->QueryRange(p); });
  both("/api/v1/query_exemplars",
       [query](auto&, const Params& p) { return query->QueryExemplars(p); });
  both("/api/v1/format_query", [query](auto&, const Params& p) { return query->FormatQuery(p); });
  both("/api/v1/parse_query", [query](auto&, const Params& p) { return query->ParseQuery(p); });
  both("/api/v1/labels", [series](auto&, const Params& p) { return series->LabelNames(p); });
  both("/api/v1/series", [series](auto&, const Params& p) { return series->Series(p); });
  server.Get(R"(/api/v1/label/([^/]+)/values)",
             Wrap([series](const httplib::Request& req, const Params& p) {
               return series->LabelValues(req.matches[1].str(), p);
             }));
  server.Get("/api/v1/metadata",
             Wrap([series](auto&, const Params& p) { return series->Metadata(p); }));
  server.Get("/api/v1/status/buildinfo",
             Wrap([status](auto&, const Params& p) { return status->BuildInfo(p); }));
  server.Get("/api/v1/status/runtimeinfo",
             Wrap([status](auto&, const Params& p) { return status->RuntimeInfo(p); }));
  server.Get("/api/v1/status/config",
             Wrap([status](auto&, const Params& p) { return status->Config(p); }));
  server.Get("/api/v1/status/flags",
             Wrap([status](auto&, const Params& p) { return status->Flags(p); }));
  server.Get("/api/v1/status/tsdb",
             Wrap([status](auto&, const Params& p) { return status->Tsdb(p); }));
  AdminApi* admin = h.enable_admin ? h.admin : nullptr;
  auto admin_route = [&server, admin](const std::string& path,
                                      ApiResponse (AdminApi::*fn)(const Params&)) {
    auto handler = Wrap([admin, fn](auto&, const Params& p) {
      return admin ? (admin->*fn)(p) : AdminApi::Disabled();
    });
    server.Post(path, handler);
    server.Put(path, handler);
  };
  admin_route("/api/v1/admin/tsdb/delete_series", &AdminApi::DeleteSeries);
  admin_route("/api/v1/admin/tsdb/clean_tombstones", &AdminApi::CleanTombstones);
  admin_route("/api/v1/admin/tsdb/snapshot", &AdminApi::Snapshot);

  if (Federate* federate = h.federate) {
    server.Get("/federate",
               [federate, ready_fn = h.ready](const httplib::Request& req, httplib::Response& res) {
                 if (ready_fn && !ready_fn()) {
                   res.status = 503;
                   res.set_content("Service Unavailable\n", "text/plain; charset=utf-8");
                   return;
                 }
                 FederateReply r = federate->Handle(ParamsOf(req));
                 res.status = r.status;
                 res.set_content(std::move(r.body), r.content_type);
               });
  }

  server.Options(R"(/api/v1/.*)", [](const httplib::Request& req, httplib::Response& res) {
    SetCors(req, res);
    res.status = 204;
  });

  auto healthy = [](const httplib::Request&, httplib::Response& res) {
    res.set_content("gpumon server is Healthy.\n", "text/plain; charset=utf-8");
  };
  server.Get("/-/healthy", healthy);
  auto ready_fn = h.ready;
  auto ready = [ready_fn](const httplib::Request&, httplib::Response& res) {
    if (ready_fn && !ready_fn()) {
      res.status = 503;
      res.set_content("Service Unavailable\n", "text/plain; charset=utf-8");
      return;
    }
    res.set_content("gpumon server is Ready.\n", "text/plain; charset=utf-8");
  };
  server.Get("/-/ready", ready);
}

}  // namespace gpumon::web::api
