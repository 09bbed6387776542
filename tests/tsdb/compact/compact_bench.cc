// Compaction throughput on GPU-shaped data: three 2 h blocks of N series ×
// 720 samples (10 s scrape), merged (a) consecutively (chunks copied), and
// (b) overlapping on one time range with interleaved timestamps (every
// chunk decoded, merged and re-encoded). Then downsamples the merged
// consecutive block to 5 m and that to 1 h. Prints samples/s for each.
// Usage: gpumon_tsdb_compact_bench [series=10000] [samples_per_block=720]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>

#include "tsdb/compact/block_test_util.h"
#include "tsdb/compact/compactor.h"
#include "tsdb/downsample/downsample.h"

namespace gpumon::tsdb::compact {
namespace {

using testing::kHour;

std::shared_ptr<block::Block> MakeBlock(const std::string& dir, size_t series, int samples,
                                        int64_t mint, int64_t step, int64_t offset) {
  std::mt19937_64 rng(static_cast<uint64_t>(mint + offset));
  testing::SeriesMap data;
  for (size_t i = 0; i < series; ++i) {
    std::vector<Sample> s;
    s.reserve(static_cast<size_t>(samples));
    double temp = 40 + static_cast<double>(i % 30);
    for (int k = 0; k < samples; ++k) {
      temp += static_cast<double>(static_cast<int>(rng() % 5) - 2);
      s.push_back({mint + offset + k * step, i % 2 == 0 ? temp : temp * 7.25 + 0.5});
    }
    data[testing::SeriesLabels(i)] = std::move(s);
  }
  return testing::WriteBlock(dir, data, mint, mint + 2 * kHour);
}

std::shared_ptr<block::Block> RunDownsample(const char* name, const std::string& dir,
                                            const block::Block& in, int64_t res) {
  downsample::DownsampleStats st;
  auto start = std::chrono::steady_clock::now();
  const std::clock_t cpu_start = std::clock();
  auto out = downsample::Downsample(dir, in, res, {}, &st);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double cpu = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  if (!out.ok()) {
    std::fprintf(stderr, "%s: %s\n", name, out.status().message().c_str());
    std::exit(1);
  }
  auto b = block::Block::Open(*out);
  std::printf(
      "%-12s %10llu samples in %7.3f s (cpu %.3f s) = %6.1f M samples/s -> %llu series, %llu "
      "samples, %llu bytes\n",
      name, static_cast<unsigned long long>(st.input_samples), secs, cpu,
      static_cast<double>(st.input_samples) / secs / 1e6,
      static_cast<unsigned long long>(st.output_series),
      static_cast<unsigned long long>(st.output_samples),
      static_cast<unsigned long long>(b.ok() ? (*b)->meta().stats.num_bytes : 0));
  return b.ok() ? *b : nullptr;
}

std::shared_ptr<block::Block> Run(const char* name, const std::string& dir,
                                  const std::vector<std::shared_ptr<block::Block>>& blocks) {
  uint64_t samples = 0, bytes_in = 0;
  for (const auto& b : blocks) {
    samples += b->meta().stats.num_samples;
    bytes_in += b->meta().stats.num_bytes;
  }
  CompactStats st;
  auto start = std::chrono::steady_clock::now();
  const std::clock_t cpu_start = std::clock();
  auto out = Compact(dir, blocks, {}, &st);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double cpu = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  if (!out.ok()) {
    std::fprintf(stderr, "%s: %s\n", name, out.status().message().c_str());
    std::exit(1);
  }
  auto b = block::Block::Open(*out);
  std::printf(
      "%-12s %3zu blocks %10llu samples in %7.3f s (cpu %.3f s) = %6.1f M samples/s; chunks "
      "copied %llu, re-encoded %llu -> %llu; %.2f -> %.2f bytes/sample\n",
      name, blocks.size(), static_cast<unsigned long long>(samples), secs, cpu,
      static_cast<double>(samples) / secs / 1e6, static_cast<unsigned long long>(st.chunks_copied),
      static_cast<unsigned long long>(st.chunks_reencoded),
      static_cast<unsigned long long>(st.chunks_written),
      static_cast<double>(bytes_in) / static_cast<double>(samples),
      b.ok() ? static_cast<double>((*b)->meta().stats.num_bytes) /
                   static_cast<double>((*b)->meta().stats.num_samples)
             : 0.0);
  return b.ok() ? *b : nullptr;
}

}  // namespace
}  // namespace gpumon::tsdb::compact

int main(int argc, char** argv) {
  using namespace gpumon::tsdb::compact;
  const size_t series = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 10000;
  const int samples = argc > 2 ? std::atoi(argv[2]) : 720;
  gpumon::tsdb::testing::TempDir dir;
  const int64_t step = 2 * kHour / samples;
  std::vector<std::shared_ptr<gpumon::tsdb::block::Block>> consecutive, overlapping;
  for (int b = 0; b < 3; ++b) {
    consecutive.push_back(MakeBlock(dir.path(), series, samples, b * 2 * kHour, step, 0));
    // Same range, timestamps interleaved: every chunk overlaps two others.
    overlapping.push_back(MakeBlock(dir.path(), series, samples / 3, 0, step * 3, b * step));
  }
  auto merged = Run("consecutive", dir.path(), consecutive);
  Run("overlapping", dir.path(), overlapping);
  if (merged == nullptr) return 1;
  auto m5 = RunDownsample("raw->5m", dir.path(), *merged, gpumon::tsdb::downsample::kResolution5m);
  if (m5 == nullptr) return 1;
  RunDownsample("5m->1h", dir.path(), *m5, gpumon::tsdb::downsample::kResolution1h);
  return 0;
}
