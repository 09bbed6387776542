// Path patterns expanded against a scratch folder.
#include "common/path_glob.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace gpumon {
namespace {

namespace fs = std::filesystem;

class PathGlobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        fs::temp_directory_path() /
        ("gpumon_path_glob_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
         "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    for (const char* name : {"b.yml", "a.yml", "c.txt"}) std::ofstream(dir_ / name) << "x";
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(PathGlobTest, MatchesSorted) {
  EXPECT_EQ(GlobPaths(Path("*.yml")), (std::vector<std::string>{Path("a.yml"), Path("b.yml")}));
  EXPECT_EQ(GlobPaths(Path("?.txt")), (std::vector<std::string>{Path("c.txt")}));
}

TEST_F(PathGlobTest, LiteralPathOnlyWhenItExists) {
  EXPECT_EQ(GlobPaths(Path("a.yml")), (std::vector<std::string>{Path("a.yml")}));
  EXPECT_TRUE(GlobPaths(Path("missing.yml")).empty());
}

TEST_F(PathGlobTest, NoMatchIsEmpty) { EXPECT_TRUE(GlobPaths(Path("*.json")).empty()); }

}  // namespace
}  // namespace gpumon
