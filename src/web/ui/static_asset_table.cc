#include "web/ui/static_asset_table.h"

namespace gpumon::web::ui {

StaticAssetTable::StaticAssetTable(std::span<const Asset> assets) {
  for (const Asset& a : assets) by_path_.emplace(a.path, &a);
}

const Asset* StaticAssetTable::Find(std::string_view path) const {
  auto it = by_path_.find(path);
  return it == by_path_.end() ? nullptr : it->second;
}

}  // namespace gpumon::web::ui
