#include "web/ui/content_type.h"

#include <array>
#include <utility>

#include "http/headers.h"

namespace gpumon::web::ui {
namespace {

constexpr std::array<std::pair<std::string_view, std::string_view>, 14> kTypes{{
    {"html", "text/html; charset=utf-8"},
    {"js", "text/javascript; charset=utf-8"},
    {"mjs", "text/javascript; charset=utf-8"},
    {"css", "text/css; charset=utf-8"},
    {"json", "application/json"},
    {"map", "application/json"},
    {"svg", "image/svg+xml"},
    {"png", "image/png"},
    {"ico", "image/x-icon"},
    {"woff2", "font/woff2"},
    {"woff", "font/woff"},
    {"txt", "text/plain; charset=utf-8"},
    {"wasm", "application/wasm"},
    {"webmanifest", "application/manifest+json"},
}};

}  // namespace

std::string_view ContentTypeFor(std::string_view path) {
  const size_t slash = path.rfind('/');
  const size_t dot = path.rfind('.');
  if (dot == std::string_view::npos || (slash != std::string_view::npos && dot < slash)) {
    return "application/octet-stream";
  }
  const std::string_view ext = path.substr(dot + 1);
  for (const auto& [e, type] : kTypes) {
    if (http::EqualsIgnoreCase(e, ext)) return type;
  }
  return "application/octet-stream";
}

}  // namespace gpumon::web::ui
