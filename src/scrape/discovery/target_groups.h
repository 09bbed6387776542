// Helpers shared by the discovery mechanisms to build target groups the
// way Prometheus's discoverers label them.
//
// Contract:
// - JoinHostPort brackets IPv6 literals ("[::1]:80"), like Go's
//   net.JoinHostPort.
// - SanitizeLabelName replaces every character outside [a-zA-Z0-9_] with
//   "_" (Prometheus's strutil.SanitizeLabelName), for names derived from
//   user data (node metadata keys, Kubernetes labels).
// - SingleTarget builds a group of one target from an address and labels,
//   leaving out empty values (absent in Prometheus).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "scrape/config.h"

namespace gpumon::scrape::discovery {

std::string JoinHostPort(std::string_view host, std::string_view port);
std::string SanitizeLabelName(std::string_view name);
TargetGroup SingleTarget(const std::string& address, std::vector<Label> labels,
                         const std::string& source);

}  // namespace gpumon::scrape::discovery
