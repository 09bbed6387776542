#include "sim/fleet_spec.h"

#include <cstdint>

#include "sim/spec_text.h"

namespace gpumon::sim {
namespace {

std::string ValidKeys() {
  std::string out;
  for (std::string_view key : ProfileKeys()) {
    if (!out.empty()) out += ", ";
    out += key;
  }
  return out;
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
  for (std::string_view part : Split(text, ',')) {
    part = Trim(part);
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
      const int count = static_cast<int>(ParseUint(count_text, kMaxFleetSize));
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
  }
  return spec;
}

}  // namespace gpumon::sim
