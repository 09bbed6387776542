#include "gpu/agent_config.h"

#include <gtest/gtest.h>

namespace gpumon::gpu {
namespace {

TEST(AgentConfigTest, EmptyFileMeansDefaults) {
  auto cfg = ParseAgentConfig("", "agent.yml");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_FALSE(cfg->listen.has_value());
  for (int g = 0; g < kGroupCount; ++g) {
    EXPECT_TRUE(cfg->enabled[g]);
    EXPECT_EQ(cfg->interval[g], DefaultInterval(static_cast<Group>(g)));
  }
}

TEST(AgentConfigTest, ParsesAllFields) {
  auto cfg = ParseAgentConfig(
      "listen: 127.0.0.1:9401\n"
      "names: both\n"
      "hostname: node-7\n"
      "nvml_library: /opt/nvml.so\n"
      "groups:\n"
      "  temperature: 500ms\n"
      "  nvlink: off\n"
      "  ecc: 1m\n",
      "agent.yml");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(*cfg->listen, "127.0.0.1:9401");
  EXPECT_EQ(*cfg->names, NameScheme::kBoth);
  EXPECT_EQ(*cfg->hostname, "node-7");
  EXPECT_EQ(*cfg->nvml_library, "/opt/nvml.so");
  EXPECT_EQ(cfg->interval[static_cast<int>(Group::kTemperature)].count(), 500);
  EXPECT_FALSE(cfg->enabled[static_cast<int>(Group::kNvlink)]);
  EXPECT_EQ(cfg->interval[static_cast<int>(Group::kEcc)].count(), 60000);
  EXPECT_TRUE(cfg->enabled[static_cast<int>(Group::kPower)]);
}

struct BadCase {
  const char* text;
  const char* location;  // file:line expected in the message
  const char* mentions;  // field or reason expected in the message
};

TEST(AgentConfigTest, ErrorsNameFileLineAndField) {
  const BadCase cases[] = {
      {"listen: :9400\nlisen: :9401\n", "agent.yml:2:", "\"lisen\""},
      {"groups:\n  temperature: 1s\n  nvlnk: 5s\n", "agent.yml:3:", "groups.nvlnk"},
      {"groups:\n  power: fast\n", "agent.yml:2:", "groups.power"},
      {"groups:\n  power: 10ms\n", "agent.yml:2:", "at least 100ms"},
      {"names: prometheus\n", "agent.yml:1:", "naming scheme"},
      {"listen: [a, b]\n", "agent.yml:1:", "\"listen\""},
      {"groups: 5\n", "agent.yml:1:", "\"groups\""},
      {"names: native\nlisten: {a: 1\n", "agent.yml:", "invalid YAML"},
      {"- a\n- b\n", "agent.yml:1:", "mapping"},
      {"groups:\n  agent: 1s\n", "agent.yml:2:", "unknown metric group"},
  };
  for (const auto& c : cases) {
    auto cfg = ParseAgentConfig(c.text, "agent.yml");
    ASSERT_FALSE(cfg.ok()) << c.text;
    const std::string& m = cfg.status().message();
    EXPECT_NE(m.find(c.location), std::string::npos) << m;
    EXPECT_NE(m.find(c.mentions), std::string::npos) << m;
  }
}

TEST(AgentConfigTest, PushSectionDefaultsAndFields) {
  auto defaults = ParseAgentConfig("listen: :9400\n", "agent.yml");
  ASSERT_TRUE(defaults.ok()) << defaults.status().message();
  EXPECT_TRUE(defaults->push.enabled);
  EXPECT_EQ(defaults->push.expiry, std::chrono::seconds(600));

  auto cfg = ParseAgentConfig(
      "push:\n"
      "  enabled: false\n"
      "  expiry: 1m30s\n"
      "  max_groups: 7\n"
      "  max_series_per_group: 100\n"
      "  max_series: 1000\n"
      "  max_labels_per_series: 12\n"
      "  max_body_bytes: 65536\n",
      "agent.yml");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_FALSE(cfg->push.enabled);
  EXPECT_EQ(cfg->push.expiry, std::chrono::seconds(90));
  EXPECT_EQ(cfg->push.max_groups, 7u);
  EXPECT_EQ(cfg->push.max_series_per_group, 100u);
  EXPECT_EQ(cfg->push.max_series, 1000u);
  EXPECT_EQ(cfg->push.max_labels_per_series, 12u);
  EXPECT_EQ(cfg->push.max_body_bytes, 65536u);

  auto never = ParseAgentConfig("push:\n  expiry: 0\n", "agent.yml");
  ASSERT_TRUE(never.ok()) << never.status().message();
  EXPECT_EQ(never->push.expiry.count(), 0);
}

TEST(AgentConfigTest, PushErrorsNameFileLineAndField) {
  const BadCase cases[] = {
      {"push: on\n", "agent.yml:1:", "\"push\""},
      {"push:\n  enabled: yes please\n", "agent.yml:2:", "push.enabled"},
      {"push:\n  expiry: soon\n", "agent.yml:2:", "push.expiry"},
      {"push:\n  expiry: 1500ms\n", "agent.yml:2:", "whole seconds"},
      {"push:\n  max_series: -3\n", "agent.yml:2:", "push.max_series"},
      {"push:\n  max_series: 0\n", "agent.yml:2:", "at least 1"},
      {"push:\n  enabled: true\n  max_seris: 5\n", "agent.yml:3:", "push.max_seris"},
      {"push:\n  max_series: 10\n  max_series_per_group: 20\n",
       "agent.yml:2:", "must not exceed push.max_series"},
  };
  for (const auto& c : cases) {
    auto cfg = ParseAgentConfig(c.text, "agent.yml");
    ASSERT_FALSE(cfg.ok()) << c.text;
    const std::string& m = cfg.status().message();
    EXPECT_NE(m.find(c.location), std::string::npos) << m;
    EXPECT_NE(m.find(c.mentions), std::string::npos) << m;
  }
}

TEST(AgentConfigTest, MissingFileIsAnError) {
  auto cfg = LoadAgentConfig("/nonexistent/agent.yml");
  ASSERT_FALSE(cfg.ok());
  EXPECT_NE(cfg.status().message().find("/nonexistent/agent.yml"), std::string::npos);
}

}  // namespace
}  // namespace gpumon::gpu
