// The built-in web UI's routes on the gpumon server: the single-page app's
// page, its bundled files, and a short page when the binary was built
// without the UI.
//
// Contract (RegisterUiRoutes):
// - GET (and HEAD, which the router answers from GET) of each path in
//   kPagePaths answers the table's index.html with Cache-Control: no-cache
//   (the page names the content-hashed files of its build, so it must be
//   revalidated; its ETag makes that a 304). The app routes itself on
//   the History API path.
// - GET /assets/<name> answers the table's "assets/<name>", with the
//   Content-Type of its extension (content_type.h); Cache-Control
//   kImmutableCacheControl when the name carries a content hash,
//   kRevalidateCacheControl otherwise; a strong ETag per representation
//   and 304 Not Modified (no body) when If-None-Match matches it; the gzip
//   bytes with Content-Encoding: gzip when the asset has them and
//   Accept-Encoding allows gzip, and Vary: Accept-Encoding on every answer
//   of an asset that has a gzip variant. An unknown name is a 404.
// - GET /favicon.ico answers the table's favicon.ico, or 204 No Content
//   when the bundle has none (browsers ask for it unprompted; a 404 would
//   show as a console error).
// - GET /graph redirects (302) to /explore with Prometheus's /graph query
//   parameters translated (graph_redirect.h).
// - With an empty table (GPUMON_UI=OFF) every page path answers 200 with a
//   short text/plain page saying the UI was not built and how to build it;
//   /assets/ answers 404.
// - Every answer of these routes, errors and 304s included, carries the
//   security headers (security_headers.h), except those named in
//   UiRouteOptions::configured_headers, which the operator set for every
//   response in the web config file.
// - The table must outlive the router. Authentication and TLS are the
//   server's (web/http_server.h): these routes sit behind them like the API.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "http/router.h"
#include "web/ui/asset_table.h"

namespace gpumon::web::ui {

// The History API paths of the UI's pages.
inline constexpr std::array<std::string_view, 9> kPagePaths = {
    "/", "/fleet", "/gpu", "/training", "/alerts", "/explore", "/targets", "/rules", "/status"};

struct UiRouteOptions {
  // Header names the web config file sets on every response.
  std::vector<std::string> configured_headers;
};

void RegisterUiRoutes(http::Router& router, const AssetTable& assets, UiRouteOptions options = {});

// The body of the page answered when the binary has no UI.
std::string_view NoUiPage();

}  // namespace gpumon::web::ui
