// PromQL printing (Prometheus's String() forms) and prettifying
// (promql.Prettify: split nodes longer than 100 characters, indent by two
// spaces per level).

#include "promql/printer.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "promql/function_table.h"
#include "promql/parser/quote.h"

namespace gpumon::promql {
namespace {

using internal::GoQuote;

bool IsLegacyLabelName(std::string_view s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool alpha = c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

// strconv.FormatFloat(v, 'f', -1, 64).
void AppendFloat(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "NaN";
    return;
  }
  if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
    return;
  }
  char buf[400];
  auto res = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::fixed);
  out.append(buf, res.ptr);
}

// Inf and NaN lex as numbers, so as grouping labels they need quotes.
bool IsNumberWord(std::string_view s) {
  if (s.size() != 3) return false;
  std::string lower;
  for (char c : s) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return lower == "inf" || lower == "nan";
}

void AppendLabelName(std::string& out, std::string_view name) {
  if (IsLegacyLabelName(name) && !IsNumberWord(name)) {
    out += name;
  } else {
    out += GoQuote(name);
  }
}

void AppendLabelList(std::string& out, const std::vector<std::string>& labels) {
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i > 0) out += ", ";
    AppendLabelName(out, labels[i]);
  }
}

void AppendMatcher(std::string& out, const tsdb::Matcher& m) {
  AppendLabelName(out, m.name());
  static constexpr const char* kOps[] = {"=", "!=", "=~", "!~"};
  out += kOps[static_cast<int>(m.type())];
  out += GoQuote(m.value());
}

void AppendDuration(std::string& out, int64_t ms) {
  if (ms < 0) {
    out += '-';
    ms = -ms;
  }
  out += FormatDuration(ms);
}

// The parser turns @ seconds into round(seconds * 1000) milliseconds.
int64_t AtMillis(double secs) { return static_cast<int64_t>(std::round(secs * 1000.0)); }

// Prometheus prints "%.3f" seconds; beyond 2^53 ms that text can parse to
// a neighbouring value, so then the shortest float that maps back is used.
void AppendAtTimestamp(std::string& out, int64_t at_ms) {
  char buf[400];
  const double secs = static_cast<double>(at_ms) / 1000.0;
  std::snprintf(buf, sizeof(buf), "%.3f", secs);
  if (AtMillis(std::strtod(buf, nullptr)) == at_ms) {
    out += buf;
    return;
  }
  double d = secs;
  for (int i = 0; i < 64 && AtMillis(d) != at_ms; ++i) {
    d = std::nextafter(d, AtMillis(d) < at_ms ? HUGE_VAL : -HUGE_VAL);
  }
  AppendFloat(out, d);
}

void AppendAtOffset(std::string& out, AtModifier at, int64_t at_ms, int64_t offset_ms) {
  switch (at) {
    case AtModifier::kTimestamp:
      out += " @ ";
      AppendAtTimestamp(out, at_ms);
      break;
    case AtModifier::kStart:
      out += " @ start()";
      break;
    case AtModifier::kEnd:
      out += " @ end()";
      break;
    case AtModifier::kNone:
      break;
  }
  if (offset_ms != 0) {
    out += " offset ";
    AppendDuration(out, offset_ms);
  }
}

void AppendSelectorBody(std::string& out, const VectorSelector& vs) {
  out += vs.name;
  bool first = true;
  for (size_t i = 0; i < vs.matchers.size(); ++i) {
    const auto& m = vs.matchers[i];
    // The name written in front stands for its own matcher.
    if (!vs.name.empty() && m.name() == "__name__" && m.type() == tsdb::MatchType::kEqual &&
        m.value() == vs.name) {
      continue;
    }
    out += first ? "{" : ",";
    first = false;
    AppendMatcher(out, m);
  }
  if (!first) out += "}";
}

void AppendAggOp(std::string& out, const Aggregate& a) {
  out += AggregateOpName(a.op);
  if (a.without) {
    out += " without (";
    AppendLabelList(out, a.grouping);
    out += ") ";
  } else if (!a.grouping.empty()) {
    out += " by (";
    AppendLabelList(out, a.grouping);
    out += ") ";
  }
}

void AppendMatching(std::string& out, const Binary& b) {
  if (b.return_bool) out += " bool";
  if (!b.matching) return;
  const VectorMatching& vm = *b.matching;
  const bool grouped = vm.card == VectorMatchCardinality::kManyToOne ||
                       vm.card == VectorMatchCardinality::kOneToMany;
  if (!vm.matching_labels.empty() || vm.on || grouped) {
    out += vm.on ? " on (" : " ignoring (";
    AppendLabelList(out, vm.matching_labels);
    out += ")";
  }
  if (grouped) {
    out += vm.card == VectorMatchCardinality::kManyToOne ? " group_left (" : " group_right (";
    AppendLabelList(out, vm.include);
    out += ")";
  }
}

void AppendSubquerySuffix(std::string& out, const Subquery& sq) {
  out += '[';
  out += FormatDuration(sq.range_ms);
  out += ':';
  if (sq.step_ms != 0) out += FormatDuration(sq.step_ms);
  out += ']';
  AppendAtOffset(out, sq.at, sq.at_ms, sq.offset_ms);
}

void AppendExpr(std::string& out, const Expr& e);

void AppendNode(std::string& out, const NumberLiteral& n) { AppendFloat(out, n.value); }
void AppendNode(std::string& out, const StringLiteral& n) { out += GoQuote(n.value); }
void AppendNode(std::string& out, const VectorSelector& vs) {
  AppendSelectorBody(out, vs);
  AppendAtOffset(out, vs.at, vs.at_ms, vs.offset_ms);
}
void AppendNode(std::string& out, const MatrixSelector& ms) {
  const auto& vs = std::get<VectorSelector>(ms.selector->node);
  AppendSelectorBody(out, vs);
  out += '[';
  out += FormatDuration(ms.range_ms);
  out += ']';
  AppendAtOffset(out, vs.at, vs.at_ms, vs.offset_ms);
}
void AppendNode(std::string& out, const Subquery& sq) {
  AppendExpr(out, *sq.expr);
  AppendSubquerySuffix(out, sq);
}
void AppendNode(std::string& out, const Paren& p) {
  out += '(';
  AppendExpr(out, *p.expr);
  out += ')';
}
void AppendNode(std::string& out, const Unary& u) {
  out += u.negate ? '-' : '+';
  AppendExpr(out, *u.expr);
}
void AppendNode(std::string& out, const Binary& b) {
  const auto* num = std::get_if<NumberLiteral>(&b.lhs->node);
  if (b.op == BinaryOp::kPow && num && std::isinf(num->value) && num->value > 0) {
    // "+Inf ^ x" would parse as +(Inf ^ x): unary signs bind looser than ^.
    out += "Inf";
  } else {
    AppendExpr(out, *b.lhs);
  }
  out += ' ';
  out += BinaryOpName(b.op);
  AppendMatching(out, b);
  out += ' ';
  AppendExpr(out, *b.rhs);
}
void AppendNode(std::string& out, const Aggregate& a) {
  AppendAggOp(out, a);
  out += '(';
  if (a.param) {
    AppendExpr(out, *a.param);
    out += ", ";
  }
  AppendExpr(out, *a.expr);
  out += ')';
}
void AppendNode(std::string& out, const Call& c) {
  out += c.func->name;
  out += '(';
  for (size_t i = 0; i < c.args.size(); ++i) {
    if (i > 0) out += ", ";
    AppendExpr(out, *c.args[i]);
  }
  out += ')';
}

void AppendExpr(std::string& out, const Expr& e) {
  std::visit([&](const auto& n) { AppendNode(out, n); }, e.node);
}

constexpr size_t kMaxCharactersPerLine = 100;

std::string Indent(int level) { return std::string(static_cast<size_t>(level) * 2, ' '); }

std::string Pretty(const Expr& e, int level);

std::string PrettyNode(const Expr& e, const Aggregate& a, int level) {
  std::string s = Indent(level);
  std::string flat = Print(e);
  if (flat.size() <= kMaxCharactersPerLine) return s + flat;
  AppendAggOp(s, a);
  s += "(\n";
  if (a.param) s += Pretty(*a.param, level + 1) + ",\n";
  s += Pretty(*a.expr, level + 1) + "\n" + Indent(level) + ")";
  return s;
}

std::string PrettyNode(const Expr& e, const Binary& b, int level) {
  std::string flat = Print(e);
  if (flat.size() <= kMaxCharactersPerLine) return Indent(level) + flat;
  std::string op = BinaryOpName(b.op);
  AppendMatching(op, b);
  return Pretty(*b.lhs, level + 1) + "\n" + Indent(level) + op + "\n" + Pretty(*b.rhs, level + 1);
}

std::string PrettyNode(const Expr& e, const Call& c, int level) {
  std::string flat = Print(e);
  if (flat.size() <= kMaxCharactersPerLine) return Indent(level) + flat;
  std::string s = Indent(level) + std::string(c.func->name) + "(\n";
  for (size_t i = 0; i < c.args.size(); ++i) {
    if (i > 0) s += ",\n";
    s += Pretty(*c.args[i], level + 1);
  }
  return s + "\n" + Indent(level) + ")";
}

std::string PrettyNode(const Expr& e, const Paren& p, int level) {
  std::string flat = Print(e);
  if (flat.size() <= kMaxCharactersPerLine) return Indent(level) + flat;
  return Indent(level) + "(\n" + Pretty(*p.expr, level + 1) + "\n" + Indent(level) + ")";
}

std::string PrettyNode(const Expr& e, const Subquery& sq, int level) {
  // Prometheus does not indent a subquery that fits on one line.
  std::string flat = Print(e);
  if (flat.size() <= kMaxCharactersPerLine) return flat;
  std::string s = Pretty(*sq.expr, level);
  AppendSubquerySuffix(s, sq);
  return s;
}

std::string PrettyNode(const Expr&, const Unary& u, int level) {
  std::string child = Pretty(*u.expr, level);
  size_t b = child.find_first_not_of(" \t\n\r");
  size_t en = child.find_last_not_of(" \t\n\r");
  child = b == std::string::npos ? "" : child.substr(b, en - b + 1);
  return Indent(level) + (u.negate ? "-" : "+") + child;
}

template <typename T>
std::string PrettyNode(const Expr& e, const T&, int level) {
  return Indent(level) + Print(e);
}

std::string Pretty(const Expr& e, int level) {
  return std::visit([&](const auto& n) { return PrettyNode(e, n, level); }, e.node);
}

}  // namespace

std::string Print(const Expr& e) {
  std::string out;
  out.reserve(64);
  AppendExpr(out, e);
  return out;
}

std::string Format(const Expr& e) { return Pretty(e, 0); }

std::string FormatDuration(int64_t ms) {
  if (ms == 0) return "0s";
  std::string r;
  auto unit = [&](const char* name, int64_t mult, bool exact) {
    if (exact && ms % mult != 0) return;
    const int64_t v = ms / mult;
    if (v > 0) {
      r += std::to_string(v);
      r += name;
      ms -= v * mult;
    }
  };
  // Years and weeks only when exact: 90d reads better than 12w6d.
  unit("y", int64_t{1000} * 60 * 60 * 24 * 365, true);
  unit("w", int64_t{1000} * 60 * 60 * 24 * 7, true);
  unit("d", int64_t{1000} * 60 * 60 * 24, false);
  unit("h", int64_t{1000} * 60 * 60, false);
  unit("m", int64_t{1000} * 60, false);
  unit("s", 1000, false);
  unit("ms", 1, false);
  return r;
}

}  // namespace gpumon::promql
