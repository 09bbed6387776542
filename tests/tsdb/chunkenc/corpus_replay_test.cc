// Replays the chunk decoder's fuzz seed corpus (fuzz/corpus/chunk_decode)
// in ordinary test runs: each input decodes or stops with an error, as it
// did when it was added, and Seek to every decoded time lands where Next
// did, so the readers' skip paths see the same inputs as the fuzzer.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "chunk_test_util.h"
#include "tsdb/chunkenc/chunk.h"

namespace gpumon::tsdb::chunkenc {
namespace {

std::vector<uint8_t> ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(CorpusReplayTest, SeedsDecodeAndSeekLikeNext) {
  const std::filesystem::path dir = GPUMON_CHUNK_CORPUS;
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  int files = 0, decoded = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const auto bytes = ReadFile(entry.path());
    SCOPED_TRACE(entry.path().filename().string());
    ++files;
    const auto all = chunktest::DecodeAll(bytes);
    if (!all.status.ok()) {
      EXPECT_FALSE(all.status.message().empty());
      continue;
    }
    ++decoded;
    auto count = CountSamples(bytes);
    ASSERT_TRUE(count.ok());
    ASSERT_EQ(*count, static_cast<int>(all.samples.size()));
    for (size_t i = 0; i < all.samples.size(); ++i) {
      auto it = NewIterator(bytes);
      ASSERT_TRUE(it->Seek(all.samples[i].t)) << "sample " << i;
      std::vector<Sample> rest = {it->At()};
      while (it->Next()) rest.push_back(it->At());
      ASSERT_TRUE(it->status().ok());
      ASSERT_TRUE(chunktest::SameSamples(std::span<const Sample>(all.samples).subspan(i), rest));
    }
  }
  EXPECT_GT(files, 0);
  EXPECT_GT(decoded, 0);
}

}  // namespace
}  // namespace gpumon::tsdb::chunkenc
