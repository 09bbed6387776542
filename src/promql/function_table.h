// The PromQL functions known to the parser: name, argument types and
// return type (Prometheus 3.x, experimental functions included). The
// implementations live in functions/ and are looked up by name.
#pragma once

#include <string_view>
#include <vector>

#include "promql/ast.h"

namespace gpumon::promql {

struct FunctionDef {
  std::string_view name;
  std::vector<ValueType> arg_types;
  // 0: exactly arg_types.size() arguments; n > 0: up to n of the trailing
  // arguments may be omitted; -1: the last argument type repeats without
  // limit (label_join).
  int variadic = 0;
  ValueType return_type = ValueType::kVector;
  bool experimental = false;
};

// nullptr when no function has that name.
const FunctionDef* FindFunction(std::string_view name);
// Every known function, for documentation and tests.
const std::vector<FunctionDef>& AllFunctions();

}  // namespace gpumon::promql
