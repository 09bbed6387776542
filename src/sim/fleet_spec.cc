#include "sim/fleet_spec.h"

#include <cstdint>

namespace gpumon::sim {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string ValidKeys() {
  std::string out;
  for (std::string_view key : ProfileKeys()) {
    if (!out.empty()) out += ", ";
    out += key;
  }
  return out;
}

// Parses a positive decimal count; returns -1 when malformed or too large.
int ParseCount(std::string_view s) {
  if (s.empty()) return -1;
  int64_t n = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return -1;
    n = n * 10 + (c - '0');
    if (n > kMaxFleetSize) return -1;
  }
  return static_cast<int>(n);
}

}  // namespace

const GpuProfile& FleetSpec::ProfileOf(int index) const {
  for (const FleetSpecEntry& e : entries) {
    if (index < e.count) return *e.profile;
    index -= e.count;
  }
  return *entries.back().profile;
}

Result<FleetSpec> ParseFleetSpec(std::string_view text) {
  FleetSpec spec;
  auto fail = [&](std::string_view part, const std::string& why) {
    return Status::Error("fleet spec \"" + std::string(text) + "\": part \"" + std::string(part) +
                         "\": " + why + " (expected <model>x<count>; models: " + ValidKeys() + ")");
  };
  if (Trim(text).empty()) return fail("", "empty spec");
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view part = Trim(text.substr(pos, comma - pos));
    pos = comma + 1;
    if (part.empty()) return fail(part, "empty part");

    FleetSpecEntry entry;
    // A bare key is one GPU. Otherwise split at the last 'x', since keys such
    // as "rtx4080s" contain an 'x' themselves.
    if (const GpuProfile* whole = FindProfile(part)) {
      entry = {whole, 1};
    } else {
      size_t x = part.rfind('x');
      if (x == std::string_view::npos) return fail(part, "unknown model");
      std::string_view key = part.substr(0, x);
      std::string_view count_text = part.substr(x + 1);
      const GpuProfile* p = FindProfile(key);
      if (p == nullptr) {
        return fail(part, "unknown model \"" + std::string(key) + "\"");
      }
      int count = ParseCount(count_text);
      if (count < 1) {
        return fail(part, "count \"" + std::string(count_text) + "\" must be an integer in 1.." +
                              std::to_string(kMaxFleetSize));
      }
      entry = {p, count};
    }
    if (spec.total + entry.count > kMaxFleetSize) {
      return fail(part, "fleet exceeds " + std::to_string(kMaxFleetSize) + " GPUs");
    }
    spec.total += entry.count;
    spec.entries.push_back(entry);
    if (comma == text.size()) break;
  }
  return spec;
}

}  // namespace gpumon::sim
