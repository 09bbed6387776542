// A fake UI bundle for the route tests: real strings (an index page, a
// content-hashed script with a gzip variant, a style sheet without one, an
// unhashed file), behind the same StaticAssetTable the embedded bundle uses.
#pragma once

#include <string>
#include <vector>

#include "web/gzip.h"
#include "web/ui/static_asset_table.h"

namespace gpumon::web::ui::testing {

class FakeAssets {
 public:
  FakeAssets()
      : index_("<!doctype html><script type=module src=/assets/app-ABCD2345.js></script>"),
        script_("console.log('gpumon');\n" + std::string(2000, ' ')),
        script_gz_(GzipCompress(script_)),
        style_("body{margin:0}"),
        plain_("not hashed") {
    assets_ = {
        {.path = "index.html", .data = index_, .gzip = {}, .etag = "index1"},
        {.path = "assets/app-ABCD2345.js", .data = script_, .gzip = script_gz_, .etag = "app1"},
        {.path = "assets/app-QRST6789.css", .data = style_, .gzip = {}, .etag = "css1"},
        {.path = "assets/notes.txt", .data = plain_, .gzip = {}, .etag = "txt1"},
    };
    table_ = std::make_unique<StaticAssetTable>(assets_);
  }
  const AssetTable& table() const { return *table_; }
  const std::string& index() const { return index_; }
  const std::string& script() const { return script_; }
  const std::string& script_gz() const { return script_gz_; }
  const std::string& style() const { return style_; }

 private:
  std::string index_, script_, script_gz_, style_, plain_;
  std::vector<Asset> assets_;
  std::unique_ptr<StaticAssetTable> table_;
};

}  // namespace gpumon::web::ui::testing
