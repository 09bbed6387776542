// A test-only S-expression rendering of an AST, independent of the
// printer, so tests can state the expected tree structure by hand.
#pragma once

#include <string>

#include "promql/ast.h"

namespace gpumon::promql::testing {

// e.g. (+ (sel foo [__name__="foo"]) (num 1)).
std::string Dump(const Expr& e);

}  // namespace gpumon::promql::testing
