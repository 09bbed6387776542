// PromQL lexer, a state machine over the query bytes modelled on
// Prometheus's lex.go so that tokens and error messages agree with it.

#include "promql/parser/lexer.h"

#include <cctype>
#include <cstring>

#include "promql/parser/quote.h"

namespace gpumon::promql::internal {
namespace {

bool IsSpace(int c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool IsAlpha(int c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(int c) { return c >= '0' && c <= '9'; }
bool IsAlnum(int c) { return IsAlpha(c) || IsDigit(c); }

struct Keyword {
  const char* word;
  Tok kind;
};

// Case-insensitive keyword table (Prometheus's `key` map, plus inf/nan).
constexpr Keyword kKeywords[] = {
    {"and", Tok::kLand},
    {"or", Tok::kLor},
    {"unless", Tok::kLunless},
    {"atan2", Tok::kAtan2},
    {"sum", Tok::kSum},
    {"avg", Tok::kAvg},
    {"count", Tok::kCount},
    {"min", Tok::kMin},
    {"max", Tok::kMax},
    {"group", Tok::kGroup},
    {"stddev", Tok::kStddev},
    {"stdvar", Tok::kStdvar},
    {"topk", Tok::kTopk},
    {"bottomk", Tok::kBottomk},
    {"count_values", Tok::kCountValues},
    {"quantile", Tok::kQuantile},
    {"limitk", Tok::kLimitk},
    {"limit_ratio", Tok::kLimitRatio},
    {"offset", Tok::kOffset},
    {"by", Tok::kBy},
    {"without", Tok::kWithout},
    {"on", Tok::kOn},
    {"ignoring", Tok::kIgnoring},
    {"group_left", Tok::kGroupLeft},
    {"group_right", Tok::kGroupRight},
    {"bool", Tok::kBool},
    {"start", Tok::kStart},
    {"end", Tok::kEnd},
    {"step", Tok::kStep},
    {"range", Tok::kRange},
    {"max_of", Tok::kMaxOf},
    {"min_of", Tok::kMinOf},
    {"inf", Tok::kNumber},
    {"nan", Tok::kNumber},
};

bool EqualsFold(std::string_view a, const char* b) {
  const size_t n = std::strlen(b);
  if (a.size() != n) return false;
  for (size_t i = 0; i < n; ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != b[i]) return false;
  }
  return true;
}

bool LookupKeyword(std::string_view word, Tok* kind) {
  for (const auto& k : kKeywords) {
    if (EqualsFold(word, k.word)) {
      *kind = k.kind;
      return true;
    }
  }
  return false;
}

class Lexer {
 public:
  explicit Lexer(std::string_view in) : in_(in) {}

  LexResult Run() {
    LexResult r;
    r.tokens.reserve(in_.size() / 3 + 2);
    out_ = &r;
    while (!done_) Step();
    return r;
  }

 private:
  int Peek(size_t off = 0) const {
    return pos_ + off < in_.size() ? static_cast<unsigned char>(in_[pos_ + off]) : -1;
  }

  void Emit(Tok kind) {
    out_->tokens.push_back(Token{kind, static_cast<int>(start_), static_cast<int>(pos_)});
    start_ = pos_;
  }

  void Error(std::string msg) {
    out_->tokens.push_back(
        Token{Tok::kError, static_cast<int>(start_), static_cast<int>(in_.size())});
    out_->error = std::move(msg);
    done_ = true;
  }

  // The rune at pos_ (for messages); advances nothing.
  uint32_t RuneAt(size_t p, int* w) const { return DecodeRune(in_, p, w); }

  void SkipSpaces() {
    while (IsSpace(Peek())) ++pos_;
    start_ = pos_;
  }

  void SkipComment() {
    while (pos_ < in_.size() && in_[pos_] != '\n' && in_[pos_] != '\r') ++pos_;
    start_ = pos_;
  }

  void Step() {
    if (brace_open_) return InsideBraces();
    // Right after '[' Prometheus lexes a duration expression; once a
    // number or duration is read it is back to statement lexing with the
    // bracket still open.
    if (bracket_open_ && duration_expr_) return InsideBrackets();
    const int c = Peek();
    if (c == '#') return SkipComment();
    if (c < 0) {
      if (paren_depth_ != 0) return Error("unclosed left parenthesis");
      if (bracket_open_) return Error("unclosed left bracket");
      Emit(Tok::kEof);
      done_ = true;
      return;
    }
    if (IsSpace(c)) return SkipSpaces();
    ++pos_;
    switch (c) {
      case ',':
        return Emit(Tok::kComma);
      case '*':
        return Emit(Tok::kMul);
      case '/':
        return Emit(Tok::kDiv);
      case '%':
        return Emit(Tok::kMod);
      case '+':
        return Emit(Tok::kAdd);
      case '-':
        return Emit(Tok::kSub);
      case '^':
        return Emit(Tok::kPow);
      case '@':
        return Emit(Tok::kAt);
      case '=':
        if (Peek() == '=') {
          ++pos_;
          return Emit(Tok::kEqlc);
        }
        if (Peek() == '~') return Error("unexpected character after '=': '~'");
        return Emit(Tok::kAssign);
      case '!': {
        if (Peek() == '=') {
          ++pos_;
          return Emit(Tok::kNeq);
        }
        return Error("unexpected character after '!': " + QuoteNext());
      }
      case '<':
        if (Peek() == '=') {
          ++pos_;
          return Emit(Tok::kLte);
        }
        return Emit(Tok::kLss);
      case '>':
        if (Peek() == '=') {
          ++pos_;
          return Emit(Tok::kGte);
        }
        return Emit(Tok::kGtr);
      case '"':
      case '\'':
        return String(static_cast<char>(c));
      case '`':
        return RawString();
      case '(':
        ++paren_depth_;
        return Emit(Tok::kLParen);
      case ')':
        // Prometheus's lexer emits the token and then overwrites it with
        // the error, positioned after the parenthesis.
        if (--paren_depth_ < 0) {
          start_ = pos_;
          return Error("unexpected right parenthesis ')'");
        }
        return Emit(Tok::kRParen);
      case '{':
        if (Peek() == '{') {
          start_ = pos_ - 1;
          return Error("native histogram literals ({{...}}) are not supported");
        }
        brace_open_ = true;
        return Emit(Tok::kLBrace);
      case '}':
        return Error("unexpected character: '}'");
      case '[':
        if (bracket_open_) {
          start_ = pos_ - 1;
          return Error("unexpected left bracket '['");
        }
        got_colon_ = false;
        bracket_open_ = true;
        duration_expr_ = true;
        return Emit(Tok::kLBracket);
      case ']':
        if (!bracket_open_) return Error("unexpected right bracket ']'");
        bracket_open_ = false;
        return Emit(Tok::kRBracket);
      default:
        break;
    }
    if (IsDigit(c) || (c == '.' && IsDigit(Peek()))) {
      --pos_;
      return NumberOrDuration();
    }
    if ((IsAlpha(c) || c == ':') && bracket_open_) return BracketWord(c);
    if (IsAlpha(c) || c == ':') {
      --pos_;
      return KeywordOrIdentifier();
    }
    --pos_;
    int w = 1;
    const uint32_t r = RuneAt(pos_, &w);
    return Error("unexpected character: " + GoQuoteRune(r));
  }

  // A letter or ':' after the duration inside brackets: the subquery
  // colon or a duration-expression keyword.
  void BracketWord(int c) {
    if (c == ':') {
      if (got_colon_) return Error("unexpected colon ':'");
      got_colon_ = true;
      return Emit(Tok::kColon);
    }
    size_t p = pos_;
    while (p < in_.size() && IsAlpha(static_cast<unsigned char>(in_[p]))) ++p;
    Tok kind;
    if (LookupKeyword(in_.substr(start_, p - start_), &kind) &&
        (kind == Tok::kStep || kind == Tok::kRange || kind == Tok::kMaxOf || kind == Tok::kMinOf)) {
      pos_ = p;
      return Emit(kind);
    }
    return Error("unexpected character: " + GoQuoteRune(static_cast<uint32_t>(c)) +
                 ", expected ':'");
  }

  // Quotes the rune at pos_ for a message (eof reads as Go's -1 rune).
  std::string QuoteNext() {
    if (pos_ >= in_.size()) return GoQuoteRune(kRuneError);  // Go's %q of eof (-1)
    int w = 1;
    return GoQuoteRune(RuneAt(pos_, &w));
  }

  void InsideBraces() {
    const int c = Peek();
    if (c == '#') return SkipComment();
    if (c < 0) return Error("unexpected end of input inside braces");
    if (IsSpace(c)) return SkipSpaces();
    if (IsAlpha(c)) {
      while (IsAlnum(Peek())) ++pos_;
      return Emit(Tok::kIdentifier);
    }
    ++pos_;
    switch (c) {
      case ',':
        return Emit(Tok::kComma);
      case '"':
      case '\'':
        return String(static_cast<char>(c));
      case '`':
        return RawString();
      case '=':
        if (Peek() == '~') {
          ++pos_;
          return Emit(Tok::kEqlRegex);
        }
        return Emit(Tok::kAssign);
      case '!':
        if (Peek() == '~') {
          ++pos_;
          return Emit(Tok::kNeqRegex);
        }
        if (Peek() == '=') {
          ++pos_;
          return Emit(Tok::kNeq);
        }
        return Error("unexpected character after '!' inside braces: " + QuoteNext());
      case '{':
        return Error("unexpected left brace '{'");
      case '}':
        brace_open_ = false;
        return Emit(Tok::kRBrace);
      default:
        break;
    }
    --pos_;
    int w = 1;
    return Error("unexpected character inside braces: " + GoQuoteRune(RuneAt(pos_, &w)));
  }

  // Inside [...]: durations, numbers, ':' and the duration-expression
  // tokens (which the parser rejects, as Prometheus does without the
  // experimental flag).
  void InsideBrackets() {
    const int c = Peek();
    if (c < 0) return Error("unexpected end of input in duration expression");
    if (IsSpace(c)) return SkipSpaces();
    ++pos_;
    switch (c) {
      case ']':
        bracket_open_ = false;
        got_colon_ = false;
        duration_expr_ = false;
        return Emit(Tok::kRBracket);
      case ':':
        // As with ')', the error replaces the colon token.
        if (!got_duration_) {
          start_ = pos_;
          return Error("unexpected colon before duration in duration expression");
        }
        if (got_colon_) {
          start_ = pos_;
          return Error("unexpected repeated colon in duration expression");
        }
        got_colon_ = true;
        return Emit(Tok::kColon);
      case '(':
        ++paren_depth_;
        return Emit(Tok::kLParen);
      case ')':
        // Prometheus's lexer emits the token and then overwrites it with
        // the error, positioned after the parenthesis.
        if (--paren_depth_ < 0) {
          start_ = pos_;
          return Error("unexpected right parenthesis ')'");
        }
        return Emit(Tok::kRParen);
      case '+':
        return Emit(Tok::kAdd);
      case '-':
        return Emit(Tok::kSub);
      case '*':
        return Emit(Tok::kMul);
      case '/':
        return Emit(Tok::kDiv);
      case '%':
        return Emit(Tok::kMod);
      case '^':
        return Emit(Tok::kPow);
      case ',':
        return Emit(Tok::kComma);
      default:
        break;
    }
    if (IsDigit(c) || (c == '.' && IsDigit(Peek()))) {
      --pos_;
      got_duration_ = true;
      duration_expr_ = false;
      return NumberOrDuration();
    }
    if (IsAlpha(c)) {
      size_t p = pos_;
      while (p < in_.size() && IsAlpha(static_cast<unsigned char>(in_[p]))) ++p;
      std::string_view word = in_.substr(start_, p - start_);
      Tok kind;
      if (LookupKeyword(word, &kind) && (kind == Tok::kStep || kind == Tok::kRange ||
                                         kind == Tok::kMaxOf || kind == Tok::kMinOf)) {
        pos_ = p;
        return Emit(kind);
      }
    }
    --pos_;
    int w = 1;
    return Error("unexpected character in duration expression: " + GoQuoteRune(RuneAt(pos_, &w)));
  }

  bool Accept(const char* valid) {
    const int c = Peek();
    if (c >= 0 && c != 0 && std::strchr(valid, c) != nullptr) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool Is(const char* valid) const {
    const int c = Peek();
    return c > 0 && std::strchr(valid, c) != nullptr;
  }

  // Prometheus's scanNumber: decimal/hex digits with one '.', one exponent
  // and '_' separators between digits; fails when letters follow.
  bool ScanNumber() {
    const size_t initial = pos_;
    const char* digits = "0123456789";
    bool hex = false;
    if (Peek() == '0' && (Peek(1) == 'x' || Peek(1) == 'X')) {
      pos_ += 2;
      Accept("_");
      digits = "0123456789abcdefABCDEF";
      hex = true;
    }
    Accept(".");
    Accept(digits);
    bool dot = false;
    bool exponent = false;
    std::string all = std::string(digits) + "._eE";
    while (Is(all.c_str())) {
      if (Is(".") && dot) {
        Accept(".");
        return false;
      }
      if (!hex && Is("eE") && exponent) {
        Accept("eE");
        return false;
      }
      if (Accept(".")) {
        dot = true;
        if (Accept("_.")) return false;
        if (hex) return false;
        continue;
      }
      if (!hex && Accept("eE")) {
        exponent = true;
        Accept("+-");
        if (Accept("._eE") || Peek() < 0) return false;
        continue;
      }
      if (Accept("_")) {
        if (Accept("._eE") || Peek() < 0) return false;
        continue;
      }
      while (Accept(digits)) {
      }
    }
    if (pos_ == initial) return false;
    return !IsAlnum(Peek());
  }

  bool AcceptRemainingDuration() {
    if (!Accept("smhdwy")) return false;
    Accept("s");
    while (Accept("0123456789")) {
      while (Accept("0123456789")) {
      }
      if (!Accept("smhdw")) return false;
      Accept("s");
    }
    // Prometheus reads the next character here and keeps it in the
    // error text when it is part of a word.
    if (IsAlnum(Peek())) {
      ++pos_;
      return false;
    }
    return true;
  }

  void NumberOrDuration() {
    if (ScanNumber()) return Emit(Tok::kNumber);
    if (AcceptRemainingDuration()) return Emit(Tok::kDuration);
    // Prometheus quotes the text scanned so far.
    return Error("bad number or duration syntax: " + GoQuote(in_.substr(start_, pos_ - start_)));
  }

  void KeywordOrIdentifier() {
    while (IsAlnum(Peek()) || Peek() == ':') ++pos_;
    std::string_view word = in_.substr(start_, pos_ - start_);
    Tok kind;
    if (LookupKeyword(word, &kind)) return Emit(kind);
    if (word.find(':') != std::string_view::npos) return Emit(Tok::kMetricIdentifier);
    return Emit(Tok::kIdentifier);
  }

  void String(char quote) {
    while (true) {
      const int c = Peek();
      if (c < 0 || c == '\n') return Error("unterminated quoted string");
      if (c == '\\') {
        ++pos_;
        if (!Escape(quote)) return;
        continue;
      }
      int w = 1;
      if (RuneAt(pos_, &w) == kRuneError && w == 1) return Error("invalid UTF-8 rune");
      pos_ += w;
      if (c == quote) break;
    }
    Emit(Tok::kString);
  }

  bool Escape(char quote) {
    const int c = Peek();
    if (c < 0) {
      Error("escape sequence not terminated");
      return false;
    }
    int n = 0;
    uint32_t base = 0;
    uint32_t max = 0;
    switch (c) {
      case 'a':
      case 'b':
      case 'f':
      case 'n':
      case 'r':
      case 't':
      case 'v':
      case '\\':
        ++pos_;
        return true;
      case '0':
      case '1':
      case '2':
      case '3':
      case '4':
      case '5':
      case '6':
      case '7':
        n = 3, base = 8, max = 255;
        break;
      case 'x':
        ++pos_, n = 2, base = 16, max = 255;
        break;
      case 'u':
        ++pos_, n = 4, base = 16, max = 0x10FFFF;
        break;
      case 'U':
        ++pos_, n = 8, base = 16, max = 0x10FFFF;
        break;
      default:
        if (c == quote) {
          ++pos_;
          return true;
        }
        {
          int w = 1;
          Error("unknown escape sequence " + GoRuneDescription(RuneAt(pos_, &w)));
        }
        return false;
    }
    uint32_t x = 0;
    for (; n > 0; --n) {
      const int d = Peek();
      uint32_t v = 16;
      if (d >= '0' && d <= '9') v = d - '0';
      if (d >= 'a' && d <= 'f') v = d - 'a' + 10;
      if (d >= 'A' && d <= 'F') v = d - 'A' + 10;
      if (v >= base) {
        if (d < 0) {
          Error("escape sequence not terminated");
        } else {
          int w = 1;
          Error("illegal character " + GoRuneDescription(RuneAt(pos_, &w)) + " in escape sequence");
        }
        return false;
      }
      x = x * base + v;
      ++pos_;
    }
    if (x > max || (x >= 0xD800 && x < 0xE000)) {
      Error("escape sequence is an invalid Unicode code point");
      return false;
    }
    return true;
  }

  void RawString() {
    while (true) {
      const int c = Peek();
      if (c < 0) return Error("unterminated raw string");
      int w = 1;
      if (RuneAt(pos_, &w) == kRuneError && w == 1) return Error("invalid UTF-8 rune");
      pos_ += w;
      if (c == '`') break;
    }
    Emit(Tok::kString);
  }

  std::string_view in_;
  size_t pos_ = 0;
  size_t start_ = 0;
  int paren_depth_ = 0;
  bool brace_open_ = false;
  bool bracket_open_ = false;
  bool got_colon_ = false;
  bool got_duration_ = false;  // never reset, as in Prometheus
  bool duration_expr_ = false;
  bool done_ = false;
  LexResult* out_ = nullptr;
};

}  // namespace

LexResult Lex(std::string_view input) { return Lexer(input).Run(); }

bool IsAggregator(Tok t) { return t >= Tok::kAvg && t <= Tok::kLimitRatio; }
bool IsOperator(Tok t) { return t >= Tok::kAdd && t <= Tok::kLunless; }
bool IsKeyword(Tok t) { return t >= Tok::kBool && t <= Tok::kWithout; }

std::string Describe(const Token& t, std::string_view input) {
  std::string_view val = input.substr(t.start, t.end - t.start);
  switch (t.kind) {
    case Tok::kEof:
      return "end of input";
    case Tok::kError:
      return std::string(val);
    // Built with append rather than "literal" + string: g++ 12 at -O3
    // reports a false -Wrestrict on the operator+ form.
    case Tok::kIdentifier:
      return std::string("identifier ").append(GoQuote(val));
    case Tok::kMetricIdentifier:
      return std::string("metric identifier ").append(GoQuote(val));
    case Tok::kNumber:
    case Tok::kDuration:
    case Tok::kString: {
      const char* what = t.kind == Tok::kNumber     ? "number "
                         : t.kind == Tok::kDuration ? "duration "
                                                    : "string ";
      // Go's %.10q: at most 10 runes, then "...".
      size_t runes = 0, i = 0;
      while (i < val.size() && runes < 10) {
        int w = 1;
        DecodeRune(val, i, &w);
        i += w;
        ++runes;
      }
      std::string out(what);
      if (val.size() > 10) return out.append(GoQuote(val.substr(0, i))).append("...");
      return out.append(GoQuote(val));
    }
    default:
      break;
  }
  if (IsOperator(t.kind)) return std::string("<op:").append(val).append(">");
  if (IsAggregator(t.kind)) return std::string("<aggr:").append(val).append(">");
  if (IsKeyword(t.kind)) return std::string("<").append(val).append(">");
  return GoQuote(val);
}

}  // namespace gpumon::promql::internal
