// The files of the built-in web UI as the server sees them: an Asset per
// file of the bundle (ui/build.mjs's output), looked up by path.
//
// Contract:
// - Asset::path is the file's path relative to the bundle's root, without
//   a leading '/' ("index.html", "assets/main-3F2A9C1B.js").
// - data is the file's bytes; gzip the bytes of its gzip-compressed form
//   when the bundle has one (empty otherwise); both stay valid for the
//   life of the table (the embedded table points into the binary's
//   read-only data).
// - etag is an opaque token that changes whenever data does (a content
//   hash), without quotes; the server builds the ETag header from it.
// - AssetTable::Find returns the asset with exactly that path or null;
//   empty() is true for a table with no files (a build without the UI).
//   Implementations are immutable once built, so any thread may read them.
#pragma once

#include <cstddef>
#include <string_view>

namespace gpumon::web::ui {

struct Asset {
  std::string_view path;
  std::string_view data;
  std::string_view gzip;  // empty: no gzip variant
  std::string_view etag;
};

class AssetTable {
 public:
  virtual ~AssetTable() = default;
  virtual const Asset* Find(std::string_view path) const = 0;
  virtual size_t size() const = 0;
  bool empty() const { return size() == 0; }
};

}  // namespace gpumon::web::ui
