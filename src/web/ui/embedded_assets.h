// The web UI bundle embedded in this binary.
//
// Contract: EmbeddedAssets() is defined by the gpumon_ui_assets library
// (ui/CMakeLists.txt): with GPUMON_UI=ON its table holds every file that
// ui/build.mjs wrote, generated at build time by cmake/ui_embed.cmake;
// with GPUMON_UI=OFF the table is empty and the server answers / with a
// page saying how to build the UI. The table lives as long as the process.
#pragma once

#include "web/ui/asset_table.h"

namespace gpumon::web::ui {

const AssetTable& EmbeddedAssets();

}  // namespace gpumon::web::ui
