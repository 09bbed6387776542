// Rewriting a PromQL expression from one metric naming scheme to another:
// metric names, label names, units (a scale factor) and series that the
// target scheme folds into one metric (selected by label values, or packed
// as bits of a mask). Generic: the caller supplies the mapping.
//
// Contract:
// - Every selector is rewritten, wherever it appears (functions, aggregations,
//   binary operands, subqueries, offset/@ kept). Every label name is renamed
//   through RewriteMap::labels: selector matchers, by/without, on/ignoring,
//   group_left/group_right, count_values's label, the label arguments of
//   label_replace, label_join, sort_by_label and sort_by_label_desc.
// - A source metric maps to one or more SelectorVariants. Each variant stands
//   for the source series whose `fixed_labels` have the given values; the
//   selector's matchers on those labels choose the variants, and the
//   rewritten expression puts the labels back (label_replace), so its result
//   carries the same label names and values as the source's (renamed), and
//   the same values in the source's units: an instant selector becomes
//   `(target / scale)` (or `* 1/scale` for a scale below 1), a bit variant
//   `floor(target / bit) % 2`; several variants are joined with `or`.
// - A range selector whose variant changes values cannot be rewritten in
//   place; the function applied to it is rewritten instead, by what it does
//   with a value mapping (see RangeFunctionClass): linear functions give
//   `f(target[r]) / scale`, stdvar_over_time divides by scale², functions
//   that ignore positive scaling or values altogether keep f(target[r]),
//   first_over_time/last_over_time commute with any per-sample mapping.
//   absent() and absent_over_time() of several variants are joined with
//   `and`, and get back only the labels the source selector fixed by
//   equality (what absent() reports). Anything else — another function over
//   such a range selector, a bit variant under a value-dependent range
//   function (rate, max_over_time, changes, ...), a bare range selector, a
//   regular-expression matcher on __name__ — is an error naming the
//   selector and the function.
// - Errors, too, for: a metric whose mapping has no variant matching the
//   selector, a mapping that is not `complete` when the selector does not fix
//   every fixed label with an equality matcher, a label listed in
//   `unmapped_labels`, and any name rejected by `unknown_metric`.
// - The result is a type-checked tree (it is printed and parsed back), so
//   Print() of it is a valid query.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "promql/ast.h"

namespace gpumon::promql {

// One way of computing some of a source metric's series in the target scheme.
struct SelectorVariant {
  std::string name;  // the target metric
  // Source label names (and values) of the series this variant stands for;
  // the target series lack these labels.
  std::vector<std::pair<std::string, std::string>> fixed_labels;
  double scale = 1;  // target value = source value × scale (> 0)
  uint64_t bit = 0;  // non-zero: source value = floor(target / bit) % 2
  // Added to the target selector (e.g. telling apart series that share the
  // target name).
  std::vector<tsdb::Matcher> matchers;
};

struct MetricMapping {
  std::vector<SelectorVariant> variants;
  // The variants cover every series the source metric has. When false, a
  // selector must fix each of the variants' fixed labels with `=`.
  bool complete = true;
};

struct RewriteMap {
  // Source metric name -> its variants in the target scheme.
  std::map<std::string, MetricMapping, std::less<>> metrics;
  // Source label name -> target label name; unlisted names are kept.
  std::map<std::string, std::string, std::less<>> labels;
  // Source label names with no target equivalent (referencing one fails).
  std::set<std::string, std::less<>> unmapped_labels;
  // Decides about a metric name absent from `metrics`: OK keeps it as is,
  // an error makes the expression untranslatable. Unset: kept.
  std::function<Status(std::string_view name)> unknown_metric;
};

// How a range function's result changes when its samples are mapped.
enum class RangeFunctionClass {
  kUnsupported,
  kLinear,          // f(k·x) = k·f(x), k > 0: rate, increase, avg_over_time, ...
  kQuadratic,       // f(k·x) = k²·f(x): stdvar_over_time
  kScaleInvariant,  // f(k·x) = f(x), k > 0: changes, resets, ts_of_max_over_time, ...
  kPointwise,       // f(g(x)) = g(f(x)) for any g: first_over_time, last_over_time
  kPresence,        // only sample presence/timestamps matter: count_over_time, ...
  kAbsent,          // absent_over_time
};
RangeFunctionClass ClassifyRangeFunction(std::string_view name);

// Rewrites `e` (a parsed, type-checked tree).
Result<ExprPtr> Rewrite(const Expr& e, const RewriteMap& map);
// Parses, rewrites and prints `query` (Format()-ed, i.e. split over lines
// when long, with `pretty`).
Result<std::string> RewriteQuery(std::string_view query, const RewriteMap& map,
                                 bool pretty = false);

// The label name `name` in the target scheme (itself when not mapped).
std::string RenameLabel(const RewriteMap& map, std::string_view name);

}  // namespace gpumon::promql
