// The agent's configuration file (YAML), documented in docs/configuration.md.
//
//   listen: ":9400"           # HOST:PORT
//   names: native             # native | dcgm | both
//   hostname: gpu-node-01     # default: the machine's host name
//   nvml_library: libnvidia-ml.so.1
//   groups:                   # per metric group: an interval, or "off"
//     temperature: 1s
//     nvlink: 10s
//     fan: off
//   push:                     # job metrics pushed to the agent (docs/formats/push.md)
//     enabled: true           # Pushgateway paths and OTLP/HTTP on the agent's port
//     expiry: 10m             # drop a group this long after its last push; 0: never
//     max_groups: 10000
//     max_series_per_group: 10000
//     max_series: 200000      # all groups together
//     max_labels_per_series: 64
//     max_body_bytes: 4194304 # per push, as sent
//
// Contract: an unknown field, a value of the wrong kind, an unknown group or
// a bad duration is an error whose message names the file, line, column and
// field; nothing is partially applied.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

#include "common/status.h"
#include "gpu/catalog.h"
#include "gpu/family_builder.h"

namespace gpumon::gpu {

// The `push:` section; defaults match ingest::PushLimits.
struct AgentPushConfig {
  bool enabled = true;
  std::chrono::seconds expiry{600};
  size_t max_groups = 10'000;
  size_t max_series_per_group = 10'000;
  size_t max_series = 200'000;
  size_t max_labels_per_series = 64;
  size_t max_body_bytes = 4 << 20;
};

struct AgentConfig {
  std::optional<std::string> listen;
  std::optional<NameScheme> names;
  std::optional<std::string> hostname;
  std::optional<std::string> nvml_library;
  std::array<bool, kGroupCount> enabled;
  std::array<std::chrono::milliseconds, kGroupCount> interval;
  AgentPushConfig push;

  AgentConfig();  // every group on, at its default interval
};

// Parses YAML text; `file` names the source in error messages.
Result<AgentConfig> ParseAgentConfig(const std::string& text, const std::string& file);
Result<AgentConfig> LoadAgentConfig(const std::string& path);

}  // namespace gpumon::gpu
