// Turns a collector's snapshot into metric families in the chosen naming
// scheme(s): native (Prometheus conventions), DCGM-compatible
// (dcgm-exporter's names, units and labels), or both.
//
// Contract: families come out in catalog order; families with no samples are
// omitted; two catalog metrics sharing a DCGM name (whole-GPU and MIG-instance
// framebuffer) are merged into one family. Agent self-metrics keep their
// native names in every scheme. With options.simulated every sample carries
// simulated="true".
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "exposition/metric_family.h"
#include "gpu/collector.h"

namespace gpumon::gpu {

enum class NameScheme { kNative, kDcgm, kBoth };

std::optional<NameScheme> NameSchemeFromString(std::string_view s);

void BuildFamilies(const GpuCollector& collector, const Snapshot& snapshot, NameScheme scheme,
                   std::vector<exposition::MetricFamily>* out);

}  // namespace gpumon::gpu
