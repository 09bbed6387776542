// Type checking after parsing, in the order of Prometheus's checkAST so
// that the first reported error is the same one.

#include "promql/parser/check.h"

#include <cctype>

#include "promql/function_table.h"
#include "promql/parser/quote.h"

namespace gpumon::promql::internal {

const char* DocumentedType(ValueType t) {
  switch (t) {
    case ValueType::kMatrix:
      return "range vector";
    case ValueType::kVector:
      return "instant vector";
    case ValueType::kScalar:
      return "scalar";
    case ValueType::kString:
      return "string";
    case ValueType::kNone:
      return "none";
  }
  return "none";
}

namespace {

class Checker {
 public:
  explicit Checker(std::string_view q) : q_(q) {}

  std::optional<CheckError> error;

  ValueType Check(Expr& e) { return Check(e, false); }

  ValueType Check(Expr& e, bool bypass_empty_matcher_check) {
    const ValueType type = e.Type();
    if (error) return type;
    std::visit([&](auto& n) { CheckNode(e, n, bypass_empty_matcher_check); }, e.node);
    return type;
  }

 private:
  void Fail(PosRange pos, std::string msg) {
    if (!error) error = CheckError{pos, std::move(msg)};
  }

  void ExpectType(Expr& e, ValueType want, const char* context) {
    const ValueType t = Check(e);
    if (t != want) {
      Fail(e.pos, std::string("expected type ") + DocumentedType(want) + " in " + context +
                      ", got " + DocumentedType(t));
    }
  }

  void CheckNode(Expr&, NumberLiteral&, bool) {}
  void CheckNode(Expr&, StringLiteral&, bool) {}

  void CheckNode(Expr& e, VectorSelector& vs, bool bypass) {
    if (!vs.name.empty()) {
      // matchers[0] is the name written outside the braces.
      for (size_t i = 1; i < vs.matchers.size(); ++i) {
        if (vs.matchers[i].name() == "__name__") {
          Fail(e.pos, "metric name must not be set twice: " + GoQuote(vs.name) + " or " +
                          GoQuote(vs.matchers[i].value()));
        }
      }
      return;
    }
    if (bypass) return;
    for (const auto& m : vs.matchers) {
      if (!m.MatchesEmpty()) return;
    }
    Fail(e.pos, "vector selector must contain at least one non-empty matcher");
  }

  void CheckNode(Expr&, MatrixSelector& ms, bool) { Check(*ms.selector); }

  void CheckNode(Expr& e, Subquery& sq, bool) {
    const ValueType t = Check(*sq.expr);
    if (t != ValueType::kVector) {
      Fail(e.pos, std::string("subquery is only allowed on instant vector, got ") +
                      ValueTypeName(t) + " instead");
    }
  }

  void CheckNode(Expr&, Paren& p, bool) { Check(*p.expr); }

  void CheckNode(Expr& e, Unary& u, bool) {
    const ValueType t = Check(*u.expr);
    if (t != ValueType::kScalar && t != ValueType::kVector) {
      Fail(e.pos,
           std::string(
               "unary expression only allowed on expressions of type scalar or instant vector, "
               "got ") +
               GoQuote(DocumentedType(t)));
    }
  }

  // The operator's text range: between the operands, without spaces.
  PosRange OpRange(const Binary& b) const {
    int start = b.lhs->pos.end;
    int end = b.rhs->pos.start - 1;
    while (start < static_cast<int>(q_.size()) &&
           std::isspace(static_cast<unsigned char>(q_[start])))
      ++start;
    while (end > start && std::isspace(static_cast<unsigned char>(q_[end]))) --end;
    return PosRange{start, end};
  }

  void CheckNode(Expr& e, Binary& b, bool) {
    const ValueType lt = Check(*b.lhs);
    const ValueType rt = Check(*b.rhs);
    if (error) return;
    if (b.return_bool && !IsComparison(b.op)) {
      return Fail(OpRange(b), "bool modifier can only be used on comparison operators");
    }
    if (IsComparison(b.op) && !b.return_bool && lt == ValueType::kScalar &&
        rt == ValueType::kScalar) {
      return Fail(OpRange(b), "comparisons between scalars must use BOOL modifier");
    }
    if (b.matching && IsSetOperator(b.op) &&
        b.matching->card == VectorMatchCardinality::kOneToOne) {
      b.matching->card = VectorMatchCardinality::kManyToMany;
    }
    if (b.matching && b.matching->on) {
      for (const auto& l1 : b.matching->matching_labels) {
        for (const auto& l2 : b.matching->include) {
          if (l1 == l2) {
            return Fail(OpRange(b),
                        "label " + GoQuote(l1) + " must not occur in ON and GROUP clause at once");
          }
        }
      }
    }
    if (lt != ValueType::kScalar && lt != ValueType::kVector) {
      return Fail(b.lhs->pos,
                  "binary expression must contain only scalar and instant vector types");
    }
    if (rt != ValueType::kScalar && rt != ValueType::kVector) {
      return Fail(b.rhs->pos,
                  "binary expression must contain only scalar and instant vector types");
    }
    if ((lt != ValueType::kVector || rt != ValueType::kVector) && b.matching) {
      if (!b.matching->matching_labels.empty()) {
        return Fail(e.pos, "vector matching only allowed between instant vectors");
      }
      b.matching.reset();
    } else if (IsSetOperator(b.op) && b.matching) {
      if (b.matching->card == VectorMatchCardinality::kOneToMany ||
          b.matching->card == VectorMatchCardinality::kManyToOne) {
        return Fail(e.pos, std::string("no grouping allowed for ") + GoQuote(BinaryOpName(b.op)) +
                               " operation");
      }
      if (b.matching->card != VectorMatchCardinality::kManyToMany) {
        return Fail(e.pos, "set operations must always be many-to-many");
      }
    }
    if ((lt == ValueType::kScalar || rt == ValueType::kScalar) && IsSetOperator(b.op)) {
      return Fail(e.pos, std::string("set operator ") + GoQuote(BinaryOpName(b.op)) +
                             " not allowed in binary scalar expression");
    }
  }

  void CheckNode(Expr&, Aggregate& a, bool) {
    ExpectType(*a.expr, ValueType::kVector, "aggregation expression");
    switch (a.op) {
      case AggregateOp::kTopk:
      case AggregateOp::kBottomk:
      case AggregateOp::kQuantile:
      case AggregateOp::kLimitk:
      case AggregateOp::kLimitRatio:
        ExpectType(*a.param, ValueType::kScalar, "aggregation parameter");
        break;
      case AggregateOp::kCountValues:
        ExpectType(*a.param, ValueType::kString, "aggregation parameter");
        break;
      default:
        break;
    }
  }

  void CheckNode(Expr& e, Call& c, bool) {
    const FunctionDef& f = *c.func;
    const std::string fname = GoQuote(f.name);
    const int nargs = static_cast<int>(f.arg_types.size());
    const int given = static_cast<int>(c.args.size());
    if (f.variadic == 0) {
      if (nargs != given) {
        return Fail(e.pos, "expected " + std::to_string(nargs) + " argument(s) in call to " +
                               fname + ", got " + std::to_string(given));
      }
    } else {
      const int min = nargs - 1;
      if (min > given) {
        return Fail(e.pos, "expected at least " + std::to_string(min) + " argument(s) in call to " +
                               fname + ", got " + std::to_string(given));
      }
      if (f.variadic > 0 && min + f.variadic < given) {
        return Fail(e.pos, "expected at most " + std::to_string(min + f.variadic) +
                               " argument(s) in call to " + fname + ", got " +
                               std::to_string(given));
      }
    }
    bool bypass_second = false;
    if (f.name == "info" && given > 1) {
      if (c.args[1]->Type() != ValueType::kVector) {
        return Fail(e.pos, std::string("expected type instant vector in call to function ") +
                               fname + ", got " + DocumentedType(c.args[1]->Type()));
      }
      auto* vs = std::get_if<VectorSelector>(&c.args[1]->node);
      if (vs && !vs->name.empty()) {
        return Fail(c.args[1]->pos, "expected label selectors only, got vector selector instead");
      }
      if (!vs) return Fail(c.args[1]->pos, "expected label selectors only");
      bypass_second = true;
    }
    for (int i = 0; i < given; ++i) {
      int k = i;
      if (i >= nargs) {
        if (f.variadic == 0) break;
        k = nargs - 1;
      }
      const ValueType t = Check(*c.args[i], bypass_second && i == 1);
      if (error) return;
      if (t != f.arg_types[k]) {
        return Fail(c.args[i]->pos, std::string("expected type ") + DocumentedType(f.arg_types[k]) +
                                        " in call to function " + fname + ", got " +
                                        DocumentedType(t));
      }
    }
  }

  std::string_view q_;
};

}  // namespace

std::optional<CheckError> CheckTree(Expr& e, std::string_view query) {
  Checker c(query);
  c.Check(e);
  return c.error;
}

}  // namespace gpumon::promql::internal
