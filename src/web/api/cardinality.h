// Cardinality statistics for /api/v1/status/tsdb, computed by walking the
// series a querier selects (Prometheus computes them from the head's
// postings; the numbers have the same meaning).
//
// Contract: every list is sorted by value descending, then name, and cut
// to `limit` entries:
// - series_by_metric_name: series per __name__ value;
// - label_values_by_label_name: distinct values per label name;
// - memory_by_label_name: sum over the label's values of
//   (len(name) + len(value)) × series carrying that pair;
// - series_by_label_pair: series per "name=value".
// num_label_pairs counts distinct name=value pairs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "tsdb/storage.h"

namespace gpumon::web::api {

struct NamedCount {
  std::string name;
  uint64_t value = 0;
};

struct Cardinality {
  uint64_t num_series = 0;
  uint64_t num_label_pairs = 0;
  std::vector<NamedCount> series_by_metric_name;
  std::vector<NamedCount> label_values_by_label_name;
  std::vector<NamedCount> memory_by_label_name;
  std::vector<NamedCount> series_by_label_pair;
};

Result<Cardinality> ComputeCardinality(const tsdb::Querier& querier, size_t limit);

}  // namespace gpumon::web::api
