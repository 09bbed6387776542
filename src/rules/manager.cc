#include "rules/manager.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "common/log.h"
#include "common/path_glob.h"
#include "promql/parser.h"
#include "rules/alerting_rule.h"
#include "rules/recording_rule.h"
#include "rules/rule_file.h"

namespace gpumon::rules {

namespace {

std::string Key(const std::string& file, const std::string& name) { return file + '\xff' + name; }

}  // namespace

Result<std::vector<std::shared_ptr<Group>>> BuildGroups(const RuleFileSpec& file,
                                                        int64_t default_interval_ms,
                                                        const Labels& external_labels,
                                                        const std::string& external_url,
                                                        bool should_restore, const GroupDeps* deps,
                                                        int64_t default_query_offset_ms) {
  std::vector<std::shared_ptr<Group>> out;
  for (const auto& g : file.groups) {
    std::vector<std::unique_ptr<Rule>> rules;
    for (const auto& r : g.rules) {
      promql::ParseResult p = promql::Parse(r.expr);
      if (!p.ok()) {
        return Status::Error(file.path + ":" + std::to_string(r.line) + ": group \"" + g.name +
                             "\": field \"expr\": " + p.error->ToString());
      }
      // Rule labels win over group labels.
      std::map<std::string, std::string> merged;
      for (const auto& l : g.labels) merged[l.name] = l.value;
      for (const auto& l : r.labels) merged[l.name] = l.value;
      std::vector<Label> ls;
      for (auto& [k, v] : merged) ls.push_back({k, v});
      Labels labels = Labels::FromSorted(std::move(ls));
      if (!r.alert.empty()) {
        rules.push_back(std::make_unique<AlertingRule>(
            r.alert, std::move(p.expr), r.for_ms, r.keep_firing_for_ms, labels, r.annotations,
            external_labels, external_url, /*restored=*/!should_restore));
      } else {
        rules.push_back(std::make_unique<RecordingRule>(r.record, std::move(p.expr), labels));
      }
    }
    GroupOptions opts;
    opts.name = g.name;
    opts.file = file.path;
    opts.interval_ms = g.interval_ms > 0 ? g.interval_ms : default_interval_ms;
    opts.limit = g.limit;
    opts.query_offset_ms = g.query_offset_ms.value_or(default_query_offset_ms);
    opts.should_restore = should_restore;
    out.push_back(std::make_shared<Group>(std::move(opts), std::move(rules), deps));
  }
  return out;
}

RuleManager::RuleManager(RuleManagerOptions opts) : opts_(std::move(opts)) {
  deps_.engine = opts_.engine;
  deps_.queryable = opts_.queryable;
  deps_.appender = opts_.appender;
  deps_.notify = opts_.notify;
  deps_.resend_delay_ms = opts_.resend_delay_ms;
  deps_.outage_tolerance_ms = opts_.outage_tolerance_ms;
  deps_.for_grace_period_ms = opts_.for_grace_period_ms;
  deps_.now_ms = opts_.now_ms;
}

RuleManager::~RuleManager() { Stop(); }

int64_t RuleManager::Now() const {
  if (opts_.now_ms) return opts_.now_ms();
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Status RuleManager::Update(int64_t interval_ms, std::vector<std::string> files,
                           Labels external_labels) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> paths;
  for (const auto& pattern : files) {
    auto matched = GlobPaths(pattern);
    if (matched.empty()) LogWarn("rules: rule file pattern \"" + pattern + "\" matches no file");
    for (auto& m : matched) {
      if (std::find(paths.begin(), paths.end(), m) == paths.end()) paths.push_back(m);
    }
  }
  const bool should_restore = !restored_;
  std::vector<std::shared_ptr<Group>> fresh;
  std::string errors;
  for (const auto& path : paths) {
    auto spec = LoadRuleFile(path);
    if (!spec.ok()) {
      errors += (errors.empty() ? "" : "\n") + spec.status().message();
      continue;
    }
    auto groups = BuildGroups(spec.value(), interval_ms, external_labels, opts_.external_url,
                              should_restore, &deps_, opts_.query_offset_ms);
    if (!groups.ok()) {
      errors += (errors.empty() ? "" : "\n") + groups.status().message();
      continue;
    }
    fresh.insert(fresh.end(), groups.value().begin(), groups.value().end());
  }
  if (!errors.empty()) {
    return Status::Error("error loading rules, previous rule set restored:\n" + errors);
  }
  restored_ = true;

  std::map<std::string, std::shared_ptr<Group>> old;
  for (auto& g : groups_) old[Key(g->file(), g->name())] = g;
  std::vector<std::shared_ptr<Group>> next;
  for (auto& g : fresh) {
    auto it = old.find(Key(g->file(), g->name()));
    if (it != old.end() && it->second->Equals(*g)) {
      next.push_back(it->second);
      old.erase(it);
      continue;
    }
    if (it != old.end()) {
      it->second->Stop();
      g->CopyState(*it->second);
      old.erase(it);
    }
    if (running_) g->Start();
    next.push_back(g);
  }
  const int64_t now = Now();
  for (auto& [k, g] : old) {
    g->Stop();
    g->MarkAllStale(now);
  }
  std::sort(next.begin(), next.end(), [](const auto& a, const auto& b) {
    return std::tie(a->file(), a->name()) < std::tie(b->file(), b->name());
  });
  groups_ = std::move(next);
  return Status::Ok();
}

void RuleManager::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  running_ = true;
  for (auto& g : groups_) g->Start();
}

void RuleManager::Stop() {
  std::lock_guard<std::mutex> lock(mu_);
  running_ = false;
  for (auto& g : groups_) g->Stop();
}

std::vector<std::shared_ptr<Group>> RuleManager::Groups() const {
  std::lock_guard<std::mutex> lock(mu_);
  return groups_;
}

}  // namespace gpumon::rules
