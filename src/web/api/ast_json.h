// The AST of a parsed query as JSON, in the shape Prometheus 3.x's
// /api/v1/parse_query returns (web/api/v1/translate_ast.go): one object per
// node with a "type" ("aggregation", "binaryExpr", "call",
// "matrixSelector", "subquery", "numberLiteral", "parenExpr",
// "stringLiteral", "unaryExpr", "vectorSelector") and the node's fields,
// keys in sorted order as Go writes maps. Durations are milliseconds.
#pragma once

#include "promql/ast.h"
#include "web/api/json_output.h"

namespace gpumon::web::api {

bool WriteAstJson(JsonWriter& w, const promql::Expr& e);

}  // namespace gpumon::web::api
