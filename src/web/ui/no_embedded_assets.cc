// EmbeddedAssets() of a build without the web UI (GPUMON_UI=OFF).
#include <span>

#include "web/ui/embedded_assets.h"
#include "web/ui/static_asset_table.h"

namespace gpumon::web::ui {

const AssetTable& EmbeddedAssets() {
  static const StaticAssetTable table{std::span<const Asset>{}};
  return table;
}

}  // namespace gpumon::web::ui
