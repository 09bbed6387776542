// StaticAssetTable: an AssetTable over an array of Assets that outlives it
// (the generated table of the embedded bundle, or a test's fake one).
//
// Contract: Find() is a hash lookup of the exact path; when two assets
// share a path the first one wins. The table copies no bytes.
#pragma once

#include <span>
#include <string_view>
#include <unordered_map>

#include "web/ui/asset_table.h"

namespace gpumon::web::ui {

class StaticAssetTable final : public AssetTable {
 public:
  explicit StaticAssetTable(std::span<const Asset> assets);

  const Asset* Find(std::string_view path) const override;
  size_t size() const override { return by_path_.size(); }

 private:
  std::unordered_map<std::string_view, const Asset*> by_path_;
};

}  // namespace gpumon::web::ui
