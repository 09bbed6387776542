// The PromQL abstract syntax tree, as the parser produces it and the engine
// evaluates it. Mirrors Prometheus's promql/parser AST.
//
// Contract:
// - Every node records the byte range of the query text it came from
//   (PosRange, offsets into the original string), for error messages.
// - A parsed tree is type-checked: every Call names a known function with
//   arguments of the right types and count, binary operators only combine
//   operands they accept, aggregation parameters have the right type.
// - VectorSelector::matchers always holds every matcher, including the
//   __name__="x" matcher implied by a leading metric name (name keeps the
//   bare name, "" when the selector has none).
// - Durations, offsets and @ timestamps are integers in milliseconds.
// - Printing a tree (printer.h) gives a query that parses to the same tree.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "tsdb/matcher.h"

namespace gpumon::promql {

enum class ValueType { kNone, kScalar, kVector, kMatrix, kString };
const char* ValueTypeName(ValueType t);  // "scalar", "vector", "matrix", "string"

struct PosRange {
  int start = 0;  // byte offset of the first character
  int end = 0;    // byte offset one past the last character
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

enum class BinaryOp {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,
  kPow,
  kAtan2,  // arithmetic
  kEql,
  kNeq,
  kGtr,
  kLss,
  kGte,
  kLte,  // comparison
  kAnd,
  kOr,
  kUnless,  // set
};
const char* BinaryOpName(BinaryOp op);  // "+", "==", "and", "atan2", ...
bool IsComparison(BinaryOp op);
bool IsSetOperator(BinaryOp op);

enum class AggregateOp {
  kSum,
  kAvg,
  kCount,
  kMin,
  kMax,
  kGroup,
  kStddev,
  kStdvar,
  kTopk,
  kBottomk,
  kQuantile,
  kCountValues,
  kLimitk,
  kLimitRatio,
};
const char* AggregateOpName(AggregateOp op);  // "sum", "count_values", ...

// The `@` modifier of a selector or subquery.
enum class AtModifier { kNone, kTimestamp, kStart, kEnd };

struct NumberLiteral {
  double value = 0;
};

struct StringLiteral {
  std::string value;  // unescaped
};

struct VectorSelector {
  std::string name;                     // "" when only matchers are given
  std::vector<tsdb::Matcher> matchers;  // all of them, in source order
  int64_t offset_ms = 0;                // may be negative
  AtModifier at = AtModifier::kNone;
  int64_t at_ms = 0;  // with AtModifier::kTimestamp
};

// vector_selector[range]. `selector` is always a VectorSelector node; its
// offset/@ apply to the range (Prometheus writes them after the brackets).
struct MatrixSelector {
  ExprPtr selector;
  int64_t range_ms = 0;
};

// expr[range:step]. step_ms == 0 means "the default evaluation interval".
struct Subquery {
  ExprPtr expr;
  int64_t range_ms = 0;
  int64_t step_ms = 0;
  int64_t offset_ms = 0;
  AtModifier at = AtModifier::kNone;
  int64_t at_ms = 0;
};

struct Paren {
  ExprPtr expr;
};

struct Unary {
  bool negate = false;  // '-' (true) or '+' (false)
  ExprPtr expr;
};

enum class VectorMatchCardinality { kOneToOne, kManyToOne, kOneToMany, kManyToMany };

struct VectorMatching {
  VectorMatchCardinality card = VectorMatchCardinality::kOneToOne;
  std::vector<std::string> matching_labels;  // on(...) / ignoring(...) labels
  bool on = false;                   // true: on(...); false: ignoring(...) (or nothing given)
  std::vector<std::string> include;  // group_left(...) / group_right(...) labels
};

struct Binary {
  BinaryOp op = BinaryOp::kAdd;
  ExprPtr lhs;
  ExprPtr rhs;
  bool return_bool = false;  // the `bool` modifier of comparisons
  // Present when both sides are vectors (set operators are always
  // many-to-many).
  std::optional<VectorMatching> matching;
};

struct Aggregate {
  AggregateOp op = AggregateOp::kSum;
  ExprPtr expr;
  ExprPtr param;  // topk/bottomk/quantile/count_values/limitk/limit_ratio
  std::vector<std::string> grouping;
  bool without = false;
};

struct FunctionDef;  // function_table.h

struct Call {
  const FunctionDef* func = nullptr;  // never null in a parsed tree
  std::vector<ExprPtr> args;
};

struct Expr {
  std::variant<NumberLiteral, StringLiteral, VectorSelector, MatrixSelector, Subquery, Paren, Unary,
               Binary, Aggregate, Call>
      node;
  PosRange pos;

  // The type this expression evaluates to.
  ValueType Type() const;
};

// Deep copy (the engine rewrites trees, e.g. to resolve @ start()/end()).
ExprPtr Clone(const Expr& e);

}  // namespace gpumon::promql
