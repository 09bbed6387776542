// The Content-Type of a bundle file, from its extension.
//
// Contract: ContentTypeFor(path) maps the extensions a web bundle holds
// (html, js/mjs, css, json, map, svg, png, ico, woff2, woff, txt, wasm)
// case-insensitively to their media types, text types with
// "; charset=utf-8"; anything else is application/octet-stream, which
// with X-Content-Type-Options: nosniff no browser runs or renders.
#pragma once

#include <string_view>

namespace gpumon::web::ui {

std::string_view ContentTypeFor(std::string_view path);

}  // namespace gpumon::web::ui
