// The table compiled into this binary (gpumon_ui_assets) against the bundle
// ui/build.mjs wrote into <build>/ui/dist: every file is embedded byte for
// byte, each .gz beside a file is that file's gzip variant, ETags are the
// SHA-256 prefix of the bytes, and every asset index.html names is there.
// With GPUMON_UI=OFF the table must be empty.
#include "web/ui/embedded_assets.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "../gunzip.h"

namespace gpumon::web::ui {
namespace {

#if GPUMON_UI_EMBEDDED

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Sha256Hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &n, EVP_sha256(), nullptr);
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < n; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 15]);
  }
  return out;
}

TEST(EmbeddedAssetsTest, TableEqualsTheBuiltBundle) {
  const fs::path dist = GPUMON_UI_DIST_DIR;
  ASSERT_TRUE(fs::exists(dist / "index.html")) << dist;
  const AssetTable& table = EmbeddedAssets();
  size_t entries = 0;
  for (const auto& f : fs::recursive_directory_iterator(dist)) {
    if (!f.is_regular_file()) continue;
    const std::string rel = fs::relative(f.path(), dist).generic_string();
    if (rel.ends_with(".gz") && fs::exists(dist / rel.substr(0, rel.size() - 3))) continue;
    ++entries;
    const Asset* a = table.Find(rel);
    ASSERT_NE(a, nullptr) << rel << " is in the bundle but not embedded";
    const std::string bytes = ReadFile(f.path());
    EXPECT_EQ(a->data, bytes) << rel;
    EXPECT_EQ(a->etag, Sha256Hex(bytes).substr(0, 32)) << rel;
    const fs::path gz = f.path().string() + ".gz";
    if (fs::exists(gz)) {
      EXPECT_EQ(a->gzip, ReadFile(gz)) << rel;
      EXPECT_EQ(testing::Gunzip(std::string(a->gzip)), bytes) << rel << ".gz is not its gzip";
    } else {
      EXPECT_TRUE(a->gzip.empty()) << rel;
    }
  }
  EXPECT_EQ(table.size(), entries);
  EXPECT_EQ(table.Find("index.html.gz"), nullptr);  // a variant, not an entry
}

TEST(EmbeddedAssetsTest, EveryAssetTheIndexNamesIsEmbedded) {
  const AssetTable& table = EmbeddedAssets();
  const Asset* index = table.Find("index.html");
  ASSERT_NE(index, nullptr);
  const std::string html(index->data);
  const std::regex ref(R"re((?:src|href)="/(assets/[^"]+)")re");
  std::set<std::string> named;
  for (std::sregex_iterator it(html.begin(), html.end(), ref), end; it != end; ++it) {
    named.insert((*it)[1].str());
  }
  EXPECT_FALSE(named.empty()) << html;
  bool has_script = false;
  for (const std::string& path : named) {
    EXPECT_NE(table.Find(path), nullptr) << path << " is named by index.html";
    has_script = has_script || path.ends_with(".js");
  }
  EXPECT_TRUE(has_script) << html;
  // A strict CSP blocks inline code: the page must not carry any.
  EXPECT_EQ(html.find("<style"), std::string::npos);
  EXPECT_FALSE(std::regex_search(html, std::regex("<script(?![^>]*\\ssrc=)[^>]*>")));
}

#else

TEST(EmbeddedAssetsTest, EmptyWithoutTheUi) { EXPECT_TRUE(EmbeddedAssets().empty()); }

#endif

}  // namespace
}  // namespace gpumon::web::ui
