#include "sim/fault_schedule.h"

#include <algorithm>

#include "common/duration.h"
#include "sim/spec_text.h"

namespace gpumon::sim {
namespace {

Result<Fault> ParseItem(std::string_view item, int gpu_count) {
  auto fail = [&](const std::string& why) {
    return Status::Error("fault \"" + std::string(item) + "\": " + why);
  };
  std::vector<std::string_view> parts = Split(item, ':');
  Fault fault;
  fault.text = std::string(item);
  std::string_view kind = Trim(parts[0]);
  if (kind == "xid") {
    fault.kind = FaultKind::kXid;
  } else if (kind == "lost") {
    fault.kind = FaultKind::kLost;
  } else if (kind == "hot") {
    fault.kind = FaultKind::kHot;
  } else if (kind == "ecc") {
    fault.kind = FaultKind::kEcc;
  } else {
    return fail("unknown kind \"" + std::string(kind) + "\" (use xid, lost, hot, ecc)");
  }
  bool have_gpu = false;
  bool have_code = false;
  bool have_at = false;
  for (size_t i = 1; i < parts.size(); ++i) {
    std::string_view kv = Trim(parts[i]);
    size_t eq = kv.find('=');
    if (eq == std::string_view::npos) {
      return fail("expected key=value, got \"" + std::string(kv) + "\"");
    }
    std::string_view key = Trim(kv.substr(0, eq));
    std::string_view value = Trim(kv.substr(eq + 1));
    if (key == "gpu") {
      if (have_gpu) return fail("gpu given twice");
      int64_t gpu = ParseUint(value, int64_t{1} << 31);
      if (gpu < 0) return fail("gpu \"" + std::string(value) + "\" is not a GPU index");
      if (gpu >= gpu_count) {
        return fail("gpu " + std::to_string(gpu) + " out of range (fleet has " +
                    std::to_string(gpu_count) + " GPUs)");
      }
      fault.gpu = static_cast<int>(gpu);
      have_gpu = true;
    } else if (key == "code") {
      if (fault.kind != FaultKind::kXid) return fail("code applies only to xid faults");
      if (have_code) return fail("code given twice");
      int64_t code = ParseUint(value, 65535);
      if (code < 1) return fail("code \"" + std::string(value) + "\" must be 1..65535");
      fault.xid = static_cast<uint32_t>(code);
      have_code = true;
    } else if (key == "at") {
      if (have_at) return fail("at given twice");
      Result<std::chrono::milliseconds> at = ParseDuration(value);
      if (!at.ok()) return fail(at.status().message());
      fault.at_ms = at.value().count();
      have_at = true;
    } else {
      return fail("unknown key \"" + std::string(key) + "\" (use gpu, at, code)");
    }
  }
  if (!have_gpu) return fail("missing gpu=<index>");
  if (fault.kind == FaultKind::kXid && !have_code) return fail("missing code=<xid>");
  return fault;
}

}  // namespace

Result<std::vector<Fault>> ParseFaultSchedule(std::string_view text, int gpu_count) {
  std::vector<Fault> faults;
  for (std::string_view item : Split(text, ';')) {
    item = Trim(item);
    if (item.empty()) continue;
    Result<Fault> fault = ParseItem(item, gpu_count);
    if (!fault.ok()) return fault.status();
    faults.push_back(std::move(fault).value());
  }
  std::stable_sort(faults.begin(), faults.end(),
                   [](const Fault& a, const Fault& b) { return a.at_ms < b.at_ms; });
  return faults;
}

}  // namespace gpumon::sim
