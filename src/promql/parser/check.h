// Type checking of a parsed PromQL tree (Prometheus's checkAST): argument
// types and counts, operand types, vector matching rules, selector
// validity. Normalises the tree the way Prometheus does (set operators
// become many-to-many, matching is dropped unless both sides are vectors).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "promql/ast.h"

namespace gpumon::promql::internal {

struct CheckError {
  PosRange pos;
  std::string message;
};

// Prometheus's DocumentedType: "range vector", "instant vector", ...
const char* DocumentedType(ValueType t);

// The first error in Prometheus's order, or nothing when the tree is valid.
std::optional<CheckError> CheckTree(Expr& e, std::string_view query);

}  // namespace gpumon::promql::internal
