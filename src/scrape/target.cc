#include "scrape/target.h"

#include <set>

#include "common/duration.h"

namespace gpumon::scrape {
namespace {

std::string UrlEscape(std::string_view s) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace

uint64_t Target::Hash() const {
  // FNV-1a over the URL, mixed with the label hash: stable across runs.
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : url) h = (h ^ c) * 1099511628211ULL;
  return h ^ (labels.Hash() * 0x9e3779b97f4a7c15ULL);
}

Result<std::optional<Target>> BuildTarget(const std::string& address, const TargetGroup& group,
                                          const ScrapeConfig& config) {
  std::vector<Label> items(group.labels.begin(), group.labels.end());
  std::set<std::string> have;
  for (const auto& l : items) have.insert(l.name);
  auto set_default = [&](const std::string& name, const std::string& value) {
    if (have.insert(name).second) items.push_back({name, value});
  };
  // The address is the target's own label: it wins over the group's.
  std::erase_if(items, [](const Label& l) { return l.name == "__address__"; });
  items.push_back({"__address__", address});
  have.insert("__address__");
  set_default("job", config.job_name);
  set_default("__scrape_interval__",
              FormatDuration(std::chrono::milliseconds(config.scrape_interval_ms)));
  set_default("__scrape_timeout__",
              FormatDuration(std::chrono::milliseconds(config.scrape_timeout_ms)));
  set_default("__metrics_path__", config.metrics_path);
  set_default("__scheme__", config.scheme);
  for (const auto& [name, values] : config.params) {
    if (!values.empty()) set_default("__param_" + name, values.front());
  }
  Target t;
  t.scrape_pool = config.job_name;
  t.discovered = Labels::FromUnsorted(items);
  auto relabeled = Relabel(t.discovered, config.relabel_configs);
  if (!relabeled) return std::optional<Target>();
  const Labels& lb = *relabeled;
  const std::string addr(lb.Get("__address__"));
  if (addr.empty()) return Status::Error("no address");
  auto interval = ParseDuration(lb.Get("__scrape_interval__"));
  if (!interval.ok())
    return Status::Error("error parsing scrape interval: " + interval.status().message());
  auto timeout = ParseDuration(lb.Get("__scrape_timeout__"));
  if (!timeout.ok())
    return Status::Error("error parsing scrape timeout: " + timeout.status().message());
  if (interval->count() == 0) return Status::Error("scrape interval cannot be 0");
  if (timeout->count() == 0) return Status::Error("scrape timeout cannot be 0");
  if (timeout->count() > interval->count()) {
    return Status::Error("scrape timeout cannot be greater than scrape interval (\"" +
                         std::string(lb.Get("__scrape_timeout__")) + "\" > \"" +
                         std::string(lb.Get("__scrape_interval__")) + "\")");
  }
  t.interval_ms = interval->count();
  t.timeout_ms = timeout->count();

  // URL: config params, with __param_* labels replacing the first value.
  std::map<std::string, std::vector<std::string>> params = config.params;
  std::vector<Label> kept;
  for (const auto& l : lb) {
    if (l.name.starts_with("__param_")) {
      auto& vals = params[l.name.substr(8)];
      if (vals.empty()) {
        vals.push_back(l.value);
      } else {
        vals[0] = l.value;
      }
    }
    if (!l.name.starts_with("__")) kept.push_back(l);
  }
  std::string query;
  for (const auto& [name, values] : params) {
    for (const auto& v : values) {
      query += (query.empty() ? "?" : "&") + UrlEscape(name) + "=" + UrlEscape(v);
    }
  }
  t.url = std::string(lb.Get("__scheme__")) + "://" + addr +
          std::string(lb.Get("__metrics_path__")) + query;
  if (!lb.Has("instance")) kept.push_back({"instance", addr});
  t.labels = Labels::FromUnsorted(std::move(kept));
  return std::optional<Target>(std::move(t));
}

std::vector<Target> BuildTargets(const std::vector<TargetGroup>& groups, const ScrapeConfig& config,
                                 std::vector<std::string>* errors) {
  std::vector<Target> out;
  std::set<uint64_t> seen;
  for (const auto& g : groups) {
    for (const auto& addr : g.targets) {
      auto t = BuildTarget(addr, g, config);
      if (!t.ok()) {
        if (errors) {
          errors->push_back("job \"" + config.job_name + "\", target \"" + addr +
                            "\": " + t.status().message());
        }
        continue;
      }
      if (!t->has_value()) continue;
      if (!seen.insert((*t)->Hash()).second) continue;
      out.push_back(std::move(**t));
    }
  }
  return out;
}

}  // namespace gpumon::scrape
