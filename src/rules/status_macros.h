// Early-return helpers for Status / Result<T> inside the rules module.
// Private to src/rules: the common module has no such macros yet.
#pragma once

#include <utility>

#include "common/status.h"

#define GPUMON_RULES_CONCAT_INNER(a, b) a##b
#define GPUMON_RULES_CONCAT(a, b) GPUMON_RULES_CONCAT_INNER(a, b)

// Returns the Status if it is an error.
#define GPUMON_RETURN_IF_ERROR(expr) \
  do {                               \
    ::gpumon::Status _st = (expr);   \
    if (!_st.ok()) return _st;       \
  } while (0)

// `lhs` = the value of a Result expression, or returns its Status.
#define GPUMON_ASSIGN_OR_RETURN(lhs, expr) \
  GPUMON_ASSIGN_OR_RETURN_IMPL(GPUMON_RULES_CONCAT(_res_, __LINE__), lhs, expr)
#define GPUMON_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(tmp).value()
