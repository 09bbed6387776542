#include "web/ui/ui_routes.h"

#include <memory>
#include <utility>

#include "web/gzip.h"
#include "web/ui/content_type.h"
#include "web/ui/graph_redirect.h"
#include "web/ui/http_caching.h"
#include "web/ui/security_headers.h"

namespace gpumon::web::ui {
namespace {

constexpr std::string_view kIndexPath = "index.html";

// What every handler shares: the table and the headers to keep.
struct Context {
  const AssetTable* assets;
  UiRouteOptions options;

  void Secure(http::HttpResponse& res) const {
    SetUiSecurityHeaders(res, options.configured_headers);
  }
  void NotFound(http::HttpResponse& res) const {
    res.status = 404;
    res.SetContent("404 page not found\n", "text/plain; charset=utf-8");
    Secure(res);
  }
};

void ServeAsset(const Context& ctx, const Asset& asset, std::string_view cache_control,
                const http::HttpRequest& req, http::HttpResponse& res) {
  const bool has_gzip = !asset.gzip.empty();
  const bool gzip = has_gzip && AcceptsGzip(req.Header("Accept-Encoding"));
  const std::string etag = StrongEtag(asset.etag, gzip);
  res.SetHeader("Cache-Control", std::string(cache_control));
  res.SetHeader("ETag", etag);
  // Caches must key the two encodings apart.
  if (has_gzip) res.SetHeader("Vary", "Accept-Encoding");
  ctx.Secure(res);
  if (req.HasHeader("If-None-Match") && IfNoneMatchHits(req.Header("If-None-Match"), etag)) {
    res.status = 304;
    return;
  }
  if (gzip) res.SetHeader("Content-Encoding", "gzip");
  const std::string_view bytes = gzip ? asset.gzip : asset.data;
  res.SetContent(std::string(bytes), ContentTypeFor(asset.path));
}

}  // namespace

std::string_view NoUiPage() {
  return "gpumon: this binary was built without its web UI (configured with -DGPUMON_UI=OFF).\n"
         "\n"
         "To build it: install nodejs and npm (scripts/install-deps.sh), then run\n"
         "scripts/build.sh (the default build bundles ui/ with npm and esbuild and\n"
         "embeds it in the gpumon binary).\n"
         "\n"
         "The Prometheus HTTP API is served as usual under /api/v1/, and the\n"
         "server's own metrics at /metrics.\n";
}

void RegisterUiRoutes(http::Router& router, const AssetTable& assets, UiRouteOptions options) {
  auto ctx = std::make_shared<const Context>(Context{&assets, std::move(options)});
  for (std::string_view page : kPagePaths) {
    router.Get(std::string(page), [ctx](const http::HttpRequest& req, http::HttpResponse& res) {
      const Asset* index = ctx->assets->Find(kIndexPath);
      if (index == nullptr) {
        res.SetContent(std::string(NoUiPage()), "text/plain; charset=utf-8");
        res.SetHeader("Cache-Control", std::string(kRevalidateCacheControl));
        ctx->Secure(res);
        return;
      }
      ServeAsset(*ctx, *index, kRevalidateCacheControl, req, res);
    });
  }
  router.Get("/assets/(.+)", [ctx](const http::HttpRequest& req, http::HttpResponse& res) {
    const std::string path = "assets/" + req.captures.at(0);
    const Asset* asset = ctx->assets->Find(path);
    if (asset == nullptr) return ctx->NotFound(res);
    ServeAsset(*ctx, *asset,
               IsContentHashedName(path) ? kImmutableCacheControl : kRevalidateCacheControl, req,
               res);
  });
  router.Get("/favicon.ico", [ctx](const http::HttpRequest& req, http::HttpResponse& res) {
    const Asset* icon = ctx->assets->Find("favicon.ico");
    if (icon == nullptr) {
      res.status = 204;
      ctx->Secure(res);
      return;
    }
    ServeAsset(*ctx, *icon, kRevalidateCacheControl, req, res);
  });
  router.Get("/graph", [ctx](const http::HttpRequest& req, http::HttpResponse& res) {
    res.status = 302;
    res.SetHeader("Location", ExploreTargetForGraphQuery(req.query));
    ctx->Secure(res);
  });
}

}  // namespace gpumon::web::ui
