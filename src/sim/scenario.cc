#include "sim/scenario.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "common/duration.h"
#include "sim/noise.h"
#include "sim/spec_text.h"

namespace gpumon::sim {
namespace {

constexpr double kSecondMs = 1000;
constexpr double kMinuteMs = 60 * kSecondMs;
constexpr double kHourMs = 60 * kMinuteMs;
constexpr double kDayMs = 24 * kHourMs;

enum class KeyType { kDuration, kNumber, kInt, kEnum };

// One scenario-specific key: the accepted range and how its default is
// drawn (uniformly in [draw_lo, draw_hi]; equal bounds give a fixed
// default). Enum keys list their choices '|'-separated; the default is
// choice number draw_lo.
struct KeySpec {
  const char* key;
  KeyType type;
  double min, max;
  double draw_lo, draw_hi;
  const char* choices = nullptr;
};

struct KindSpec {
  ScenarioKind kind;
  const char* name;
  std::vector<KeySpec> keys;
};

const std::vector<KindSpec>& Kinds() {
  using K = KeyType;
  static const std::vector<KindSpec> kinds = {
      {ScenarioKind::kTraining,
       "training",
       {{"duration", K::kDuration, 0, 3650 * kDayMs, 0, 0},
        {"util", K::kNumber, 0.05, 1, 0.94, 0.99},
        {"checkpoint", K::kDuration, 0, 7 * kDayMs, 10 * kMinuteMs, 30 * kMinuteMs},
        {"pause", K::kDuration, kSecondMs, kHourMs, 30 * kSecondMs, 120 * kSecondMs}}},
      {ScenarioKind::kInference,
       "inference",
       {{"duration", K::kDuration, 0, 3650 * kDayMs, 0, 0},
        {"util", K::kNumber, 0.05, 0.95, 0.3, 0.6}}},
      {ScenarioKind::kThermalRunaway,
       "thermal-runaway",
       {{"time", K::kDuration, kMinuteMs, 7 * kDayMs, 20 * kMinuteMs, 60 * kMinuteMs},
        {"die", K::kNumber, 0, 1, 0.3, 0.6},
        {"hold", K::kDuration, 0, kDayMs, 3 * kMinuteMs, 10 * kMinuteMs},
        {"workload", K::kEnum, 0, 2, 0, 0, "training|inference|mix"}}},
      {ScenarioKind::kCoolingLoss,
       "cooling-loss",
       {{"duration", K::kDuration, 0, 3650 * kDayMs, 0, 0},
        {"ramp", K::kDuration, 0, kDayMs, 2 * kMinuteMs, 8 * kMinuteMs},
        {"ambient", K::kNumber, 0, 40, 12, 25},
        {"airflow", K::kNumber, 1, 4, 1.2, 1.8}}},
      {ScenarioKind::kEccStorm,
       "ecc-storm",
       {{"duration", K::kDuration, kSecondMs, 30 * kDayMs, 10 * kMinuteMs, 30 * kMinuteMs},
        {"rate", K::kNumber, 1, 100000, 600, 3000},
        {"gap", K::kDuration, 0, 30 * kDayMs, 2 * kMinuteMs, 10 * kMinuteMs}}},
      {ScenarioKind::kNvlinkFlap,
       "nvlink-flap",
       {{"link", K::kInt, 0, 17, 0, 0},  // default drawn over the GPU's links, below
        {"down", K::kDuration, kSecondMs, kDayMs, 5 * kSecondMs, 60 * kSecondMs},
        {"up", K::kDuration, kSecondMs, 30 * kDayMs, kMinuteMs, 10 * kMinuteMs},
        {"count", K::kInt, 0, 1000000, 3, 8},
        {"rate", K::kNumber, 0, 1000000, 200, 2000}}},
      {ScenarioKind::kPcieDegrade,
       "pcie-degrade",
       {{"width", K::kInt, 0, 16, 0, 0},  // 0: unchanged; defaults chosen below
        {"gen", K::kInt, 0, 6, 0, 0},
        {"rate", K::kNumber, 0, 1000000, 100, 1000}}},
      {ScenarioKind::kPowerBrake,
       "power-brake",
       {{"duration", K::kDuration, 0, 30 * kDayMs, 30 * kSecondMs, 5 * kMinuteMs},
        {"every", K::kDuration, 0, 30 * kDayMs, 0, 0},
        {"scale", K::kNumber, 0.1, 0.9, 0.3, 0.5}}},
      {ScenarioKind::kFallOffBus, "fall-off-bus", {}},
  };
  return kinds;
}

const KindSpec* FindKind(std::string_view name) {
  for (const KindSpec& k : Kinds()) {
    if (name == k.name) return &k;
  }
  return nullptr;
}

bool ParseNumber(std::string_view s, double* out) {
  if (s.empty() || s.size() > 64) return false;
  std::string copy(s);
  char* end = nullptr;
  const double v = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

// "3", "0-3", "1,5,7-9" -> sorted unique indexes < limit. Empty on error,
// with *why set.
std::vector<int> ParseIndexList(std::string_view s, int64_t limit, std::string* why) {
  std::set<int> out;
  for (std::string_view part : Split(s, ',')) {
    part = Trim(part);
    const size_t dash = part.find('-');
    int64_t lo = 0, hi = 0;
    if (dash == std::string_view::npos) {
      lo = hi = ParseUint(part, int64_t{1} << 31);
    } else {
      lo = ParseUint(Trim(part.substr(0, dash)), int64_t{1} << 31);
      hi = ParseUint(Trim(part.substr(dash + 1)), int64_t{1} << 31);
    }
    if (lo < 0 || hi < 0 || hi < lo) {
      *why = "\"" + std::string(s) + "\" is not an index, a range a-b or a list of them";
      return {};
    }
    if (hi >= limit) {
      *why = std::to_string(hi) + " out of range (" + std::to_string(limit) + " available)";
      return {};
    }
    for (int64_t i = lo; i <= hi; ++i) out.insert(static_cast<int>(i));
  }
  return {out.begin(), out.end()};
}

std::string FormatNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

uint64_t KeyHash(std::string_view key) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a
  for (char c : key) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return h;
}

// The seed's draw for `key` of scenario `index`, uniform in [0, 1).
double Draw(uint64_t seed, int index, std::string_view key) {
  return ToUnit(Hash(Hash(seed, 0x5ce7a410ULL + static_cast<uint64_t>(index)), KeyHash(key)));
}

std::string KeyList(const KindSpec& k) {
  std::string out = "gpu, gpus, node, nodes, start";
  for (const KeySpec& key : k.keys) out += std::string(", ") + key.key;
  return out;
}

// Which GPUs a scenario kind can apply to, and why not.
bool Eligible(ScenarioKind kind, const GpuProfile& p, std::string* why) {
  switch (kind) {
    case ScenarioKind::kThermalRunaway:
      if (p.has_memory_temperature && p.memory_max_operating_temp_c > 0) return true;
      *why = "has no HBM temperature sensor (use cooling-loss)";
      return false;
    case ScenarioKind::kEccStorm:
      if (p.has_ecc) return true;
      *why = "has no ECC";
      return false;
    case ScenarioKind::kNvlinkFlap:
      if (p.nvlink_links > 0) return true;
      *why = "has no NVLink";
      return false;
    default:
      return true;
  }
}

// Kinds one GPU can have at most once.
bool SingleInstance(ScenarioKind kind) {
  return kind == ScenarioKind::kThermalRunaway || kind == ScenarioKind::kCoolingLoss ||
         kind == ScenarioKind::kEccStorm || kind == ScenarioKind::kPcieDegrade ||
         kind == ScenarioKind::kFallOffBus;
}

Result<Scenario> ParseItem(std::string_view item, int index, const ScenarioContext& ctx) {
  auto fail = [&](const std::string& why) {
    return Status::Error("scenario \"" + std::string(item) + "\": " + why);
  };
  const FleetSpec& spec = *ctx.spec;
  std::vector<std::string_view> parts = Split(item, ':');
  const std::string_view name = Trim(parts[0]);
  const KindSpec* kind = FindKind(name);
  if (kind == nullptr) {
    std::string names;
    for (std::string_view n : ScenarioNames())
      names += (names.empty() ? "" : ", ") + std::string(n);
    return fail("unknown scenario \"" + std::string(name) + "\" (use " + names + ")");
  }
  Scenario s;
  s.kind = kind->kind;
  s.index = index;
  s.text = std::string(item);

  std::string gpu_text, node_text;
  bool have_start = false;
  std::vector<bool> given(kind->keys.size(), false);
  std::vector<double> values(kind->keys.size(), 0);
  std::vector<std::string> texts(kind->keys.size());
  for (size_t i = 1; i < parts.size(); ++i) {
    const std::string_view kv = Trim(parts[i]);
    const size_t eq = kv.find('=');
    if (eq == std::string_view::npos) {
      return fail("expected key=value, got \"" + std::string(kv) + "\"");
    }
    const std::string_view key = Trim(kv.substr(0, eq));
    const std::string_view value = Trim(kv.substr(eq + 1));
    if (key == "gpu" || key == "gpus" || key == "node" || key == "nodes") {
      const bool is_gpu = key[0] == 'g';
      std::string& slot = is_gpu ? gpu_text : node_text;
      if (!slot.empty()) return fail(std::string(is_gpu ? "gpu" : "node") + " given twice");
      if (value.empty()) return fail(std::string(key) + " needs a value");
      slot = std::string(value);
      continue;
    }
    if (key == "start") {
      if (have_start) return fail("start given twice");
      if (value != "0") {
        Result<std::chrono::milliseconds> d = ParseDuration(value);
        if (!d.ok()) return fail("start: " + d.status().message());
        s.start_ms = d.value().count();
      }
      have_start = true;
      continue;
    }
    size_t k = 0;
    while (k < kind->keys.size() && key != kind->keys[k].key) ++k;
    if (k == kind->keys.size()) {
      return fail("unknown key \"" + std::string(key) + "\" for " + kind->name + " (use " +
                  KeyList(*kind) + ")");
    }
    const KeySpec& ks = kind->keys[k];
    if (given[k]) return fail(std::string(ks.key) + " given twice");
    double v = 0;
    std::string range;
    switch (ks.type) {
      case KeyType::kDuration: {
        if (value != "0") {
          Result<std::chrono::milliseconds> d = ParseDuration(value);
          if (!d.ok()) return fail(std::string(ks.key) + ": " + d.status().message());
          v = static_cast<double>(d.value().count());
        }
        range = FormatDuration(std::chrono::milliseconds(static_cast<int64_t>(ks.min))) + ".." +
                FormatDuration(std::chrono::milliseconds(static_cast<int64_t>(ks.max)));
        break;
      }
      case KeyType::kNumber:
        if (!ParseNumber(value, &v)) {
          return fail(std::string(ks.key) + " \"" + std::string(value) + "\" is not a number");
        }
        range = FormatNumber(ks.min) + ".." + FormatNumber(ks.max);
        break;
      case KeyType::kInt: {
        const int64_t n = ParseUint(value, int64_t{1} << 40);
        if (n < 0) {
          return fail(std::string(ks.key) + " \"" + std::string(value) +
                      "\" is not a non-negative integer");
        }
        v = static_cast<double>(n);
        range = FormatNumber(ks.min) + ".." + FormatNumber(ks.max);
        break;
      }
      case KeyType::kEnum: {
        std::vector<std::string_view> choices = Split(ks.choices, '|');
        auto it = std::find(choices.begin(), choices.end(), value);
        if (it == choices.end()) {
          return fail(std::string(ks.key) + " \"" + std::string(value) + "\" must be one of " +
                      ks.choices);
        }
        v = static_cast<double>(it - choices.begin());
        texts[k] = std::string(value);
        break;
      }
    }
    if (ks.type != KeyType::kEnum && (v < ks.min || v > ks.max)) {
      return fail(std::string(ks.key) + " \"" + std::string(value) + "\" out of range (" + range +
                  ")");
    }
    values[k] = v;
    given[k] = true;
  }

  // Targets.
  const int total = spec.total;
  const int node_size = std::max(1, ctx.node_size);
  const int nodes_total = (total + node_size - 1) / node_size;
  std::string why;
  if (!node_text.empty()) {
    std::vector<int> nodes = ParseIndexList(node_text, nodes_total, &why);
    if (nodes.empty()) return fail("node " + why);
    std::vector<int> local;
    if (!gpu_text.empty()) {
      local = ParseIndexList(gpu_text, node_size, &why);
      if (local.empty())
        return fail("gpu " + why + " (a node has " + std::to_string(node_size) + " GPUs)");
    }
    for (int n : nodes) {
      if (local.empty()) {
        for (int g = n * node_size; g < std::min(total, (n + 1) * node_size); ++g) {
          s.gpus.push_back(g);
        }
      } else {
        for (int g : local) {
          const int global = n * node_size + g;
          if (global >= total) {
            return fail("node " + std::to_string(n) + " gpu " + std::to_string(g) +
                        " is past the fleet's " + std::to_string(total) + " GPUs");
          }
          s.gpus.push_back(global);
        }
      }
    }
  } else if (!gpu_text.empty()) {
    s.gpus = ParseIndexList(gpu_text, total, &why);
    if (s.gpus.empty()) return fail("gpu " + why);
  } else if (IsWorkloadScenario(s.kind)) {
    for (int g = 0; g < total; ++g) s.gpus.push_back(g);
  } else if (s.kind == ScenarioKind::kCoolingLoss) {
    const int count =
        std::min(nodes_total, 2 + static_cast<int>(Draw(ctx.seed, index, "nodes") * 3));
    const int first =
        static_cast<int>(Draw(ctx.seed, index, "first-node") * (nodes_total - count + 1));
    for (int g = first * node_size; g < std::min(total, (first + count) * node_size); ++g) {
      s.gpus.push_back(g);
    }
  } else {
    std::vector<int> eligible;
    for (int g = 0; g < total; ++g) {
      if (Eligible(s.kind, spec.ProfileOf(g), &why)) eligible.push_back(g);
    }
    if (eligible.empty()) return fail("no GPU of the fleet can have it: every one " + why);
    s.gpus.push_back(eligible[static_cast<size_t>(Draw(ctx.seed, index, "gpu") *
                                                  static_cast<double>(eligible.size()))]);
  }
  std::sort(s.gpus.begin(), s.gpus.end());
  s.gpus.erase(std::unique(s.gpus.begin(), s.gpus.end()), s.gpus.end());
  for (int g : s.gpus) {
    if (!Eligible(s.kind, spec.ProfileOf(g), &why)) {
      return fail("GPU " + std::to_string(g) + " (" + std::string(spec.ProfileOf(g).key) + ") " +
                  why);
    }
  }

  // Defaults: drawn per key from the seed.
  for (size_t k = 0; k < kind->keys.size(); ++k) {
    if (given[k]) continue;
    const KeySpec& ks = kind->keys[k];
    const double u = Draw(ctx.seed, index, ks.key);
    double v = ks.draw_lo + (ks.draw_hi - ks.draw_lo) * u;
    if (ks.type == KeyType::kInt) v = std::floor(ks.draw_lo + (ks.draw_hi - ks.draw_lo + 1) * u);
    if (ks.type == KeyType::kDuration) v = std::round(v / 1000) * 1000;  // whole seconds
    if (ks.type == KeyType::kNumber) v = std::round(v * 1000) / 1000;
    if (ks.type == KeyType::kEnum) texts[k] = std::string(Split(ks.choices, '|')[size_t(v)]);
    values[k] = v;
  }
  auto value_of = [&](const char* key) -> double& {
    for (size_t k = 0; k < kind->keys.size(); ++k) {
      if (std::string_view(kind->keys[k].key) == key) return values[k];
    }
    std::abort();
  };
  auto given_of = [&](const char* key) {
    for (size_t k = 0; k < kind->keys.size(); ++k) {
      if (std::string_view(kind->keys[k].key) == key) return static_cast<bool>(given[k]);
    }
    return false;
  };

  // Kind-specific defaults and checks that depend on the targets.
  switch (s.kind) {
    case ScenarioKind::kTraining:
      if (value_of("checkpoint") > 0 && value_of("checkpoint") <= value_of("pause")) {
        return fail("checkpoint must be 0 or longer than pause");
      }
      break;
    case ScenarioKind::kNvlinkFlap: {
      int links = 1 << 20;
      for (int g : s.gpus) links = std::min(links, spec.ProfileOf(g).nvlink_links);
      if (given_of("link")) {
        if (value_of("link") >= links) {
          return fail("link " + FormatNumber(value_of("link")) + " out of range (the GPUs have " +
                      std::to_string(links) + " links)");
        }
      } else {
        value_of("link") = std::floor(Draw(ctx.seed, index, "link") * links);
      }
      break;
    }
    case ScenarioKind::kPcieDegrade: {
      int max_width = 64, max_gen = 64;
      for (int g : s.gpus) {
        max_width = std::min(max_width, spec.ProfileOf(g).pcie_max_width);
        max_gen = std::min(max_gen, spec.ProfileOf(g).pcie_max_gen);
      }
      double& width = value_of("width");
      double& gen = value_of("gen");
      if (!given_of("width") && !given_of("gen")) {
        // A link trains either narrower or slower than it should.
        if (Draw(ctx.seed, index, "mode") < 0.5) {
          width = max_width / 2;
        } else {
          gen = max_gen - 1;
        }
      }
      const int w = static_cast<int>(width);
      if (given_of("width") && (w < 1 || (w & (w - 1)) != 0 || w >= max_width)) {
        return fail("width " + std::to_string(w) + " must be 1, 2, 4, ... below the GPUs' x" +
                    std::to_string(max_width));
      }
      if (given_of("gen") && (gen < 1 || gen >= max_gen)) {
        return fail("gen " + FormatNumber(gen) + " must be 1.." + std::to_string(max_gen - 1) +
                    " (below the GPUs' Gen" + std::to_string(max_gen) + ")");
      }
      break;
    }
    case ScenarioKind::kPowerBrake:
      if (value_of("every") > 0 &&
          (value_of("duration") == 0 || value_of("every") <= value_of("duration"))) {
        return fail("every must be 0 or longer than a nonzero duration");
      }
      break;
    default:
      break;
  }

  for (size_t k = 0; k < kind->keys.size(); ++k) {
    const KeySpec& ks = kind->keys[k];
    s.params.push_back(ScenarioParam{ks.key, values[k], ks.type == KeyType::kDuration,
                                     static_cast<bool>(given[k]), texts[k]});
  }
  return s;
}

}  // namespace

std::string_view ScenarioName(ScenarioKind kind) {
  for (const KindSpec& k : Kinds()) {
    if (k.kind == kind) return k.name;
  }
  return "unknown";
}

std::vector<std::string_view> ScenarioNames() {
  std::vector<std::string_view> out;
  for (const KindSpec& k : Kinds()) out.push_back(k.name);
  return out;
}

double Scenario::Get(std::string_view key) const {
  for (const ScenarioParam& p : params) {
    if (p.key == key) return p.value;
  }
  return 0;
}

const std::string& Scenario::GetText(std::string_view key) const {
  static const std::string kEmpty;
  for (const ScenarioParam& p : params) {
    if (p.key == key) return p.text;
  }
  return kEmpty;
}

bool Scenario::Given(std::string_view key) const {
  for (const ScenarioParam& p : params) {
    if (p.key == key) return p.given;
  }
  return false;
}

Result<std::vector<Scenario>> ParseScenarios(std::string_view text, const ScenarioContext& ctx) {
  std::vector<Scenario> out;
  int index = 0;
  for (std::string_view item : Split(text, ';')) {
    item = Trim(item);
    if (item.empty()) continue;
    Result<Scenario> s = ParseItem(item, index++, ctx);
    if (!s.ok()) return s.status();
    if (SingleInstance(s->kind)) {
      for (const Scenario& prev : out) {
        if (prev.kind != s->kind) continue;
        for (int g : s->gpus) {
          if (std::binary_search(prev.gpus.begin(), prev.gpus.end(), g)) {
            return Status::Error("scenario \"" + s->text + "\": GPU " + std::to_string(g) +
                                 " already has " + std::string(s->name()) + " from \"" + prev.text +
                                 "\"");
          }
        }
      }
    }
    out.push_back(std::move(s).value());
  }
  return out;
}

}  // namespace gpumon::sim
