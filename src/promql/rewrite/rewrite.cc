// Naming-scheme rewrite of PromQL trees (promql/rewrite.h). Replacements
// that need new structure (scaling, bits, label_replace, or/and joins) are
// written as query text and parsed, so they are type-checked like any query.

#include "promql/rewrite.h"

#include <charconv>
#include <cmath>
#include <optional>

#include "common/labels.h"
#include "promql/function_table.h"
#include "promql/parser.h"
#include "promql/parser/quote.h"
#include "promql/printer.h"

namespace gpumon::promql {
namespace {

using internal::GoQuote;

struct RangeFunction {
  std::string_view name;
  RangeFunctionClass cls;
};

constexpr RangeFunction kRangeFunctions[] = {
    {"rate", RangeFunctionClass::kLinear},
    {"irate", RangeFunctionClass::kLinear},
    {"increase", RangeFunctionClass::kLinear},
    {"delta", RangeFunctionClass::kLinear},
    {"idelta", RangeFunctionClass::kLinear},
    {"deriv", RangeFunctionClass::kLinear},
    {"predict_linear", RangeFunctionClass::kLinear},
    {"double_exponential_smoothing", RangeFunctionClass::kLinear},
    {"avg_over_time", RangeFunctionClass::kLinear},
    {"min_over_time", RangeFunctionClass::kLinear},
    {"max_over_time", RangeFunctionClass::kLinear},
    {"sum_over_time", RangeFunctionClass::kLinear},
    {"quantile_over_time", RangeFunctionClass::kLinear},
    {"stddev_over_time", RangeFunctionClass::kLinear},
    {"mad_over_time", RangeFunctionClass::kLinear},
    {"stdvar_over_time", RangeFunctionClass::kQuadratic},
    {"changes", RangeFunctionClass::kScaleInvariant},
    {"resets", RangeFunctionClass::kScaleInvariant},
    {"ts_of_max_over_time", RangeFunctionClass::kScaleInvariant},
    {"ts_of_min_over_time", RangeFunctionClass::kScaleInvariant},
    {"first_over_time", RangeFunctionClass::kPointwise},
    {"last_over_time", RangeFunctionClass::kPointwise},
    {"count_over_time", RangeFunctionClass::kPresence},
    {"present_over_time", RangeFunctionClass::kPresence},
    {"ts_of_first_over_time", RangeFunctionClass::kPresence},
    {"ts_of_last_over_time", RangeFunctionClass::kPresence},
    {"absent_over_time", RangeFunctionClass::kAbsent},
};

ExprPtr MakeExpr(auto node, PosRange pos) {
  auto e = std::make_unique<Expr>();
  e->node = std::move(node);
  e->pos = pos;
  return e;
}

// A number as PromQL text: integers without a fraction, else the shortest
// round-trip form.
std::string NumberText(double v) {
  double r = std::round(v);
  if (std::fabs(v - r) <= 1e-9 * std::max(1.0, std::fabs(v)) && std::fabs(r) < 1e15) {
    return std::to_string(static_cast<int64_t>(r));
  }
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

// `text` (an operand of `/` or `*`) converted from target to source units.
std::string UnscaleText(const std::string& text, double scale) {
  if (scale == 1) return text;
  if (scale > 1) return text + " / " + NumberText(scale);
  return text + " * " + NumberText(1 / scale);
}

std::string BitText(const std::string& text, uint64_t bit) {
  if (bit == 1) return text + " % 2";
  return "floor(" + text + " / " + std::to_string(bit) + ") % 2";
}

// Whether a variant leaves sample values as they are.
bool KeepsValues(const SelectorVariant& v) { return v.scale == 1 && v.bit == 0; }

// Parses query text the rewrite wrote; it failing to parse is a bug here.
Result<ExprPtr> ParseRewritten(const std::string& text) {
  ParseResult p = Parse(text);
  if (!p.ok()) {
    return Status::Error("internal error: rewritten query does not parse: " + p.error->ToString() +
                         ": " + text);
  }
  return std::move(p.expr);
}

// One target selector standing for (some of) a source selector's series.
struct Piece {
  const SelectorVariant* variant = nullptr;  // null: the name is not mapped
  VectorSelector selector;
};

struct Resolution {
  std::vector<Piece> pieces;
  // Fixed labels the source selector set with `=`, as (target name, value).
  std::vector<std::pair<std::string, std::string>> equal_fixed;
  bool trivial = false;  // rewrite in place: one piece, values and labels kept
};

class Rewriter {
 public:
  explicit Rewriter(const RewriteMap& map) : map_(map) {}

  Result<ExprPtr> Expr_(const Expr& e) {
    return std::visit([&](const auto& n) { return Node(e, n); }, e.node);
  }

 private:
  Result<std::string> Label(std::string_view name) {
    if (map_.unmapped_labels.count(name)) {
      return Status::Error("label \"" + std::string(name) +
                           "\" has no equivalent in the target naming");
    }
    return RenameLabel(map_, name);
  }

  Result<std::vector<std::string>> Labels_(const std::vector<std::string>& in) {
    std::vector<std::string> out;
    for (const auto& l : in) {
      auto r = Label(l);
      if (!r.ok()) return r.status();
      out.push_back(*r);
    }
    return out;
  }

  static std::string SelectorText(const VectorSelector& vs) {
    Expr e;
    e.node = vs;
    return Print(e);
  }

  static std::string MatrixText(const VectorSelector& vs, int64_t range_ms) {
    Expr e;
    e.node = MatrixSelector{MakeExpr(vs, {}), range_ms};
    return Print(e);
  }

  // The source selector's series in the target scheme.
  Result<Resolution> Resolve(const VectorSelector& vs) {
    std::string name = vs.name;
    for (const auto& m : vs.matchers) {
      if (m.name() != kMetricName) continue;
      if (m.type() == tsdb::MatchType::kEqual && (name.empty() || name == m.value())) {
        name = m.value();
      } else {
        return Status::Error(SelectorText(vs) + ": the metric name matcher " + m.ToString() +
                             " cannot be translated");
      }
    }
    Resolution res;
    const MetricMapping* mapping = nullptr;
    if (!name.empty()) {
      auto it = map_.metrics.find(name);
      if (it != map_.metrics.end()) {
        mapping = &it->second;
      } else if (map_.unknown_metric) {
        Status s = map_.unknown_metric(name);
        if (!s.ok()) return s;
      }
    }
    // The labels that variants fix; matchers on them choose the variants.
    std::set<std::string, std::less<>> fixed;
    if (mapping) {
      for (const auto& v : mapping->variants) {
        for (const auto& [l, value] : v.fixed_labels) fixed.insert(l);
      }
    }
    std::vector<tsdb::Matcher> kept;
    std::vector<const tsdb::Matcher*> choosing;
    for (const auto& m : vs.matchers) {
      if (m.name() == kMetricName) continue;
      if (fixed.count(m.name())) {
        choosing.push_back(&m);
        continue;
      }
      auto l = Label(m.name());
      if (!l.ok()) return l.status().WithContext(SelectorText(vs));
      auto nm = tsdb::Matcher::Make(m.type(), *l, m.value());
      if (!nm.ok()) return nm.status();
      kept.push_back(std::move(*nm));
    }
    auto target = [&](const std::string& target_name,
                      const std::vector<tsdb::Matcher>& extra = {}) -> Result<VectorSelector> {
      VectorSelector out = vs;
      out.name = target_name;
      out.matchers.clear();
      if (!target_name.empty()) {
        auto nm =
            tsdb::Matcher::Make(tsdb::MatchType::kEqual, std::string(kMetricName), target_name);
        if (!nm.ok()) return nm.status();
        out.matchers.push_back(std::move(*nm));
      }
      for (const auto& m : extra) out.matchers.push_back(m);
      for (const auto& m : kept) out.matchers.push_back(m);
      return out;
    };
    if (!mapping) {
      auto sel = target(name);
      if (!sel.ok()) return sel.status();
      res.pieces.push_back({nullptr, std::move(*sel)});
      res.trivial = true;
      return res;
    }
    if (!mapping->complete) {
      for (const auto& l : fixed) {
        bool pinned = false;
        for (const auto* m : choosing) {
          pinned = pinned || (m->name() == l && m->type() == tsdb::MatchType::kEqual);
        }
        if (!pinned) {
          return Status::Error(SelectorText(vs) + ": the target naming has only " +
                               VariantList(*mapping) + "; select one with " + l + "=\"...\"");
        }
      }
    }
    for (const auto* m : choosing) {
      if (m->type() != tsdb::MatchType::kEqual) continue;
      auto l = Label(m->name());
      if (!l.ok()) return l.status();
      res.equal_fixed.push_back({*l, m->value()});
    }
    for (const auto& v : mapping->variants) {
      bool match = true;
      for (const auto* m : choosing) {
        std::string_view value;
        for (const auto& [l, val] : v.fixed_labels) {
          if (l == m->name()) value = val;
        }
        match = match && m->Matches(value);
      }
      if (!match) continue;
      if (v.scale <= 0) return Status::Error(v.name + ": scale must be positive");
      auto sel = target(v.name, v.matchers);
      if (!sel.ok()) return sel.status();
      res.pieces.push_back({&v, std::move(*sel)});
    }
    if (res.pieces.empty()) {
      return Status::Error(SelectorText(vs) + " has no equivalent in the target naming (it has " +
                           VariantList(*mapping) + ")");
    }
    res.trivial = res.pieces.size() == 1 && KeepsValues(*res.pieces[0].variant) &&
                  res.pieces[0].variant->fixed_labels.empty();
    return res;
  }

  static std::string VariantList(const MetricMapping& m) {
    std::string out;
    for (const auto& v : m.variants) {
      if (!out.empty()) out += ", ";
      if (v.fixed_labels.empty()) out += "all series";
      for (size_t i = 0; i < v.fixed_labels.size(); ++i) {
        out += (i ? "," : "") + v.fixed_labels[i].first + "=\"" + v.fixed_labels[i].second + "\"";
      }
    }
    return out.empty() ? "no series" : out;
  }

  // label_replace calls putting `labels` (source names) back onto `text`.
  Result<std::string> Restore(std::string text,
                              const std::vector<std::pair<std::string, std::string>>& labels,
                              bool rename) {
    for (const auto& [l, value] : labels) {
      std::string target = l;
      if (rename) {
        auto r = Label(l);
        if (!r.ok()) return r.status();
        target = *r;
      }
      std::string replacement;
      for (char c : value) {
        replacement += c;
        if (c == '$') replacement += '$';  // literal $ in label_replace's replacement
      }
      text = "label_replace(" + text + ", " + GoQuote(target) + ", " + GoQuote(replacement) +
             ", \"\", \"\")";
    }
    return text;
  }

  // A piece's text and whether a single one needs parentheses (it is a
  // binary expression).
  using Part = std::pair<std::string, bool>;

  // Joins piece texts with `op`.
  static std::string Join(const std::vector<Part>& parts, const char* op) {
    if (parts.size() == 1) return parts[0].second ? "(" + parts[0].first + ")" : parts[0].first;
    std::string out = "(";
    for (size_t i = 0; i < parts.size(); ++i) {
      if (i) out += std::string(" ") + op + " ";
      out += parts[i].first;
    }
    return out + ")";
  }

  Result<ExprPtr> ParseText(const std::string& text, PosRange pos) {
    auto parsed = ParseRewritten(text);
    if (!parsed.ok()) return parsed.status();
    (*parsed)->pos = pos;
    return parsed;
  }

  // The pieces of `res` joined with "or": `part` writes each piece's text,
  // then the labels its variant fixes are put back with label_replace.
  template <typename PartFn>
  Result<ExprPtr> JoinPieces(const Resolution& res, PosRange pos, PartFn&& part) {
    std::vector<Part> parts;
    for (const auto& p : res.pieces) {
      Result<Part> one = part(p);
      if (!one.ok()) return one.status();
      auto& [text, binary] = *one;
      const SelectorVariant& v = *p.variant;
      if (!v.fixed_labels.empty()) {
        auto r = Restore(text, v.fixed_labels, true);
        if (!r.ok()) return r.status();
        text = *r;
        binary = false;
      }
      parts.push_back(std::move(*one));
    }
    return ParseText(Join(parts, "or"), pos);
  }

  Result<ExprPtr> Node(const Expr& e, const NumberLiteral&) { return Clone(e); }
  Result<ExprPtr> Node(const Expr& e, const StringLiteral&) { return Clone(e); }

  Result<ExprPtr> Node(const Expr& e, const VectorSelector& vs) {
    auto res = Resolve(vs);
    if (!res.ok()) return res.status();
    if (res->trivial) return MakeExpr(res->pieces[0].selector, e.pos);
    return JoinPieces(*res, e.pos, [&](const Piece& p) -> Result<Part> {
      const SelectorVariant& v = *p.variant;
      const std::string text = SelectorText(p.selector);
      return Part{v.bit ? BitText(text, v.bit) : UnscaleText(text, v.scale), !KeepsValues(v)};
    });
  }

  Result<ExprPtr> Node(const Expr& e, const MatrixSelector& ms) {
    const auto& vs = std::get<VectorSelector>(ms.selector->node);
    auto res = Resolve(vs);
    if (!res.ok()) return res.status();
    if (!res->trivial) {
      return Status::Error(MatrixText(vs, ms.range_ms) +
                           ": a range selector whose values or labels change can only be "
                           "translated as the argument of a supported range function");
    }
    return MakeExpr(
        MatrixSelector{MakeExpr(res->pieces[0].selector, ms.selector->pos), ms.range_ms}, e.pos);
  }

  Result<ExprPtr> Node(const Expr& e, const Subquery& sq) {
    auto inner = Expr_(*sq.expr);
    if (!inner.ok()) return inner.status();
    return MakeExpr(
        Subquery{std::move(*inner), sq.range_ms, sq.step_ms, sq.offset_ms, sq.at, sq.at_ms}, e.pos);
  }

  Result<ExprPtr> Node(const Expr& e, const Paren& p) {
    auto inner = Expr_(*p.expr);
    if (!inner.ok()) return inner.status();
    return MakeExpr(Paren{std::move(*inner)}, e.pos);
  }

  Result<ExprPtr> Node(const Expr& e, const Unary& u) {
    auto inner = Expr_(*u.expr);
    if (!inner.ok()) return inner.status();
    return MakeExpr(Unary{u.negate, std::move(*inner)}, e.pos);
  }

  Result<ExprPtr> Node(const Expr& e, const Binary& b) {
    auto lhs = Expr_(*b.lhs);
    if (!lhs.ok()) return lhs.status();
    auto rhs = Expr_(*b.rhs);
    if (!rhs.ok()) return rhs.status();
    std::optional<VectorMatching> matching = b.matching;
    if (matching) {
      auto on = Labels_(matching->matching_labels);
      if (!on.ok()) return on.status();
      auto include = Labels_(matching->include);
      if (!include.ok()) return include.status();
      matching->matching_labels = std::move(*on);
      matching->include = std::move(*include);
    }
    return MakeExpr(Binary{b.op, std::move(*lhs), std::move(*rhs), b.return_bool, matching}, e.pos);
  }

  Result<ExprPtr> Node(const Expr& e, const Aggregate& a) {
    auto inner = Expr_(*a.expr);
    if (!inner.ok()) return inner.status();
    ExprPtr param;
    if (a.param) {
      if (a.op == AggregateOp::kCountValues) {
        auto p = LabelArg(*a.param);
        if (!p.ok()) return p.status();
        param = std::move(*p);
      } else {
        auto p = Expr_(*a.param);
        if (!p.ok()) return p.status();
        param = std::move(*p);
      }
    }
    auto grouping = Labels_(a.grouping);
    if (!grouping.ok()) return grouping.status();
    return MakeExpr(
        Aggregate{a.op, std::move(*inner), std::move(param), std::move(*grouping), a.without},
        e.pos);
  }

  // A string literal naming a label.
  Result<ExprPtr> LabelArg(const Expr& arg) {
    const auto* s = std::get_if<StringLiteral>(&arg.node);
    if (!s) return Expr_(arg);
    auto l = Label(s->value);
    if (!l.ok()) return l.status();
    return MakeExpr(StringLiteral{*l}, arg.pos);
  }

  static bool IsLabelArg(std::string_view f, size_t i) {
    if (f == "label_replace") return i == 1 || i == 3;
    if (f == "label_join") return i == 1 || i >= 3;
    if (f == "sort_by_label" || f == "sort_by_label_desc") return i >= 1;
    return false;
  }

  Result<ExprPtr> Node(const Expr& e, const Call& c) {
    std::string_view f = c.func->name;
    // The argument whose selector may need the call rewritten around it.
    std::optional<size_t> sel_arg;
    for (size_t i = 0; i < c.args.size(); ++i) {
      const auto& node = c.args[i]->node;
      if (std::holds_alternative<MatrixSelector>(node)) sel_arg = i;
      if ((f == "absent" || f == "timestamp") && std::holds_alternative<VectorSelector>(node)) {
        sel_arg = i;
      }
    }
    std::vector<ExprPtr> args;
    for (size_t i = 0; i < c.args.size(); ++i) {
      if (sel_arg && i == *sel_arg) {
        args.push_back(nullptr);
        continue;
      }
      auto a = IsLabelArg(f, i) ? LabelArg(*c.args[i]) : Expr_(*c.args[i]);
      if (!a.ok()) return a.status();
      args.push_back(std::move(*a));
    }
    if (sel_arg) {
      const Expr& arg = *c.args[*sel_arg];
      const auto* ms = std::get_if<MatrixSelector>(&arg.node);
      const VectorSelector& vs =
          ms ? std::get<VectorSelector>(ms->selector->node) : std::get<VectorSelector>(arg.node);
      auto res = Resolve(vs);
      if (!res.ok()) return res.status();
      if (!res->trivial) return CallOverPieces(e, c, *sel_arg, ms, *res, args);
      args[*sel_arg] =
          ms ? MakeExpr(MatrixSelector{MakeExpr(res->pieces[0].selector, ms->selector->pos),
                                       ms->range_ms},
                        arg.pos)
             : MakeExpr(res->pieces[0].selector, arg.pos);
    }
    return MakeExpr(Call{c.func, std::move(args)}, e.pos);
  }

  // f(selector) where the selector's variants change values or labels: f
  // applied to each variant, the value mapping moved outside f.
  Result<ExprPtr> CallOverPieces(const Expr& e, const Call& c, size_t sel_arg,
                                 const MatrixSelector* ms, const Resolution& res,
                                 const std::vector<ExprPtr>& args) {
    std::string_view f = c.func->name;
    RangeFunctionClass cls = f == "absent"      ? RangeFunctionClass::kAbsent
                             : f == "timestamp" ? RangeFunctionClass::kPresence
                                                : ClassifyRangeFunction(f);
    const auto& vs = ms ? std::get<VectorSelector>(ms->selector->node)
                        : std::get<VectorSelector>(c.args[sel_arg]->node);
    std::string source = ms ? MatrixText(vs, ms->range_ms) : SelectorText(vs);
    auto fail = [&](const std::string& why) {
      return Status::Error(std::string(f) + "(" + source + "): " + why);
    };
    if (cls == RangeFunctionClass::kUnsupported) {
      return fail("the function is not one the value mapping can be moved out of");
    }
    auto call_text = [&](const VectorSelector& sel) {
      std::string out = std::string(f) + "(";
      for (size_t i = 0; i < args.size(); ++i) {
        if (i) out += ", ";
        out += i == sel_arg ? (ms ? MatrixText(sel, ms->range_ms) : SelectorText(sel))
                            : Print(*args[i]);
      }
      return out + ")";
    };
    if (cls == RangeFunctionClass::kAbsent) {
      std::vector<Part> parts;
      for (const auto& p : res.pieces) parts.push_back({call_text(p.selector), false});
      std::string text = Join(parts, "and");
      auto r = Restore(text, res.equal_fixed, false);
      if (!r.ok()) return r.status();
      return ParseText(*r, e.pos);
    }
    return JoinPieces(res, e.pos, [&](const Piece& p) -> Result<Part> {
      const SelectorVariant& v = *p.variant;
      std::string text = call_text(p.selector);
      bool binary = false;
      if (v.bit) {
        if (cls == RangeFunctionClass::kPointwise) {
          text = BitText(text, v.bit);
          binary = true;
        } else if (cls != RangeFunctionClass::kPresence) {
          return fail(v.name + " packs the value as a bit of a mask, which " + std::string(f) +
                      " cannot be applied to");
        }
      } else if (v.scale != 1) {
        switch (cls) {
          case RangeFunctionClass::kLinear:
          case RangeFunctionClass::kPointwise:
            text = UnscaleText(text, v.scale);
            binary = true;
            break;
          case RangeFunctionClass::kQuadratic:
            text = UnscaleText(text, v.scale * v.scale);
            binary = true;
            break;
          default:
            break;
        }
      }
      return Part{text, binary};
    });
  }

  const RewriteMap& map_;
};

}  // namespace

RangeFunctionClass ClassifyRangeFunction(std::string_view name) {
  for (const auto& f : kRangeFunctions) {
    if (f.name == name) return f.cls;
  }
  return RangeFunctionClass::kUnsupported;
}

std::string RenameLabel(const RewriteMap& map, std::string_view name) {
  auto it = map.labels.find(name);
  return it == map.labels.end() ? std::string(name) : it->second;
}

Result<ExprPtr> Rewrite(const Expr& e, const RewriteMap& map) {
  Rewriter rw(map);
  auto out = rw.Expr_(e);
  if (!out.ok()) return out.status();
  // Print and parse back: the result is type-checked like any query.
  return ParseRewritten(Print(**out));
}

Result<std::string> RewriteQuery(std::string_view query, const RewriteMap& map, bool pretty) {
  ParseResult p = Parse(query);
  if (!p.ok()) return Status::Error(p.error->ToString());
  auto out = Rewrite(*p.expr, map);
  if (!out.ok()) return out.status();
  return pretty ? Format(**out) : Print(**out);
}

}  // namespace gpumon::promql
