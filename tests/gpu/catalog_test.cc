#include "gpu/catalog.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace gpumon::gpu {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

TEST(CatalogTest, IdsMatchPositions) {
  for (size_t i = 0; i < Catalog().size(); ++i) {
    EXPECT_EQ(static_cast<size_t>(Catalog()[i].id), i) << "entry " << i << " is out of order";
  }
}

TEST(CatalogTest, NativeNamesFollowPrometheusConventions) {
  std::regex name_re("[a-z_][a-z0-9_]*");
  std::set<std::string_view> seen;
  for (const auto& m : Catalog()) {
    if (m.name.empty()) {
      EXPECT_FALSE(m.dcgm[0].name.empty()) << "a metric needs a native or a DCGM name";
      continue;
    }
    EXPECT_TRUE(seen.insert(m.name).second) << "duplicate " << m.name;
    EXPECT_TRUE(std::regex_match(std::string(m.name), name_re)) << m.name;
    EXPECT_FALSE(m.help.empty()) << m.name;
    EXPECT_FALSE(m.source.empty()) << m.name;
    const bool counter = m.type == exposition::MetricType::kCounter;
    EXPECT_EQ(counter, EndsWith(m.name, "_total")) << m.name;
    if (m.type == exposition::MetricType::kInfo) {
      EXPECT_TRUE(EndsWith(m.name, "_info"));
    }
    if (!m.unit.empty()) {
      std::string family(m.name);
      if (counter) family.resize(family.size() - 6);
      EXPECT_TRUE(EndsWith(family, "_" + std::string(m.unit))) << m.name << " unit " << m.unit;
    }
    if (m.scope == Scope::kAgent) {
      EXPECT_TRUE(m.name.starts_with("gpumon_") || m.name.starts_with("process_")) << m.name;
    } else {
      EXPECT_TRUE(m.name.starts_with("gpu_")) << m.name;
    }
    for (std::string_view l : m.labels) {
      if (!l.empty()) {
        EXPECT_TRUE(std::regex_match(std::string(l), name_re)) << l;
      }
    }
  }
}

TEST(CatalogTest, DcgmAliasesAreWellFormed) {
  std::regex dcgm_re("DCGM_FI_[A-Z0-9_]+");
  for (const auto& m : Catalog()) {
    for (const auto& a : m.dcgm) {
      if (a.name.empty()) continue;
      EXPECT_TRUE(std::regex_match(std::string(a.name), dcgm_re)) << a.name;
      EXPECT_NE(a.scale, 0) << a.name;
      if (!a.match.empty()) {
        // One comma-separated value per extra label.
        auto commas = std::count(a.match.begin(), a.match.end(), ',');
        EXPECT_EQ(commas + 1, m.label_count()) << a.name;
      }
    }
  }
  // The names dcgm-exporter dashboards rely on most are all there.
  std::set<std::string_view> all;
  for (const auto& m : Catalog()) {
    for (const auto& a : m.dcgm) all.insert(a.name);
  }
  for (const char* required :
       {"DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_MEMORY_TEMP", "DCGM_FI_DEV_POWER_USAGE",
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_MEM_CLOCK",
        "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_GPU_UTIL",
        "DCGM_FI_DEV_MEM_COPY_UTIL", "DCGM_FI_DEV_ENC_UTIL", "DCGM_FI_DEV_DEC_UTIL",
        "DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
        "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
        "DCGM_FI_DEV_ROW_REMAP_FAILURE"}) {
    EXPECT_TRUE(all.count(required)) << required;
  }
}

TEST(CatalogTest, GroupsRoundTripByName) {
  for (int g = 0; g < kGroupCount; ++g) {
    auto group = static_cast<Group>(g);
    EXPECT_EQ(GroupFromName(GroupName(group)), group);
    EXPECT_GT(DefaultInterval(group).count(), 0);
  }
  EXPECT_FALSE(GroupFromName("nope").has_value());
}

// docs/metrics.md is generated from the catalog; regenerate it with
// `gpumon catalog --markdown > docs/metrics.md` when this fails.
TEST(CatalogTest, MetricsReferenceMatchesDocs) {
  std::ifstream in(GPUMON_SOURCE_DIR "/docs/metrics.md");
  ASSERT_TRUE(in) << "docs/metrics.md is missing";
  std::stringstream buf;
  buf << in.rdbuf();
  EXPECT_EQ(buf.str(), RenderMetricsReference())
      << "docs/metrics.md is out of date: run `gpumon catalog --markdown > docs/metrics.md`";
}

}  // namespace
}  // namespace gpumon::gpu
