#include "exposition/text_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "exposition/parser.h"

namespace gpumon::exposition {
namespace {

std::string Render(const std::vector<MetricFamily>& fs, Format format) {
  std::string out;
  AppendFamilies(fs, format, &out);
  FinishText(format, &out);
  return out;
}

TEST(TextWriterTest, EscapesLabelValuesAndHelp) {
  std::string out;
  AppendEscapedLabelValue("a\\b\"c\nd", &out);
  EXPECT_EQ(out, "a\\\\b\\\"c\\nd");
  out.clear();
  AppendEscapedHelp("x\\y\n\"q\"", Format::kText004, &out);
  EXPECT_EQ(out, "x\\\\y\\n\"q\"");
  out.clear();
  AppendEscapedHelp("\"q\"", Format::kOpenMetrics1, &out);
  EXPECT_EQ(out, "\\\"q\\\"");
}

TEST(TextWriterTest, FormatsValuesLikePrometheus) {
  auto v = [](double d) {
    std::string s;
    AppendSampleValue(d, &s);
    return s;
  };
  EXPECT_EQ(v(42), "42");
  EXPECT_EQ(v(0.1), "0.1");
  EXPECT_EQ(v(-1.5), "-1.5");
  EXPECT_EQ(v(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(v(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(v(std::nan("")), "NaN");
  EXPECT_EQ(std::stod(v(1.5e10)), 1.5e10);
  // Shortest round-trip text.
  EXPECT_EQ(std::stod(v(0.30000000000000004)), 0.30000000000000004);
}

TEST(TextWriterTest, Text004Layout) {
  std::vector<MetricFamily> fs = {
      {"gpu_energy_joules_total",
       MetricType::kCounter,
       "Energy.",
       "joules",
       {{{{"gpu", "0"}}, 12.5, std::nullopt}, {{{"gpu", "1"}}, 3, int64_t{1700000000123}}}},
      {"gpu_info", MetricType::kInfo, "Versions.", "", {{{{"driver_version", "590"}}, 1, {}}}},
      {"empty_family", MetricType::kGauge, "Dropped.", "", {}},
  };
  EXPECT_EQ(Render(fs, Format::kText004),
            "# HELP gpu_energy_joules_total Energy.\n"
            "# TYPE gpu_energy_joules_total counter\n"
            "gpu_energy_joules_total{gpu=\"0\"} 12.5\n"
            "gpu_energy_joules_total{gpu=\"1\"} 3 1700000000123\n"
            "# HELP gpu_info Versions.\n"
            "# TYPE gpu_info gauge\n"
            "gpu_info{driver_version=\"590\"} 1\n");
}

TEST(TextWriterTest, OpenMetricsLayout) {
  std::vector<MetricFamily> fs = {
      {"gpu_energy_joules_total",
       MetricType::kCounter,
       "Energy.",
       "joules",
       {{{{"gpu", "0"}}, 12.5, int64_t{1700000000123}}}},
      {"gpu_info", MetricType::kInfo, "Versions.", "", {{{{"driver_version", "590"}}, 1, {}}}},
      {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
       MetricType::kCounter,
       "Energy (mJ).",
       "",
       {{{}, 12500, {}}}},
      {"gpu_temperature_celsius", MetricType::kGauge, "Temp.", "celsius", {{{}, 40, {}}}},
      {"gpu_fan_speed_ratio", MetricType::kGauge, "Fan.", "celsius", {{{}, 0.4, {}}}},
  };
  EXPECT_EQ(Render(fs, Format::kOpenMetrics1),
            "# HELP gpu_energy_joules Energy.\n"
            "# TYPE gpu_energy_joules counter\n"
            "# UNIT gpu_energy_joules joules\n"
            "gpu_energy_joules_total{gpu=\"0\"} 12.5 1700000000.123\n"
            "# HELP gpu Versions.\n"
            "# TYPE gpu info\n"
            "gpu_info{driver_version=\"590\"} 1\n"
            "# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Energy (mJ).\n"
            "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION unknown\n"
            "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION 12500\n"
            "# HELP gpu_temperature_celsius Temp.\n"
            "# TYPE gpu_temperature_celsius gauge\n"
            "# UNIT gpu_temperature_celsius celsius\n"
            "gpu_temperature_celsius 40\n"
            "# HELP gpu_fan_speed_ratio Fan.\n"
            "# TYPE gpu_fan_speed_ratio gauge\n"
            "gpu_fan_speed_ratio 0.4\n"
            "# EOF\n");
}

TEST(TextWriterTest, NegotiatesFormatFromAccept) {
  EXPECT_EQ(NegotiateFormat(""), Format::kText004);
  EXPECT_EQ(NegotiateFormat("text/plain"), Format::kText004);
  // What Prometheus 2.x sends.
  EXPECT_EQ(NegotiateFormat("application/openmetrics-text;version=1.0.0,application/"
                            "openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;"
                            "q=0.5,*/*;q=0.1"),
            Format::kOpenMetrics1);
  EXPECT_EQ(NegotiateFormat("application/openmetrics-text;version=0.0.1"), Format::kText004);
  EXPECT_EQ(NegotiateFormat("text/plain;q=1,application/openmetrics-text;q=0.5"), Format::kText004);
}

// Whatever the writer produces, the parser reads back unchanged.
TEST(TextWriterTest, RoundTripsThroughParser) {
  std::vector<MetricFamily> fs = {
      {"weird_total",
       MetricType::kCounter,
       "Help with \\ and \n newline.",
       "",
       {{{{"a", "quote\" backslash\\ newline\n"}, {"b", ""}}, 1e-300, {}},
        {{{"a", "x"}, {"b", "y"}}, std::numeric_limits<double>::infinity(), {}}}},
      {"g", MetricType::kGauge, "G.", "", {{{}, -0.0, {}}, {{{"z", "1"}}, 123456789.125, {}}}},
  };
  for (Format format : {Format::kText004, Format::kOpenMetrics1}) {
    auto parsed = ParseToFamilies(Render(fs, format), format);
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    ASSERT_EQ(parsed->size(), fs.size());
    for (size_t i = 0; i < fs.size(); ++i) {
      EXPECT_EQ((*parsed)[i].name, fs[i].name);
      EXPECT_EQ((*parsed)[i].help, fs[i].help);
      ASSERT_EQ((*parsed)[i].samples.size(), fs[i].samples.size());
      for (size_t j = 0; j < fs[i].samples.size(); ++j) {
        EXPECT_EQ((*parsed)[i].samples[j].labels, fs[i].samples[j].labels);
        EXPECT_EQ((*parsed)[i].samples[j].value, fs[i].samples[j].value);
      }
    }
  }
}

}  // namespace
}  // namespace gpumon::exposition
