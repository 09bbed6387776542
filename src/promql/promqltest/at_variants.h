// The extra instant queries Prometheus's promqltest derives from every
// instant eval: the query with `@ <eval time>` pinned on each selector and
// subquery, evaluated at other times, must give the same result.
//
// Contract:
// - Every vector/matrix selector and every subquery without an explicit
//   `@ <timestamp>` gets `@ ts`; nothing below a subquery that has (or
//   got) one is touched.
// - Returns no variants when the query calls a function whose value
//   depends on the evaluation time even with pinned inputs (time(),
//   timestamp(), hour(), predict_linear(), ...), outside such subqueries.
// - Evaluation times: -10ts, 0, ts/5, ts, 10ts; for ts == 0: -1000, 0, 1000.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "promql/ast.h"

namespace gpumon::promql::promqltest {

struct AtVariant {
  std::string query;  // the rewritten query, printed
  int64_t eval_ms = 0;
};

std::vector<AtVariant> AtModifierVariants(const Expr& expr, int64_t ts_ms);

// Calls fn for every VectorSelector in the tree (also those inside matrix
// selectors and subqueries).
void ForEachVectorSelector(const Expr& expr, const std::function<void(const VectorSelector&)>& fn);

}  // namespace gpumon::promql::promqltest
