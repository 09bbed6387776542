#include "ingest/pushgateway_routes.h"

#include <string>

#include "ingest/pushgateway_body.h"
#include "ingest/pushgateway_path.h"

namespace gpumon::ingest {
namespace {

void Fail(http::HttpResponse& res, int status, const std::string& message) {
  res.status = status;
  res.SetContent(message + "\n", "text/plain; charset=utf-8");
}

}  // namespace

void RegisterPushgatewayRoutes(http::Router& router, PushStore& store, JobGpuResolver* resolver,
                               PushgatewayOptions options) {
  PushStore* s = &store;
  auto push = [s, resolver, options](const http::HttpRequest& req, http::HttpResponse& res) {
    auto grouping = ParseGroupingPath(req.path);
    if (!grouping.ok()) {
      s->CountRejected();
      return Fail(res, 400, grouping.status().message());
    }
    DecodedPushBody body =
        DecodePushBody(req.Header("Content-Type"), req.Header("Content-Encoding"), req.body,
                       options.max_decoded_bytes);
    if (body.status != 200) {
      s->CountRejected();
      return Fail(res, body.status, body.message);
    }
    JobPlacement placement;
    if (resolver) placement = resolver->ForPeer(req.remote_address);
    PushMode mode = req.method == "PUT" ? PushMode::kReplace : PushMode::kMerge;
    Status pushed = s->Push(*grouping, std::move(body.families), mode, std::move(placement));
    if (!pushed.ok()) return Fail(res, 400, "push rejected: " + pushed.message());
    res.status = 200;
  };
  auto del = [s](const http::HttpRequest& req, http::HttpResponse& res) {
    auto grouping = ParseGroupingPath(req.path);
    if (!grouping.ok()) return Fail(res, 400, grouping.status().message());
    s->Delete(*grouping);
    res.status = 202;
  };
  // "job" or "job@base64", then anything: the path parser reports what is
  // wrong with it.
  const std::string pattern = "/metrics/job(@base64)?(/.*)?";
  http::RouteOptions body_limit{.max_body_bytes = options.max_body_bytes, .run_inline = false};
  router.Put(pattern, push, body_limit);
  router.Post(pattern, push, body_limit);
  router.Delete(pattern, del, body_limit);
}

}  // namespace gpumon::ingest
