#include "web/metrics_endpoint.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include "gunzip.h"
#include "web/gzip.h"

namespace gpumon::web {
namespace {

using ::gpumon::web::testing::Gunzip;

TEST(GzipTest, RoundTrips) {
  std::string text;
  for (int i = 0; i < 1000; ++i)
    text += "gpu_temperature_celsius{gpu=\"" + std::to_string(i) + "\"} 42\n";
  std::string z = GzipCompress(text);
  EXPECT_LT(z.size(), text.size() / 4);
  EXPECT_EQ(Gunzip(z), text);
}

TEST(GzipTest, AcceptEncoding) {
  EXPECT_TRUE(AcceptsGzip("gzip"));
  EXPECT_TRUE(AcceptsGzip("deflate, gzip;q=0.5"));
  EXPECT_TRUE(AcceptsGzip("*"));
  EXPECT_FALSE(AcceptsGzip(""));
  EXPECT_FALSE(AcceptsGzip("identity"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0"));
}

TEST(MetricsEndpointTest, RendersOncePerGenerationAndFormat) {
  uint64_t generation = 1;
  int renders = 0;
  MetricsEndpoint ep([&] { return generation; },
                     [&](exposition::Format f, std::string* out) {
                       ++renders;
                       *out = f == exposition::Format::kOpenMetrics1 ? "om " : "text ";
                       *out += std::to_string(generation);
                     });
  EXPECT_EQ(*ep.Get("", "").bytes, "text 1");
  EXPECT_EQ(*ep.Get("", "").bytes, "text 1");
  EXPECT_EQ(renders, 1);
  auto om = ep.Get("application/openmetrics-text;version=1.0.0", "");
  EXPECT_EQ(om.format, exposition::Format::kOpenMetrics1);
  EXPECT_EQ(*om.bytes, "om 1");
  EXPECT_EQ(renders, 2);
  auto z = ep.Get("", "gzip");
  EXPECT_TRUE(z.gzip);
  EXPECT_EQ(Gunzip(*z.bytes), "text 1");
  EXPECT_EQ(renders, 2);
  generation = 2;
  EXPECT_EQ(*ep.Get("", "").bytes, "text 2");
  EXPECT_EQ(renders, 3);
}

}  // namespace
}  // namespace gpumon::web
