// Names of AST enums, expression types and deep copies.

#include "promql/ast.h"

#include <type_traits>

#include "promql/function_table.h"

namespace gpumon::promql {

const char* ValueTypeName(ValueType t) {
  switch (t) {
    case ValueType::kNone:
      return "none";
    case ValueType::kScalar:
      return "scalar";
    case ValueType::kVector:
      return "vector";
    case ValueType::kMatrix:
      return "matrix";
    case ValueType::kString:
      return "string";
  }
  return "none";
}

const char* BinaryOpName(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd:
      return "+";
    case BinaryOp::kSub:
      return "-";
    case BinaryOp::kMul:
      return "*";
    case BinaryOp::kDiv:
      return "/";
    case BinaryOp::kMod:
      return "%";
    case BinaryOp::kPow:
      return "^";
    case BinaryOp::kAtan2:
      return "atan2";
    case BinaryOp::kEql:
      return "==";
    case BinaryOp::kNeq:
      return "!=";
    case BinaryOp::kGtr:
      return ">";
    case BinaryOp::kLss:
      return "<";
    case BinaryOp::kGte:
      return ">=";
    case BinaryOp::kLte:
      return "<=";
    case BinaryOp::kAnd:
      return "and";
    case BinaryOp::kOr:
      return "or";
    case BinaryOp::kUnless:
      return "unless";
  }
  return "?";
}

bool IsComparison(BinaryOp op) {
  switch (op) {
    case BinaryOp::kEql:
    case BinaryOp::kNeq:
    case BinaryOp::kGtr:
    case BinaryOp::kLss:
    case BinaryOp::kGte:
    case BinaryOp::kLte:
      return true;
    default:
      return false;
  }
}

bool IsSetOperator(BinaryOp op) {
  return op == BinaryOp::kAnd || op == BinaryOp::kOr || op == BinaryOp::kUnless;
}

const char* AggregateOpName(AggregateOp op) {
  switch (op) {
    case AggregateOp::kSum:
      return "sum";
    case AggregateOp::kAvg:
      return "avg";
    case AggregateOp::kCount:
      return "count";
    case AggregateOp::kMin:
      return "min";
    case AggregateOp::kMax:
      return "max";
    case AggregateOp::kGroup:
      return "group";
    case AggregateOp::kStddev:
      return "stddev";
    case AggregateOp::kStdvar:
      return "stdvar";
    case AggregateOp::kTopk:
      return "topk";
    case AggregateOp::kBottomk:
      return "bottomk";
    case AggregateOp::kQuantile:
      return "quantile";
    case AggregateOp::kCountValues:
      return "count_values";
    case AggregateOp::kLimitk:
      return "limitk";
    case AggregateOp::kLimitRatio:
      return "limit_ratio";
  }
  return "?";
}

ValueType Expr::Type() const {
  return std::visit(
      [](const auto& n) -> ValueType {
        using T = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<T, NumberLiteral>) {
          return ValueType::kScalar;
        } else if constexpr (std::is_same_v<T, StringLiteral>) {
          return ValueType::kString;
        } else if constexpr (std::is_same_v<T, VectorSelector>) {
          return ValueType::kVector;
        } else if constexpr (std::is_same_v<T, MatrixSelector> || std::is_same_v<T, Subquery>) {
          return ValueType::kMatrix;
        } else if constexpr (std::is_same_v<T, Paren> || std::is_same_v<T, Unary>) {
          return n.expr ? n.expr->Type() : ValueType::kNone;
        } else if constexpr (std::is_same_v<T, Binary>) {
          if (n.lhs && n.rhs && n.lhs->Type() == ValueType::kScalar &&
              n.rhs->Type() == ValueType::kScalar) {
            return ValueType::kScalar;
          }
          return ValueType::kVector;
        } else if constexpr (std::is_same_v<T, Aggregate>) {
          return ValueType::kVector;
        } else {
          static_assert(std::is_same_v<T, Call>);
          return n.func ? n.func->return_type : ValueType::kNone;
        }
      },
      node);
}

namespace {
ExprPtr CloneOrNull(const ExprPtr& e) { return e ? Clone(*e) : nullptr; }
}  // namespace

ExprPtr Clone(const Expr& e) {
  auto out = std::make_unique<Expr>();
  out->pos = e.pos;
  out->node = std::visit(
      [](const auto& n) -> decltype(Expr::node) {
        using T = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<T, NumberLiteral> || std::is_same_v<T, StringLiteral> ||
                      std::is_same_v<T, VectorSelector>) {
          return n;
        } else if constexpr (std::is_same_v<T, MatrixSelector>) {
          return MatrixSelector{CloneOrNull(n.selector), n.range_ms};
        } else if constexpr (std::is_same_v<T, Subquery>) {
          return Subquery{CloneOrNull(n.expr), n.range_ms, n.step_ms, n.offset_ms, n.at, n.at_ms};
        } else if constexpr (std::is_same_v<T, Paren>) {
          return Paren{CloneOrNull(n.expr)};
        } else if constexpr (std::is_same_v<T, Unary>) {
          return Unary{n.negate, CloneOrNull(n.expr)};
        } else if constexpr (std::is_same_v<T, Binary>) {
          return Binary{n.op, CloneOrNull(n.lhs), CloneOrNull(n.rhs), n.return_bool, n.matching};
        } else if constexpr (std::is_same_v<T, Aggregate>) {
          return Aggregate{n.op, CloneOrNull(n.expr), CloneOrNull(n.param), n.grouping, n.without};
        } else {
          static_assert(std::is_same_v<T, Call>);
          Call c;
          c.func = n.func;
          c.args.reserve(n.args.size());
          for (const auto& a : n.args) c.args.push_back(CloneOrNull(a));
          return c;
        }
      },
      e.node);
  return out;
}

}  // namespace gpumon::promql
