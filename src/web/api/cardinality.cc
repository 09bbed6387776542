#include "web/api/cardinality.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace gpumon::web::api {
namespace {

std::vector<NamedCount> Top(std::vector<NamedCount> all, size_t limit) {
  auto by_value = [](const NamedCount& a, const NamedCount& b) {
    return a.value != b.value ? a.value > b.value : a.name < b.name;
  };
  if (all.size() > limit) {
    std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(limit), all.end(),
                      by_value);
    all.resize(limit);
  } else {
    std::sort(all.begin(), all.end(), by_value);
  }
  return all;
}

}  // namespace

Result<Cardinality> ComputeCardinality(const tsdb::Querier& querier, size_t limit) {
  // A matcher every series passes (absent labels read as "").
  auto all = tsdb::Matcher::Make(tsdb::MatchType::kRegexMatch, std::string(kMetricName), ".*");
  if (!all.ok()) return all.status();
  std::vector<tsdb::Matcher> matchers{*all};
  auto set = querier.Select(matchers);
  // name → value → series count
  std::map<std::string, std::unordered_map<std::string, uint64_t>> pairs;
  Cardinality c;
  while (set->Next()) {
    ++c.num_series;
    for (const Label& l : set->labels()) ++pairs[l.name][l.value];
  }
  if (!set->status().ok()) return set->status();

  std::vector<NamedCount> metrics, values, memory, pair_counts;
  for (const auto& [name, vals] : pairs) {
    values.push_back({name, vals.size()});
    c.num_label_pairs += vals.size();
    uint64_t bytes = 0;
    for (const auto& [value, series] : vals) {
      if (name == kMetricName) metrics.push_back({value, series});
      pair_counts.push_back({name + "=" + value, series});
      bytes += (name.size() + value.size()) * series;
    }
    memory.push_back({name, bytes});
  }
  c.series_by_metric_name = Top(std::move(metrics), limit);
  c.label_values_by_label_name = Top(std::move(values), limit);
  c.memory_by_label_name = Top(std::move(memory), limit);
  c.series_by_label_pair = Top(std::move(pair_counts), limit);
  return c;
}

}  // namespace gpumon::web::api
