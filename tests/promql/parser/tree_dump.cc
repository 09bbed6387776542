// Test-only AST rendering (see tree_dump.h).

#include "tree_dump.h"

#include <cstdio>
#include <type_traits>

#include "promql/function_table.h"

namespace gpumon::promql::testing {
namespace {

std::string Num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

std::string Mods(AtModifier at, int64_t at_ms, int64_t offset_ms) {
  std::string s;
  if (offset_ms != 0) s += " off=" + std::to_string(offset_ms);
  if (at == AtModifier::kTimestamp) s += " at=" + std::to_string(at_ms);
  if (at == AtModifier::kStart) s += " at=start";
  if (at == AtModifier::kEnd) s += " at=end";
  return s;
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + v[i];
  return s;
}

}  // namespace

std::string Dump(const Expr& e) {
  return std::visit(
      [](const auto& n) -> std::string {
        using T = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<T, NumberLiteral>) {
          return "(num " + Num(n.value) + ")";
        } else if constexpr (std::is_same_v<T, StringLiteral>) {
          return "(str " + n.value + ")";
        } else if constexpr (std::is_same_v<T, VectorSelector>) {
          std::string s = "(sel " + n.name + " [";
          for (size_t i = 0; i < n.matchers.size(); ++i) {
            s += (i ? "," : "") + n.matchers[i].ToString();
          }
          return s + "]" + Mods(n.at, n.at_ms, n.offset_ms) + ")";
        } else if constexpr (std::is_same_v<T, MatrixSelector>) {
          return "(range " + Dump(*n.selector) + " " + std::to_string(n.range_ms) + ")";
        } else if constexpr (std::is_same_v<T, Subquery>) {
          return "(subq " + Dump(*n.expr) + " " + std::to_string(n.range_ms) + ":" +
                 std::to_string(n.step_ms) + Mods(n.at, n.at_ms, n.offset_ms) + ")";
        } else if constexpr (std::is_same_v<T, Paren>) {
          return "(paren " + Dump(*n.expr) + ")";
        } else if constexpr (std::is_same_v<T, Unary>) {
          return std::string("(") + (n.negate ? "neg " : "pos ") + Dump(*n.expr) + ")";
        } else if constexpr (std::is_same_v<T, Binary>) {
          std::string s = std::string("(") + BinaryOpName(n.op);
          if (n.return_bool) s += " bool";
          if (n.matching) {
            const auto& m = *n.matching;
            static const char* kCard[] = {"1:1", "n:1", "1:n", "n:n"};
            s += std::string(" {") + kCard[static_cast<int>(m.card)];
            if (m.on) s += " on(" + Join(m.matching_labels) + ")";
            if (!m.on && !m.matching_labels.empty()) {
              s += " ignoring(" + Join(m.matching_labels) + ")";
            }
            if (!m.include.empty()) s += " include(" + Join(m.include) + ")";
            s += "}";
          }
          return s + " " + Dump(*n.lhs) + " " + Dump(*n.rhs) + ")";
        } else if constexpr (std::is_same_v<T, Aggregate>) {
          std::string s = std::string("(") + AggregateOpName(n.op);
          if (n.without) s += " without(" + Join(n.grouping) + ")";
          if (!n.without && !n.grouping.empty()) s += " by(" + Join(n.grouping) + ")";
          if (n.param) s += " " + Dump(*n.param);
          return s + " " + Dump(*n.expr) + ")";
        } else {
          std::string s = "(call " + std::string(n.func->name);
          for (const auto& a : n.args) s += " " + Dump(*a);
          return s + ")";
        }
      },
      e.node);
}

}  // namespace gpumon::promql::testing
