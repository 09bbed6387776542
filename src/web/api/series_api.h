// The series and label endpoints of the HTTP API: /api/v1/series,
// /api/v1/labels, /api/v1/label/<name>/values and /api/v1/metadata.
//
// Contract (Prometheus's):
// - series: match[] (required, repeatable), start, end (default: all
//   time), limit; series in label order, each once across match[] sets.
// - labels, label values: optional match[] (union over sets), start, end,
//   limit; sorted, unique.
// - A match[] that matches every series (only empty-matching matchers) is
//   bad_data "match[] must contain at least one non-empty matcher".
// - limit > 0 cuts the list and warns "results truncated due to limit".
// - metadata: metric, limit, limit_per_metric; what the backend knows
//   ({} when nothing).
#pragma once

#include "web/api/backend.h"
#include "web/api/params.h"
#include "web/api/response.h"

namespace gpumon::web::api {

class SeriesApi {
 public:
  explicit SeriesApi(ApiBackend& backend) : backend_(backend) {}

  ApiResponse Series(const Params& p);
  ApiResponse LabelNames(const Params& p);
  ApiResponse LabelValues(const std::string& name, const Params& p);
  ApiResponse Metadata(const Params& p);

 private:
  ApiBackend& backend_;
};

}  // namespace gpumon::web::api
