#include "tsdb/downsample/aggregate.h"

#include <algorithm>
#include <string>
#include <vector>

namespace gpumon::tsdb::downsample {

std::string_view AggregateName(Aggregate a) {
  switch (a) {
    case Aggregate::kCount:
      return "count";
    case Aggregate::kCounter:
      return "counter";
    case Aggregate::kMax:
      return "max";
    case Aggregate::kMin:
      return "min";
    case Aggregate::kSum:
      return "sum";
  }
  return "";
}

std::optional<Aggregate> ParseAggregate(std::string_view name) {
  for (Aggregate a : kAllAggregates) {
    if (AggregateName(a) == name) return a;
  }
  return std::nullopt;
}

Labels WithAggregate(const Labels& base, Aggregate a) {
  std::vector<Label> items;
  items.reserve(base.size() + 1);
  bool added = false;
  for (const Label& l : base) {
    if (!added && l.name > kAggrLabel) {
      items.push_back({std::string(kAggrLabel), std::string(AggregateName(a))});
      added = true;
    }
    items.push_back(l);
  }
  if (!added) items.push_back({std::string(kAggrLabel), std::string(AggregateName(a))});
  return Labels::FromSorted(std::move(items));
}

Labels WithoutAggregate(const Labels& labels) {
  std::vector<Label> items;
  items.reserve(labels.size());
  for (const Label& l : labels) {
    if (l.name != kAggrLabel) items.push_back(l);
  }
  return Labels::FromSorted(std::move(items));
}

}  // namespace gpumon::tsdb::downsample
