// Recursive-descent PromQL parser with precedence climbing for binary
// operators. Follows the grammar of Prometheus's generated_parser.y: the
// postfix modifiers ([range], [range:step], offset, @) bind tighter than
// any operator, unary +/- binds like '*' (so -2^2 == -(2^2)), '^' is
// right-associative. Stops at the first error; messages use Prometheus's
// wording so API clients see the same text.

#include "promql/parser.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "promql/function_table.h"
#include "promql/parser/check.h"
#include "promql/parser/lexer.h"
#include "promql/parser/quote.h"

namespace gpumon::promql {

using internal::Describe;
using internal::Tok;
using internal::Token;

std::string ParseError::ToString() const {
  return std::to_string(line) + ":" + std::to_string(column) + ": parse error: " + message;
}

namespace {

constexpr int kPrecPow = 6;

int BinaryPrecedence(Tok t) {
  switch (t) {
    case Tok::kLor:
      return 1;
    case Tok::kLand:
    case Tok::kLunless:
      return 2;
    case Tok::kEqlc:
    case Tok::kNeq:
    case Tok::kLte:
    case Tok::kLss:
    case Tok::kGte:
    case Tok::kGtr:
      return 3;
    case Tok::kAdd:
    case Tok::kSub:
      return 4;
    case Tok::kMul:
    case Tok::kDiv:
    case Tok::kMod:
    case Tok::kAtan2:
      return 5;
    case Tok::kPow:
      return kPrecPow;
    default:
      return -1;
  }
}

BinaryOp ToBinaryOp(Tok t) {
  switch (t) {
    case Tok::kAdd:
      return BinaryOp::kAdd;
    case Tok::kSub:
      return BinaryOp::kSub;
    case Tok::kMul:
      return BinaryOp::kMul;
    case Tok::kDiv:
      return BinaryOp::kDiv;
    case Tok::kMod:
      return BinaryOp::kMod;
    case Tok::kPow:
      return BinaryOp::kPow;
    case Tok::kAtan2:
      return BinaryOp::kAtan2;
    case Tok::kEqlc:
      return BinaryOp::kEql;
    case Tok::kNeq:
      return BinaryOp::kNeq;
    case Tok::kGtr:
      return BinaryOp::kGtr;
    case Tok::kLss:
      return BinaryOp::kLss;
    case Tok::kGte:
      return BinaryOp::kGte;
    case Tok::kLte:
      return BinaryOp::kLte;
    case Tok::kLand:
      return BinaryOp::kAnd;
    case Tok::kLor:
      return BinaryOp::kOr;
    default:
      return BinaryOp::kUnless;
  }
}

AggregateOp ToAggregateOp(Tok t) {
  switch (t) {
    case Tok::kSum:
      return AggregateOp::kSum;
    case Tok::kAvg:
      return AggregateOp::kAvg;
    case Tok::kCount:
      return AggregateOp::kCount;
    case Tok::kMin:
      return AggregateOp::kMin;
    case Tok::kMax:
      return AggregateOp::kMax;
    case Tok::kGroup:
      return AggregateOp::kGroup;
    case Tok::kStddev:
      return AggregateOp::kStddev;
    case Tok::kStdvar:
      return AggregateOp::kStdvar;
    case Tok::kTopk:
      return AggregateOp::kTopk;
    case Tok::kBottomk:
      return AggregateOp::kBottomk;
    case Tok::kQuantile:
      return AggregateOp::kQuantile;
    case Tok::kCountValues:
      return AggregateOp::kCountValues;
    case Tok::kLimitk:
      return AggregateOp::kLimitk;
    default:
      return AggregateOp::kLimitRatio;
  }
}

bool HasParam(AggregateOp op) {
  return op == AggregateOp::kTopk || op == AggregateOp::kBottomk || op == AggregateOp::kQuantile ||
         op == AggregateOp::kCountValues || op == AggregateOp::kLimitk ||
         op == AggregateOp::kLimitRatio;
}

// Tokens the grammar accepts as a metric name (metric_identifier).
bool IsMetricIdentifier(Tok t) {
  switch (t) {
    case Tok::kIdentifier:
    case Tok::kMetricIdentifier:
    case Tok::kBy:
    case Tok::kWithout:
    case Tok::kOffset:
    case Tok::kLand:
    case Tok::kLor:
    case Tok::kLunless:
    case Tok::kStart:
    case Tok::kEnd:
    case Tok::kStep:
    case Tok::kRange:
    case Tok::kMaxOf:
    case Tok::kMinOf:
      return true;
    default:
      return internal::IsAggregator(t);
  }
}

// Tokens the grammar accepts as a label name in grouping lists
// (maybe_label).
bool IsMaybeLabel(Tok t) {
  switch (t) {
    case Tok::kBool:
    case Tok::kGroupLeft:
    case Tok::kGroupRight:
    case Tok::kIgnoring:
    case Tok::kOn:
    case Tok::kAtan2:
      return true;
    default:
      return IsMetricIdentifier(t);
  }
}

bool IsValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    int w = 1;
    if (internal::DecodeRune(s, i, &w) == internal::kRuneError && w == 1) return false;
    i += w;
  }
  return true;
}

// Go's strconv.ParseInt(s, 0, 64): base prefixes, leading 0 = octal,
// '_' separators. False when s is not such an integer or overflows.
bool ParseGoInt(std::string_view s, int64_t* out) {
  int base = 10;
  size_t i = 0;
  if (s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    i = 2;
  } else if (s.size() >= 2 && s[0] == '0') {
    base = 8;
    i = 1;
  }
  if (i >= s.size()) return false;
  uint64_t v = 0;
  bool any = false;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '_') continue;
    int d = 99;
    if (c >= '0' && c <= '9') d = c - '0';
    if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    if (d >= base) return false;
    if (v > (static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) - d) / base) return false;
    v = v * base + d;
    any = true;
  }
  if (!any) return false;
  *out = static_cast<int64_t>(v);
  return true;
}

}  // namespace

namespace internal {

// model.ParseDuration: 1y2w3d4h5m6s7ms (units largest first, each once)
// or "0". Milliseconds; false with *error in Prometheus's words.
bool ParseModelDuration(std::string_view s, int64_t* ms, std::string* error) {
  if (s == "0") {
    *ms = 0;
    return true;
  }
  const std::string orig = internal::GoQuote(s);
  if (s.empty()) {
    *error = "empty duration string";
    return false;
  }
  struct Unit {
    const char* name;
    int pos;
    uint64_t ns;
  };
  static constexpr uint64_t kMs = 1000000;
  static constexpr Unit kUnits[] = {
      {"ms", 1, kMs},
      {"s", 2, 1000 * kMs},
      {"m", 3, 60 * 1000 * kMs},
      {"h", 4, 3600 * 1000 * kMs},
      {"d", 5, uint64_t{24} * 3600 * 1000 * kMs},
      {"w", 6, uint64_t{7} * 24 * 3600 * 1000 * kMs},
      {"y", 7, uint64_t{365} * 24 * 3600 * 1000 * kMs},
  };
  uint64_t total = 0;
  int last_pos = 8;
  size_t i = 0;
  while (i < s.size()) {
    if (!(s[i] >= '0' && s[i] <= '9')) {
      *error = "not a valid duration string: " + orig;
      return false;
    }
    uint64_t v = 0;
    bool overflow = false;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
      if (v > (std::numeric_limits<uint64_t>::max() - 9) / 10) overflow = true;
      v = v * 10 + (s[i] - '0');
    }
    if (overflow) {
      *error = "not a valid duration string: " + orig;
      return false;
    }
    const size_t ustart = i;
    while (i < s.size() && !(s[i] >= '0' && s[i] <= '9')) ++i;
    if (i == ustart) {
      *error = "not a valid duration string: " + orig;
      return false;
    }
    std::string_view u = s.substr(ustart, i - ustart);
    const Unit* unit = nullptr;
    for (const auto& cand : kUnits) {
      if (u == cand.name) unit = &cand;
    }
    if (unit == nullptr) {
      *error = "unknown unit " + internal::GoQuote(u) + " in duration " + orig;
      return false;
    }
    // Units must go from the largest to the smallest.
    if (unit->pos >= last_pos) {
      *error = "not a valid duration string: " + orig;
      return false;
    }
    last_pos = unit->pos;
    constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    if (v > (kMax + 1) / unit->ns) {
      *error = "duration out of range";
      return false;
    }
    total += v * unit->ns;
    if (total > kMax) {
      *error = "duration out of range";
      return false;
    }
  }
  *ms = static_cast<int64_t>(total / kMs);
  return true;
}

}  // namespace internal

namespace {

class Parser {
 public:
  explicit Parser(std::string_view in) : in_(in), lex_(internal::Lex(in)) {}

  ParseResult ParseQuery() {
    ParseResult res;
    if (Peek().kind == Tok::kEof) {
      Fail(PosRange{0, 0}, "no expression found in input");
    } else {
      ExprPtr e = ParseExpr(0);
      if (e && Peek().kind != Tok::kEof) Unexpected("", "");
      if (!error_ && e) {
        if (auto err = internal::CheckTree(*e, in_)) Fail(err->pos, err->message);
      }
      if (!error_) res.expr = std::move(e);
    }
    res.error = std::move(error_);
    return res;
  }

  // START_METRIC_SELECTOR vector_selector EOF.
  bool ParseSelectorOnly(std::vector<tsdb::Matcher>* out, std::string* err) {
    const Token& t = Peek();
    ExprPtr e;
    if (t.kind == Tok::kLBrace || IsMetricIdentifier(t.kind)) {
      e = ParseVectorSelector();
    } else {
      Unexpected("", "");
    }
    if (e && !error_ && Peek().kind != Tok::kEof) Unexpected("", "");
    if (error_) {
      *err = error_->ToString();
      return false;
    }
    *out = std::get<VectorSelector>(e->node).matchers;
    return true;
  }

  // START_METRIC metric EOF: metric_identifier? label_set.
  bool ParseMetricOnly(Labels* out, std::string* err) {
    std::vector<Label> labels;
    const Token& t = Peek();
    if (IsMetricIdentifier(t.kind)) {
      labels.push_back(Label{std::string(kMetricName), std::string(Text(t))});
      Next();
    }
    if (Peek().kind == Tok::kLBrace) {
      Next();
      ParseLabelSet(&labels);
    } else if (labels.empty()) {
      Unexpected("", "");
    }
    if (!error_ && Peek().kind != Tok::kEof) Unexpected("", "");
    if (error_) {
      *err = error_->ToString();
      return false;
    }
    *out = Labels::FromUnsorted(std::move(labels));
    return true;
  }

 private:
  const Token& Peek(size_t ahead = 0) const {
    const size_t i = std::min(idx_ + ahead, lex_.tokens.size() - 1);
    return lex_.tokens[i];
  }
  const Token& Next() {
    const Token& t = lex_.tokens[idx_];
    if (idx_ + 1 < lex_.tokens.size()) ++idx_;
    switch (t.kind) {
      case Tok::kRBrace:
      case Tok::kRParen:
      case Tok::kRBracket:
      case Tok::kNumber:
      case Tok::kDuration:
        last_closing_ = t.end;
        break;
      default:
        break;
    }
    return t;
  }
  std::string_view Text(const Token& t) const { return in_.substr(t.start, t.end - t.start); }

  std::nullptr_t Fail(PosRange pos, std::string msg) {
    if (error_) return nullptr;
    ParseError e;
    e.pos = pos;
    e.message = std::move(msg);
    const int p = std::clamp(pos.start, 0, static_cast<int>(in_.size()));
    int line = 1;
    int last_break = -1;
    for (int i = 0; i < p; ++i) {
      if (in_[i] == '\n') {
        ++line;
        last_break = i;
      }
    }
    e.line = line;
    e.column = p - last_break;
    error_ = std::move(e);
    return nullptr;
  }

  // "unexpected <token>[ in <context>][, expected <expected>]" about the
  // next token, or the lexer's error when the next token is one.
  std::nullptr_t Unexpected(const char* context, const char* expected) {
    const Token& t = Peek();
    if (t.kind == Tok::kError) return Fail(PosRange{t.start, t.end}, lex_.error);
    std::string msg = "unexpected " + Describe(t, in_);
    if (*context) msg += std::string(" in ") + context;
    if (*expected) msg += std::string(", expected ") + expected;
    return Fail(PosRange{t.start, t.end}, std::move(msg));
  }

  static ExprPtr Make(decltype(Expr::node) node, int start, int end) {
    auto e = std::make_unique<Expr>();
    e->node = std::move(node);
    e->pos = PosRange{start, end};
    return e;
  }

  ExprPtr ParseExpr(int min_prec) {
    // Bounds the recursion so a hostile query cannot exhaust the stack.
    if (++depth_ > kMaxDepth) {
      const Token& t = Peek();
      return Fail(PosRange{t.start, t.end}, "query is nested too deeply");
    }
    struct Leave {
      int* d;
      ~Leave() { --*d; }
    } leave{&depth_};
    ExprPtr lhs = ParseUnary();
    while (lhs) {
      const Token& op = Peek();
      const int prec = BinaryPrecedence(op.kind);
      if (prec < 0 || prec < min_prec) break;
      Next();
      Binary b;
      b.op = ToBinaryOp(op.kind);
      VectorMatching vm;
      if (Peek().kind == Tok::kBool) {
        Next();
        b.return_bool = true;
      }
      if (Peek().kind == Tok::kOn || Peek().kind == Tok::kIgnoring) {
        vm.on = Next().kind == Tok::kOn;
        if (!ParseGroupingLabels(&vm.matching_labels)) return nullptr;
        if (Peek().kind == Tok::kGroupLeft || Peek().kind == Tok::kGroupRight) {
          vm.card = Next().kind == Tok::kGroupLeft ? VectorMatchCardinality::kManyToOne
                                                   : VectorMatchCardinality::kOneToMany;
          if (Peek().kind == Tok::kLParen && !ParseGroupingLabels(&vm.include)) return nullptr;
        }
      }
      b.matching = std::move(vm);
      // '^' is right-associative, everything else left-associative.
      ExprPtr rhs = ParseExpr(op.kind == Tok::kPow ? prec : prec + 1);
      if (!rhs) return nullptr;
      const int start = lhs->pos.start;
      const int end = rhs->pos.end;
      b.lhs = std::move(lhs);
      b.rhs = std::move(rhs);
      lhs = Make(std::move(b), start, end);
    }
    return lhs;
  }

  ExprPtr ParseUnary() {
    const Token& t = Peek();
    if (t.kind != Tok::kAdd && t.kind != Tok::kSub) return ParsePrimary();
    const bool negate = t.kind == Tok::kSub;
    const int start = t.start;
    Next();
    // The operand binds everything tighter than '*', i.e. only '^'.
    ExprPtr operand = ParseExpr(kPrecPow);
    if (!operand) return nullptr;
    if (auto* num = std::get_if<NumberLiteral>(&operand->node)) {
      if (negate) num->value = -num->value;
      operand->pos.start = start;
      return operand;
    }
    const int end = operand->pos.end;
    return Make(Unary{negate, std::move(operand)}, start, end);
  }

  ExprPtr ParsePrimary() {
    ExprPtr e = ParseAtom();
    while (e) {
      switch (Peek().kind) {
        case Tok::kLBracket:
          e = ParseRangeOrSubquery(std::move(e));
          break;
        case Tok::kOffset:
          e = ParseOffset(std::move(e));
          break;
        case Tok::kAt:
          e = ParseAt(std::move(e));
          break;
        default:
          return e;
      }
    }
    return e;
  }

  ExprPtr ParseAtom() {
    const Token& t = Peek();
    switch (t.kind) {
      case Tok::kNumber:
      case Tok::kDuration: {
        double v = 0;
        if (!ParseNumberToken(t, &v, nullptr)) return nullptr;
        Next();
        return Make(NumberLiteral{v}, t.start, t.end);
      }
      case Tok::kString: {
        std::string s;
        if (!UnquoteToken(t, &s)) return nullptr;
        Next();
        return Make(StringLiteral{std::move(s)}, t.start, t.end);
      }
      case Tok::kLParen: {
        Next();
        ExprPtr inner = ParseExpr(0);
        if (!inner) return nullptr;
        if (Peek().kind != Tok::kRParen) return Unexpected("", "");
        const Token& close = Next();
        return Make(Paren{std::move(inner)}, t.start, close.end);
      }
      case Tok::kLBrace:
        return ParseVectorSelector();
      default:
        break;
    }
    if (internal::IsAggregator(t.kind)) {
      const Tok next = Peek(1).kind;
      if (next == Tok::kLParen || next == Tok::kBy || next == Tok::kWithout) {
        return ParseAggregate();
      }
      return ParseVectorSelector();
    }
    if (t.kind == Tok::kIdentifier || t.kind == Tok::kStart || t.kind == Tok::kEnd ||
        t.kind == Tok::kStep || t.kind == Tok::kRange || t.kind == Tok::kMaxOf ||
        t.kind == Tok::kMinOf) {
      if (Peek(1).kind == Tok::kLParen) return ParseCall();
      return ParseVectorSelector();
    }
    if (IsMetricIdentifier(t.kind)) return ParseVectorSelector();
    return Unexpected("", "");
  }

  bool UnquoteToken(const Token& t, std::string* out) {
    std::string err;
    if (!internal::Unquote(Text(t), out, &err)) {
      Fail(PosRange{t.start, t.end},
           "error unquoting string " + internal::GoQuote(Text(t)) + ": " + err);
      return false;
    }
    return true;
  }

  // A NUMBER or DURATION token as seconds (and exact milliseconds for
  // durations when `ms` is given).
  bool ParseNumberToken(const Token& t, double* seconds, int64_t* ms) {
    std::string_view text = Text(t);
    if (t.kind == Tok::kDuration) {
      int64_t d = 0;
      std::string err;
      if (!internal::ParseModelDuration(text, &d, &err)) {
        Fail(PosRange{t.start, t.end}, err);
        return false;
      }
      *seconds = static_cast<double>(d) / 1000.0;
      if (ms) *ms = d;
      return true;
    }
    int64_t iv = 0;
    if (ParseGoInt(text, &iv)) {
      *seconds = static_cast<double>(iv);
    } else {
      std::string clean;
      clean.reserve(text.size());
      for (char c : text) {
        if (c != '_') clean.push_back(c);
      }
      // strtod also reads Inf and NaN in any case, which the lexer lets
      // through as numbers.
      errno = 0;
      char* end = nullptr;
      const double v = std::strtod(clean.c_str(), &end);
      if (end != clean.c_str() + clean.size()) {
        Fail(PosRange{t.start, t.end}, "error parsing number: strconv.ParseFloat: parsing " +
                                           internal::GoQuote(text) + ": invalid syntax");
        return false;
      }
      if (errno == ERANGE && std::isinf(v)) {
        Fail(PosRange{t.start, t.end}, "error parsing number: strconv.ParseFloat: parsing " +
                                           internal::GoQuote(text) + ": value out of range");
        return false;
      }
      *seconds = v;
    }
    if (ms) *ms = SecondsToMs(*seconds);
    return true;
  }

  // Prometheus keeps durations in nanoseconds (rounded) and the engine
  // truncates them to milliseconds.
  // Out-of-range values (reported by the caller) give 0.
  static int64_t SecondsToMs(double s) {
    if (!(s > -9223372036.0 && s < 9223372036.0)) return 0;
    const double ns = std::round(s * 1e9);
    return static_cast<int64_t>(ns / 1e6);
  }

  static bool DurationOutOfRange(double v) {
    return v > 9223372036.854775807 || v < -9223372036.854775808;
  }

  // A duration where the grammar wants one: [+-]? (NUMBER | DURATION).
  // `what` names the context for the "unexpected" message.
  bool ParseDurationValue(bool allow_sign, const char* context, const char* expected, int64_t* ms,
                          PosRange* pos) {
    const Token& first = Peek();
    bool negate = false;
    bool signed_ = false;
    if (allow_sign && (first.kind == Tok::kAdd || first.kind == Tok::kSub)) {
      const Tok k = Peek(1).kind;
      if (k == Tok::kNumber || k == Tok::kDuration) {
        negate = first.kind == Tok::kSub;
        signed_ = true;
        Next();
      }
    }
    const Token& t = Peek();
    if ((t.kind == Tok::kStep || t.kind == Tok::kRange) && Peek(1).kind != Tok::kLParen) {
      Next();  // the grammar only fails at the token after the keyword
      Unexpected(context, expected);
      return false;
    }
    if (t.kind == Tok::kStep || t.kind == Tok::kRange || t.kind == Tok::kMaxOf ||
        t.kind == Tok::kMinOf || t.kind == Tok::kLParen ||
        (!signed_ && (t.kind == Tok::kAdd || t.kind == Tok::kSub))) {
      Fail(PosRange{t.start, t.end}, "experimental duration expression is not enabled");
      return false;
    }
    if (t.kind != Tok::kNumber && t.kind != Tok::kDuration) {
      Unexpected(context, expected);
      return false;
    }
    double secs = 0;
    int64_t v = 0;
    if (!ParseNumberToken(t, &secs, &v)) return false;
    Next();
    if (negate) {
      secs = -secs;
      v = -v;
    }
    *pos = PosRange{signed_ ? first.start : t.start, t.end};
    if (t.kind == Tok::kNumber && (DurationOutOfRange(secs) || std::isnan(secs))) {
      Fail(*pos, "duration out of range");
      return false;
    }
    *ms = v;
    return true;
  }

  ExprPtr ParseRangeOrSubquery(ExprPtr e) {
    const Token& open = Next();  // '['
    int64_t range = 0;
    PosRange rpos;
    if (!ParseDurationValue(true, "subquery or range selector",
                            "number, duration, step(), or range()", &range, &rpos)) {
      return nullptr;
    }
    if (range <= 0) return Fail(rpos, "duration must be greater than 0");
    if (Peek().kind == Tok::kRBracket) {
      const Token& close = Next();
      const char* err = nullptr;
      auto* vs = std::get_if<VectorSelector>(&e->node);
      if (vs == nullptr) {
        err = "ranges only allowed for vector selectors";
      } else if (vs->offset_ms != 0) {
        err = "no offset modifiers allowed before range";
      } else if (vs->at != AtModifier::kNone) {
        err = "no @ modifiers allowed before range";
      }
      if (err) return Fail(PosRange{open.start, close.end}, err);
      const int start = e->pos.start;
      return Make(MatrixSelector{std::move(e), range}, start, close.end);
    }
    if (Peek().kind != Tok::kColon) {
      return Unexpected("subquery or range", "\":\" or \"]\"");
    }
    Next();
    int64_t step = 0;
    if (Peek().kind != Tok::kRBracket) {
      PosRange spos;
      if (!ParseDurationValue(true, "subquery selector",
                              "number, duration, step(), range(), or \"]\"", &step, &spos)) {
        return nullptr;
      }
      if (step <= 0) return Fail(spos, "duration must be greater than 0");
      if (Peek().kind != Tok::kRBracket) return Unexpected("subquery selector", "\"]\"");
    }
    const Token& close = Next();
    const int start = e->pos.start;
    Subquery sq;
    sq.expr = std::move(e);
    sq.range_ms = range;
    sq.step_ms = step;
    return Make(std::move(sq), start, close.end);
  }

  ExprPtr ParseOffset(ExprPtr e) {
    Next();  // offset
    int64_t off = 0;
    PosRange pos;
    if (!ParseDurationValue(true, "offset", "number, duration, step(), or range()", &off, &pos)) {
      return nullptr;
    }
    int64_t* target = nullptr;
    if (auto* vs = std::get_if<VectorSelector>(&e->node)) {
      target = &vs->offset_ms;
    } else if (auto* ms = std::get_if<MatrixSelector>(&e->node)) {
      target = &std::get<VectorSelector>(ms->selector->node).offset_ms;
    } else if (auto* sq = std::get_if<Subquery>(&e->node)) {
      target = &sq->offset_ms;
    } else {
      return Fail(e->pos,
                  "offset modifier must be preceded by an instant vector selector or range vector "
                  "selector or a subquery");
    }
    if (*target != 0) return Fail(e->pos, "offset may not be set multiple times");
    *target = off;
    e->pos.end = last_closing_;
    return e;
  }

  ExprPtr ParseAt(ExprPtr e) {
    Next();  // @
    AtModifier at = AtModifier::kTimestamp;
    int64_t at_ms = 0;
    const Token& t = Peek();
    if ((t.kind == Tok::kStart || t.kind == Tok::kEnd) && Peek(1).kind == Tok::kLParen &&
        Peek(2).kind == Tok::kRParen) {
      at = t.kind == Tok::kStart ? AtModifier::kStart : AtModifier::kEnd;
      Next();
      Next();
      Next();
    } else {
      bool negate = false;
      if ((t.kind == Tok::kAdd || t.kind == Tok::kSub) &&
          (Peek(1).kind == Tok::kNumber || Peek(1).kind == Tok::kDuration)) {
        negate = t.kind == Tok::kSub;
        Next();
      }
      const Token& n = Peek();
      if (n.kind != Tok::kNumber && n.kind != Tok::kDuration) return Unexpected("@", "timestamp");
      double secs = 0;
      if (!ParseNumberToken(n, &secs, nullptr)) return nullptr;
      Next();
      if (negate) secs = -secs;
      // Prometheus bounds the seconds by int64; the milliseconds must fit
      // too.
      if (std::isinf(secs) || std::isnan(secs) || secs >= 9.223372036854775807e15 ||
          secs <= -9.223372036854775808e15) {
        // Go's %f: +Inf, -Inf, NaN for the non-finite values.
        char buf[400];
        if (std::isnan(secs)) {
          std::snprintf(buf, sizeof(buf), "NaN");
        } else if (std::isinf(secs)) {
          std::snprintf(buf, sizeof(buf), "%s", secs > 0 ? "+Inf" : "-Inf");
        } else {
          std::snprintf(buf, sizeof(buf), "%f", secs);
        }
        return Fail(e->pos, std::string("timestamp out of bounds for @ modifier: ") + buf);
      }
      at_ms = static_cast<int64_t>(std::round(secs * 1000.0));
    }
    AtModifier* target_at = nullptr;
    int64_t* target_ms = nullptr;
    if (auto* vs = std::get_if<VectorSelector>(&e->node)) {
      target_at = &vs->at;
      target_ms = &vs->at_ms;
    } else if (auto* ms = std::get_if<MatrixSelector>(&e->node)) {
      auto& inner = std::get<VectorSelector>(ms->selector->node);
      target_at = &inner.at;
      target_ms = &inner.at_ms;
    } else if (auto* sq = std::get_if<Subquery>(&e->node)) {
      target_at = &sq->at;
      target_ms = &sq->at_ms;
    } else {
      return Fail(e->pos,
                  "@ modifier must be preceded by an instant vector selector or range vector "
                  "selector or a subquery");
    }
    if (*target_at != AtModifier::kNone) {
      return Fail(e->pos, "@ <timestamp> may not be set multiple times");
    }
    *target_at = at;
    *target_ms = at_ms;
    e->pos.end = last_closing_;
    return e;
  }

  // metric_identifier label_matchers? | label_matchers.
  ExprPtr ParseVectorSelector() {
    VectorSelector vs;
    const Token& first = Peek();
    const int start = first.start;
    int end = first.end;
    if (first.kind != Tok::kLBrace) {
      vs.name = std::string(Text(first));
      Next();
      auto m = tsdb::Matcher::Make(tsdb::MatchType::kEqual, std::string(kMetricName), vs.name);
      vs.matchers.push_back(std::move(m.value()));
    }
    if (Peek().kind == Tok::kLBrace) {
      Next();
      if (!ParseLabelMatchers(&vs.matchers)) return nullptr;
      end = last_closing_;
    }
    return Make(std::move(vs), start, end);
  }

  static bool IsMatchOp(Tok t) {
    return t == Tok::kAssign || t == Tok::kNeq || t == Tok::kEqlRegex || t == Tok::kNeqRegex;
  }

  // After '{': label_match_list? ','? '}'.
  bool ParseLabelMatchers(std::vector<tsdb::Matcher>* out) {
    while (true) {
      const Token& t = Peek();
      if (t.kind == Tok::kRBrace) {
        Next();
        return true;
      }
      std::string name;
      const int mstart = t.start;
      if (t.kind == Tok::kIdentifier) {
        name = std::string(Text(t));
        Next();
        if (!IsMatchOp(Peek().kind)) {
          Unexpected("label matching", "label matching operator");
          return false;
        }
      } else if (t.kind == Tok::kString) {
        if (!UnquoteToken(t, &name)) return false;
        Next();
        if (!IsMatchOp(Peek().kind)) {
          // A bare quoted string names the metric.
          auto m = tsdb::Matcher::Make(tsdb::MatchType::kEqual, std::string(kMetricName), name);
          if (!m.ok()) {
            Fail(PosRange{t.start, t.end}, m.status().message());
            return false;
          }
          out->push_back(std::move(m.value()));
          if (!AfterMatcher()) return false;
          continue;
        }
      } else {
        Unexpected("label matching", "identifier or \"}\"");
        return false;
      }
      const Tok op = Next().kind;
      const Token& v = Peek();
      if (v.kind != Tok::kString) {
        Unexpected("label matching", "string");
        return false;
      }
      std::string value;
      if (!UnquoteToken(v, &value)) return false;
      Next();
      tsdb::MatchType type = op == Tok::kAssign     ? tsdb::MatchType::kEqual
                             : op == Tok::kNeq      ? tsdb::MatchType::kNotEqual
                             : op == Tok::kEqlRegex ? tsdb::MatchType::kRegexMatch
                                                    : tsdb::MatchType::kRegexNoMatch;
      auto m = tsdb::Matcher::Make(type, std::move(name), std::move(value));
      if (!m.ok()) {
        Fail(PosRange{mstart, v.end}, m.status().message());
        return false;
      }
      out->push_back(std::move(m.value()));
      if (!AfterMatcher()) return false;
    }
  }

  // After one element of a {...} list: a ',' (consumed) or the '}' that
  // the caller consumes; `context` names the list in the error.
  bool AfterListElement(const char* context) {
    const Tok k = Peek().kind;
    if (k == Tok::kComma) {
      Next();
      return true;
    }
    if (k == Tok::kRBrace) return true;
    Unexpected(context, "\",\" or \"}\"");
    return false;
  }
  bool AfterMatcher() { return AfterListElement("label matching"); }

  // label_set for ParseMetric: only `name="value"` and bare "metric".
  bool ParseLabelSet(std::vector<Label>* out) {
    while (true) {
      const Token& t = Peek();
      if (t.kind == Tok::kRBrace) {
        Next();
        return true;
      }
      std::string name;
      if (t.kind == Tok::kIdentifier) {
        name = std::string(Text(t));
        Next();
        if (Peek().kind != Tok::kAssign) {
          Unexpected("label set", "\"=\"");
          return false;
        }
      } else if (t.kind == Tok::kString) {
        if (!UnquoteToken(t, &name)) return false;
        Next();
        if (Peek().kind != Tok::kAssign) {
          out->push_back(Label{std::string(kMetricName), std::move(name)});
          if (!AfterLabel()) return false;
          continue;
        }
      } else {
        Unexpected("label set", "identifier or \"}\"");
        return false;
      }
      Next();  // '='
      const Token& v = Peek();
      if (v.kind != Tok::kString) {
        Unexpected("label set", "string");
        return false;
      }
      std::string value;
      if (!UnquoteToken(v, &value)) return false;
      Next();
      out->push_back(Label{std::move(name), std::move(value)});
      if (!AfterLabel()) return false;
    }
  }

  bool AfterLabel() { return AfterListElement("label set"); }

  // '(' label (',' label)* ','? ')' | '(' ')'.
  bool ParseGroupingLabels(std::vector<std::string>* out) {
    if (Peek().kind != Tok::kLParen) {
      Unexpected("grouping opts", "\"(\"");
      return false;
    }
    Next();
    out->clear();
    while (true) {
      const Token& t = Peek();
      if (t.kind == Tok::kRParen) {
        Next();
        return true;
      }
      std::string label;
      if (t.kind == Tok::kString) {
        if (!UnquoteToken(t, &label)) return false;
      } else if (IsMaybeLabel(t.kind)) {
        label = std::string(Text(t));
      } else {
        Unexpected("grouping opts", "label");
        return false;
      }
      if (label.empty() || !IsValidUtf8(label)) {
        Fail(PosRange{t.start, t.end},
             "invalid label name for grouping: " + internal::GoQuote(label));
        return false;
      }
      Next();
      out->push_back(std::move(label));
      const Tok k = Peek().kind;
      if (k == Tok::kComma) {
        Next();
      } else if (k != Tok::kRParen) {
        Unexpected("grouping opts", "\",\" or \")\"");
        return false;
      }
    }
  }

  // '(' (expr (',' expr)*)? ')'; the '(' is the next token.
  bool ParseCallBody(std::vector<ExprPtr>* args) {
    Next();  // '('
    if (Peek().kind == Tok::kRParen) {
      Next();
      return true;
    }
    while (true) {
      ExprPtr a = ParseExpr(0);
      if (!a) return false;
      args->push_back(std::move(a));
      const Token& t = Peek();
      if (t.kind == Tok::kComma) {
        Next();
        if (Peek().kind == Tok::kRParen) {
          Fail(PosRange{t.start, t.end}, "trailing commas not allowed in function call args");
          return false;
        }
        continue;
      }
      if (t.kind == Tok::kRParen) {
        Next();
        return true;
      }
      Unexpected("", "");
      return false;
    }
  }

  ExprPtr ParseCall() {
    const Token& name = Next();
    Call call;
    if (!ParseCallBody(&call.args)) return nullptr;
    call.func = FindFunction(Text(name));
    if (call.func == nullptr) {
      return Fail(PosRange{name.start, name.end},
                  "unknown function with name " + internal::GoQuote(Text(name)));
    }
    return Make(std::move(call), name.start, last_closing_);
  }

  ExprPtr ParseAggregate() {
    const Token& op_tok = Next();
    Aggregate agg;
    agg.op = ToAggregateOp(op_tok.kind);
    bool grouped = false;
    auto parse_modifier = [&]() -> bool {
      agg.without = Next().kind == Tok::kWithout;
      grouped = true;
      return ParseGroupingLabels(&agg.grouping);
    };
    if (Peek().kind == Tok::kBy || Peek().kind == Tok::kWithout) {
      if (!parse_modifier()) return nullptr;
    }
    if (Peek().kind != Tok::kLParen) return Unexpected("aggregation", "");
    std::vector<ExprPtr> args;
    if (!ParseCallBody(&args)) return nullptr;
    if (!grouped && (Peek().kind == Tok::kBy || Peek().kind == Tok::kWithout)) {
      if (!parse_modifier()) return nullptr;
    }
    const PosRange pos{op_tok.start, last_closing_};
    if (args.empty()) return Fail(pos, "no arguments for aggregate expression provided");
    const size_t want = HasParam(agg.op) ? 2 : 1;
    if (args.size() != want) {
      return Fail(pos, "wrong number of arguments for aggregate expression provided, expected " +
                           std::to_string(want) + ", got " + std::to_string(args.size()));
    }
    if (want == 2) agg.param = std::move(args[0]);
    agg.expr = std::move(args.back());
    return Make(std::move(agg), pos.start, pos.end);
  }

  static constexpr int kMaxDepth = 1000;

  std::string_view in_;
  internal::LexResult lex_;
  size_t idx_ = 0;
  int depth_ = 0;
  int last_closing_ = 0;
  std::optional<ParseError> error_;
};

}  // namespace

ParseResult Parse(std::string_view query) { return Parser(query).ParseQuery(); }

Result<Labels> ParseMetric(std::string_view text) {
  Labels out;
  std::string err;
  if (!Parser(text).ParseMetricOnly(&out, &err)) return Status::Error(err);
  return out;
}

Result<std::vector<tsdb::Matcher>> ParseMetricSelector(std::string_view text) {
  std::vector<tsdb::Matcher> out;
  std::string err;
  if (!Parser(text).ParseSelectorOnly(&out, &err)) return Status::Error(err);
  bool any_non_empty = false;
  for (const auto& m : out) {
    if (!m.MatchesEmpty()) any_non_empty = true;
  }
  if (!any_non_empty) {
    return Status::Error("vector selector must contain at least one non-empty matcher");
  }
  return out;
}

Result<int64_t> ParseDuration(std::string_view text) {
  // A plain number is seconds (as the HTTP API accepts), otherwise a
  // Prometheus duration.
  std::string s(text);
  if (!s.empty()) {
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(s.c_str(), &end);
    if (end == s.c_str() + s.size() && !std::isnan(v)) {
      const double ms = v * 1000.0;
      if (errno == ERANGE || ms >= 9.2e18 || ms <= -9.2e18) {
        return Status::Error("cannot parse " + internal::GoQuote(text) +
                             " to a valid duration. It overflows int64");
      }
      return static_cast<int64_t>(std::round(ms));
    }
  }
  int64_t ms = 0;
  std::string err;
  if (!internal::ParseModelDuration(text, &ms, &err)) {
    return Status::Error("cannot parse " + internal::GoQuote(text) + " to a valid duration");
  }
  return ms;
}

}  // namespace gpumon::promql
