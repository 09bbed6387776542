// Printing an AST back to PromQL text, as Prometheus's String() and
// /api/v1/format_query do.
//
// Contract: Parse(Print(e)) yields a tree equal to e. Print is canonical:
// one space around binary operators, durations in the largest units
// (1h30m), matchers in source order with the name hoisted in front.
// Format() pretty-prints across lines like promql.Prettify for long
// expressions.
#pragma once

#include <string>

#include "promql/ast.h"

namespace gpumon::promql {

std::string Print(const Expr& e);
std::string Format(const Expr& e);
// 90000 → "1m30s", 0 → "0s".
std::string FormatDuration(int64_t ms);

}  // namespace gpumon::promql
