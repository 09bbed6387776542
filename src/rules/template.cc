#include "rules/template.h"

#include <re2/re2.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <functional>
#include <map>
#include <set>
#include <variant>
#include <vector>

#include "promql/parser/quote.h"
#include "rules/status_macros.h"

namespace gpumon::rules {

// ---------------------------------------------------------------- values

namespace {

struct DataRef {
  const TemplateData* data = nullptr;
};

// A dynamic value, as Go templates hold them in interfaces.
using Value = std::variant<std::monostate, bool, int64_t, double, std::string, Labels, DataRef>;

std::string GoPercentG4(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.4g", v);
  return buf;
}

std::string MapString(const Labels& m) {
  std::string out = "map[";
  bool first = true;
  for (const auto& l : m) {
    if (!first) out += ' ';
    first = false;
    out += l.name + ":" + l.value;
  }
  return out + "]";
}

std::string Sprint(const Value& v) {
  switch (v.index()) {
    case 0:
      return "<no value>";
    case 1:
      return std::get<bool>(v) ? "true" : "false";
    case 2:
      return std::to_string(std::get<int64_t>(v));
    case 3:
      return FormatGoFloat(std::get<double>(v));
    case 4:
      return std::get<std::string>(v);
    case 5:
      return MapString(std::get<Labels>(v));
    default: {
      const TemplateData& d = *std::get<DataRef>(v).data;
      return "{" + MapString(d.labels) + " " + MapString(d.external_labels) + " " + d.external_url +
             " " + FormatGoFloat(d.value) + "}";
    }
  }
}

const char* TypeName(const Value& v) {
  static const char* kNames[] = {
      "nil", "bool", "int", "float64", "string", "map[string]string", "template.AlertData"};
  return kNames[v.index()];
}

bool Truth(const Value& v) {
  switch (v.index()) {
    case 0:
      return false;
    case 1:
      return std::get<bool>(v);
    case 2:
      return std::get<int64_t>(v) != 0;
    case 3:
      return std::get<double>(v) != 0;
    case 4:
      return !std::get<std::string>(v).empty();
    case 5:
      return !std::get<Labels>(v).empty();
    default:
      return true;
  }
}

// Go's strconv.ParseFloat for the common forms (decimal, exponent, Inf, NaN).
bool ParseGoFloat(std::string_view s, double* out) {
  std::string t(s);
  if (t == "NaN") {
    *out = std::nan("");
    return true;
  }
  std::string_view u = t;
  double sign = 1;
  if (!u.empty() && (u[0] == '+' || u[0] == '-')) {
    sign = u[0] == '-' ? -1 : 1;
    u.remove_prefix(1);
  }
  if (u == "Inf" || u == "inf" || u == "Infinity" || u == "infinity") {
    *out = sign * HUGE_VAL;
    return true;
  }
  if (u.empty() || !(std::isdigit(static_cast<unsigned char>(u[0])) || u[0] == '.')) return false;
  double v = 0;
  auto [p, ec] = std::from_chars(u.data(), u.data() + u.size(), v);
  if (ec != std::errc() || p != u.data() + u.size()) return false;
  *out = sign * v;
  return true;
}

// common_templates.ConvertToFloat.
Result<double> ToFloat(const Value& v) {
  switch (v.index()) {
    case 2:
      return static_cast<double>(std::get<int64_t>(v));
    case 3:
      return std::get<double>(v);
    case 4: {
      double d = 0;
      if (!ParseGoFloat(std::get<std::string>(v), &d)) {
        return Status::Error("strconv.ParseFloat: parsing \"" + std::get<std::string>(v) +
                             "\": invalid syntax");
      }
      return d;
    }
    default:
      return Status::Error(std::string("can't convert ") + TypeName(v) + " to float");
  }
}

}  // namespace

std::string FormatGoFloat(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == 0) return std::signbit(v) ? "-0" : "0";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  std::string sci(buf, r.ptr);
  size_t e = sci.find('e');
  int exp = std::stoi(sci.substr(e + 1));
  if (exp < -4 || exp >= 6) return sci;  // shortest 'g' decides with precision 6
  r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::fixed);
  return std::string(buf, r.ptr);
}

std::string Humanize(double v) {
  if (v == 0 || std::isnan(v) || std::isinf(v)) return GoPercentG4(v);
  static const char* kBig[] = {"k", "M", "G", "T", "P", "E", "Z", "Y"};
  static const char* kSmall[] = {"m", "u", "n", "p", "f", "a", "z", "y"};
  std::string prefix;
  if (std::fabs(v) >= 1) {
    for (const char* p : kBig) {
      if (std::fabs(v) < 1000) break;
      prefix = p;
      v /= 1000;
    }
  } else {
    for (const char* p : kSmall) {
      if (std::fabs(v) >= 1) break;
      prefix = p;
      v *= 1000;
    }
  }
  return GoPercentG4(v) + prefix;
}

std::string Humanize1024(double v) {
  if (std::fabs(v) <= 1 || std::isnan(v) || std::isinf(v)) return GoPercentG4(v);
  static const char* kUnits[] = {"ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi"};
  std::string prefix;
  for (const char* p : kUnits) {
    if (std::fabs(v) < 1024) break;
    prefix = p;
    v /= 1024;
  }
  return GoPercentG4(v) + prefix;
}

std::string HumanizeDuration(double v) {
  if (std::isnan(v) || std::isinf(v)) return GoPercentG4(v);
  if (v == 0) return GoPercentG4(v) + "s";
  if (std::fabs(v) >= 1) {
    std::string sign;
    if (v < 0) {
      sign = "-";
      v = -v;
    }
    int64_t d = static_cast<int64_t>(v);
    int64_t seconds = d % 60, minutes = (d / 60) % 60, hours = (d / 3600) % 24, days = d / 86400;
    auto s = [](int64_t x) { return std::to_string(x); };
    if (days != 0) {
      return sign + s(days) + "d " + s(hours) + "h " + s(minutes) + "m " + s(seconds) + "s";
    }
    if (hours != 0) return sign + s(hours) + "h " + s(minutes) + "m " + s(seconds) + "s";
    if (minutes != 0) return sign + s(minutes) + "m " + s(seconds) + "s";
    return sign + GoPercentG4(v) + "s";
  }
  static const char* kSmall[] = {"m", "u", "n", "p", "f", "a", "z", "y"};
  std::string prefix;
  for (const char* p : kSmall) {
    if (std::fabs(v) >= 1) break;
    prefix = p;
    v *= 1000;
  }
  return GoPercentG4(v) + prefix + "s";
}

std::string HumanizePercentage(double ratio) { return GoPercentG4(ratio * 100) + "%"; }

std::string HumanizeTimestamp(double v) {
  if (std::isnan(v) || std::isinf(v)) return GoPercentG4(v);
  // model.TimeFromUnixNano: millisecond precision, printed as time.Time.String() in UTC.
  int64_t ms = static_cast<int64_t>(v * 1e9) / 1'000'000;
  int64_t secs = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
  int64_t frac = ms - secs * 1000;
  std::time_t tt = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
  std::string out = buf;
  if (frac != 0) {
    char f[32];
    std::snprintf(f, sizeof(f), ".%03lld", static_cast<long long>(frac));
    std::string fs = f;
    while (fs.back() == '0') fs.pop_back();
    out += fs;
  }
  return out + " +0000 UTC";
}

// ---------------------------------------------------------------- AST

namespace {

struct Pipe;

struct Arg {
  enum Kind { kField, kVar, kFunc, kString, kInt, kFloat, kBool, kNil, kDot, kPipe };
  Kind kind = kNil;
  std::string name;                 // variable (with $) or function name
  std::vector<std::string> fields;  // field chain after the operand
  std::string str;
  int64_t i = 0;
  double f = 0;
  bool b = false;
  std::shared_ptr<Pipe> pipe;
};

struct Command {
  std::vector<Arg> args;
};

struct Pipe {
  int line = 1;
  std::vector<std::string> decl;  // declared or assigned variables
  bool assign = false;            // = rather than :=
  std::vector<Command> cmds;
};

}  // namespace

struct Template::Node {
  enum Kind { kList, kText, kAction, kIf, kWith, kRange };
  Kind kind = kList;
  std::string text;
  Pipe pipe;
  std::vector<std::shared_ptr<Node>> list;
  std::shared_ptr<Node> else_list;  // may be null
};

namespace {

using Node = Template::Node;
using NodePtr = std::shared_ptr<Node>;

const std::set<std::string, std::less<>>& FunctionNames() {
  static const std::set<std::string, std::less<>> kNames = {"humanize",
                                                            "humanize1024",
                                                            "humanizeDuration",
                                                            "humanizePercentage",
                                                            "humanizeTimestamp",
                                                            "printf",
                                                            "print",
                                                            "println",
                                                            "toUpper",
                                                            "toLower",
                                                            "title",
                                                            "reReplaceAll",
                                                            "match",
                                                            "stripPort",
                                                            "safeHtml",
                                                            "eq",
                                                            "ne",
                                                            "lt",
                                                            "le",
                                                            "gt",
                                                            "ge",
                                                            "and",
                                                            "or",
                                                            "not",
                                                            "len",
                                                            "index",
                                                            "urlquery"};
  return kNames;
}

// Prometheus template functions this engine does not implement: named
// in errors so a rule author knows the template is valid elsewhere.
const std::set<std::string, std::less<>>& PrometheusOnlyFunctions() {
  static const std::set<std::string, std::less<>> kNames = {
      "query",       "first",         "label",      "value",       "strvalue",  "sortByLabel",
      "args",        "tmpl",          "pathPrefix", "externalURL", "graphLink", "tableLink",
      "stripDomain", "parseDuration", "toTime",     "toDuration",  "now",       "html",
      "js",          "call",          "slice"};
  return kNames;
}

// ---------------------------------------------------------------- lexer

enum class Tok {
  kText,
  kLeftDelim,
  kRightDelim,
  kField,  // .Name
  kVar,    // $name or $
  kIdent,
  kString,
  kNumber,
  kDot,
  kPipe,
  kLParen,
  kRParen,
  kDeclare,  // :=
  kAssign,   // =
  kComma,
  kSpace,
  kEOF
};

struct Token {
  Tok kind;
  std::string text;
  int line;
};

class Lexer {
 public:
  explicit Lexer(std::string_view in) : in_(in) {}

  Result<std::vector<Token>> Run() {
    while (pos_ < in_.size()) {
      size_t open = in_.find("{{", pos_);
      if (open == std::string_view::npos) {
        Emit(Tok::kText, in_.substr(pos_));
        pos_ = in_.size();
        break;
      }
      size_t text_end = open;
      bool trim_left = open + 3 < in_.size() + 1 && in_.substr(open + 2, 1) == "-" &&
                       open + 3 < in_.size() && IsSpace(in_[open + 3]);
      if (trim_left) {
        while (text_end > pos_ && IsSpace(in_[text_end - 1])) --text_end;
      }
      if (text_end > pos_) Emit(Tok::kText, in_.substr(pos_, text_end - pos_));
      CountLines(pos_, open);
      pos_ = open + 2 + (trim_left ? 2 : 0);
      // Comments.
      if (in_.substr(pos_, 2) == "/*") {
        size_t close = in_.find("*/", pos_);
        if (close == std::string_view::npos) return Err("unclosed comment");
        CountLines(pos_, close);
        pos_ = close + 2;
        bool trim_right = false;
        if (in_.substr(pos_, 4) == " -}}") {
          trim_right = true;
          pos_ += 4;
        } else if (in_.substr(pos_, 2) == "}}") {
          pos_ += 2;
        } else {
          return Err("comment ends before closing delimiter");
        }
        if (trim_right) SkipSpace();
        continue;
      }
      Emit(Tok::kLeftDelim, "{{");
      GPUMON_RETURN_IF_ERROR(LexInside());
    }
    Emit(Tok::kEOF, "");
    return std::move(tokens_);
  }

 private:
  static bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
  static bool IsAlnum(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
           static_cast<unsigned char>(c) >= 0x80;
  }
  void CountLines(size_t from, size_t to) {
    for (size_t i = from; i < to && i < in_.size(); ++i) line_ += in_[i] == '\n';
  }
  void SkipSpace() {
    size_t s = pos_;
    while (pos_ < in_.size() && IsSpace(in_[pos_])) ++pos_;
    CountLines(s, pos_);
  }
  void Emit(Tok k, std::string_view text) { tokens_.push_back({k, std::string(text), line_}); }
  Status Err(const std::string& msg) {
    return Status::Error("line " + std::to_string(line_) + ": " + msg);
  }

  Status LexInside() {
    int paren = 0;
    while (true) {
      if (pos_ >= in_.size()) return Err("unclosed action");
      char c = in_[pos_];
      if (IsSpace(c)) {
        size_t s = pos_;
        while (pos_ < in_.size() && IsSpace(in_[pos_])) ++pos_;
        CountLines(s, pos_);
        if (in_.substr(pos_, 3) == "-}}") {
          pos_ += 3;
          Emit(Tok::kRightDelim, "}}");
          SkipSpace();
          return Status::Ok();
        }
        Emit(Tok::kSpace, " ");
        continue;
      }
      if (in_.substr(pos_, 2) == "}}") {
        if (paren > 0) return Err("unclosed left paren");
        pos_ += 2;
        Emit(Tok::kRightDelim, "}}");
        return Status::Ok();
      }
      if (c == '|') {
        Emit(Tok::kPipe, "|");
        ++pos_;
      } else if (c == '(') {
        ++paren;
        Emit(Tok::kLParen, "(");
        ++pos_;
      } else if (c == ')') {
        if (--paren < 0) return Err("unexpected right paren");
        Emit(Tok::kRParen, ")");
        ++pos_;
      } else if (c == ',') {
        Emit(Tok::kComma, ",");
        ++pos_;
      } else if (in_.substr(pos_, 2) == ":=") {
        Emit(Tok::kDeclare, ":=");
        pos_ += 2;
      } else if (c == '=') {
        Emit(Tok::kAssign, "=");
        ++pos_;
      } else if (c == '"') {
        size_t s = pos_++;
        while (pos_ < in_.size() && in_[pos_] != '"') {
          if (in_[pos_] == '\\') ++pos_;
          if (pos_ < in_.size() && in_[pos_] == '\n') return Err("unterminated quoted string");
          ++pos_;
        }
        if (pos_ >= in_.size()) return Err("unterminated quoted string");
        ++pos_;
        Emit(Tok::kString, in_.substr(s, pos_ - s));
      } else if (c == '`') {
        size_t close = in_.find('`', pos_ + 1);
        if (close == std::string_view::npos) return Err("unterminated raw quoted string");
        Emit(Tok::kString, in_.substr(pos_, close + 1 - pos_));
        CountLines(pos_, close);
        pos_ = close + 1;
      } else if (c == '\'') {
        return Err("character constants are not supported");
      } else if (c == '$') {
        size_t s = pos_++;
        while (pos_ < in_.size() && IsAlnum(in_[pos_])) ++pos_;
        Emit(Tok::kVar, in_.substr(s, pos_ - s));
        LexFieldChain();
      } else if (c == '.' && (pos_ + 1 >= in_.size() || !IsAlnum(in_[pos_ + 1]) ||
                              std::isdigit(static_cast<unsigned char>(in_[pos_ + 1])))) {
        if (pos_ + 1 < in_.size() && std::isdigit(static_cast<unsigned char>(in_[pos_ + 1]))) {
          LexNumber();
        } else {
          Emit(Tok::kDot, ".");
          ++pos_;
        }
      } else if (c == '.') {
        LexFieldChain();
      } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+') {
        LexNumber();
      } else if (IsAlnum(c)) {
        size_t s = pos_;
        while (pos_ < in_.size() && IsAlnum(in_[pos_])) ++pos_;
        Emit(Tok::kIdent, in_.substr(s, pos_ - s));
        LexFieldChain();
      } else {
        return Err(std::string("unrecognized character in action: '") + c + "'");
      }
    }
  }

  void LexFieldChain() {
    while (pos_ + 1 < in_.size() && in_[pos_] == '.' && IsAlnum(in_[pos_ + 1]) &&
           !std::isdigit(static_cast<unsigned char>(in_[pos_ + 1]))) {
      size_t s = ++pos_;
      while (pos_ < in_.size() && IsAlnum(in_[pos_])) ++pos_;
      Emit(Tok::kField, in_.substr(s, pos_ - s));
    }
  }

  void LexNumber() {
    size_t s = pos_;
    if (in_[pos_] == '-' || in_[pos_] == '+') ++pos_;
    while (pos_ < in_.size() && (IsAlnum(in_[pos_]) || in_[pos_] == '.' ||
                                 ((in_[pos_] == '-' || in_[pos_] == '+') &&
                                  (in_[pos_ - 1] == 'e' || in_[pos_ - 1] == 'E')))) {
      ++pos_;
    }
    Emit(Tok::kNumber, in_.substr(s, pos_ - s));
  }

  std::string_view in_;
  size_t pos_ = 0;
  int line_ = 1;
  std::vector<Token> tokens_;
};

// ---------------------------------------------------------------- parser

Result<std::string> Unquote(const std::string& q) {
  if (q[0] == '`') return q.substr(1, q.size() - 2);
  std::string out;
  for (size_t i = 1; i + 1 < q.size(); ++i) {
    char c = q[i];
    if (c != '\\') {
      out += c;
      continue;
    }
    char e = q[++i];
    switch (e) {
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'r':
        out += '\r';
        break;
      case '\\':
        out += '\\';
        break;
      case '"':
        out += '"';
        break;
      case 'a':
        out += '\a';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'v':
        out += '\v';
        break;
      case 'x': {
        if (i + 2 >= q.size()) return Status::Error("invalid syntax");
        out += static_cast<char>(std::stoi(q.substr(i + 1, 2), nullptr, 16));
        i += 2;
        break;
      }
      default:
        return Status::Error("invalid syntax in string " + q);
    }
  }
  return out;
}

class Parser {
 public:
  explicit Parser(std::vector<Token> toks) : toks_(std::move(toks)) {
    vars_ = {"$", "$labels", "$externalLabels", "$externalURL", "$value"};
  }

  Result<NodePtr> Run() {
    auto root = std::make_shared<Node>();
    std::string end;
    GPUMON_RETURN_IF_ERROR(ParseList(root.get(), &end));
    if (!end.empty()) return Err("unexpected {{" + end + "}}");
    return root;
  }

 private:
  const Token& Peek() { return toks_[pos_]; }
  const Token& PeekNonSpace() {
    size_t p = pos_;
    while (toks_[p].kind == Tok::kSpace) ++p;
    return toks_[p];
  }
  const Token& Next() { return toks_[pos_++]; }
  const Token& NextNonSpace() {
    while (Peek().kind == Tok::kSpace) ++pos_;
    return Next();
  }
  Status Err(const std::string& msg) {
    return Status::Error("line " + std::to_string(toks_[pos_ > 0 ? pos_ - 1 : 0].line) + ": " +
                         msg);
  }

  // Parses nodes until EOF or a control keyword ({{end}}, {{else ...}}),
  // which is returned in *end ("" at EOF).
  Status ParseList(Node* list, std::string* end) {
    while (true) {
      const Token& t = Next();
      if (t.kind == Tok::kEOF) {
        end->clear();
        return Status::Ok();
      }
      if (t.kind == Tok::kText) {
        auto n = std::make_shared<Node>();
        n->kind = Node::kText;
        n->text = t.text;
        list->list.push_back(n);
        continue;
      }
      // t is {{
      const Token& k = PeekNonSpace();
      if (k.kind == Tok::kIdent) {
        if (k.text == "end" || k.text == "else") {
          NextNonSpace();
          *end = k.text;
          return Status::Ok();
        }
        if (k.text == "if" || k.text == "with" || k.text == "range") {
          std::string kw = k.text;
          NextNonSpace();
          GPUMON_ASSIGN_OR_RETURN(NodePtr n, ParseControl(kw));
          list->list.push_back(n);
          continue;
        }
        if (k.text == "define" || k.text == "template" || k.text == "block" || k.text == "break" ||
            k.text == "continue") {
          return Err("{{" + k.text + "}} is not supported in alert templates");
        }
      }
      auto n = std::make_shared<Node>();
      n->kind = Node::kAction;
      GPUMON_RETURN_IF_ERROR(ParsePipe(&n->pipe, /*allow_decl=*/true, Tok::kRightDelim));
      list->list.push_back(n);
    }
  }

  Result<NodePtr> ParseControl(const std::string& kw) {
    auto n = std::make_shared<Node>();
    n->kind = kw == "if" ? Node::kIf : kw == "with" ? Node::kWith : Node::kRange;
    size_t scope = vars_.size();
    GPUMON_RETURN_IF_ERROR(ParsePipe(&n->pipe, /*allow_decl=*/true, Tok::kRightDelim));
    auto body = std::make_shared<Node>();
    std::string end;
    GPUMON_RETURN_IF_ERROR(ParseList(body.get(), &end));
    n->list.push_back(body);
    if (end.empty()) return Err("unexpected EOF in {{" + kw + "}}");
    vars_.resize(scope);
    if (end == "else") {
      // {{else if ...}} / {{else with ...}} chain into a nested node.
      const Token& k = PeekNonSpace();
      if (k.kind == Tok::kIdent && (k.text == "if" || k.text == "with") && kw != "range") {
        std::string kw2 = k.text;
        NextNonSpace();
        GPUMON_ASSIGN_OR_RETURN(NodePtr nested, ParseControl(kw2));
        auto wrap = std::make_shared<Node>();
        wrap->list.push_back(nested);
        n->else_list = wrap;
        return n;  // the nested control consumed the shared {{end}}
      }
      if (NextNonSpace().kind != Tok::kRightDelim) return Err("unexpected token in {{else}}");
      auto els = std::make_shared<Node>();
      GPUMON_RETURN_IF_ERROR(ParseList(els.get(), &end));
      vars_.resize(scope);
      if (end != "end") return Err("expected {{end}} for {{" + kw + "}}");
      n->else_list = els;
    }
    if (NextNonSpace().kind != Tok::kRightDelim) return Err("unexpected token in {{end}}");
    return n;
  }

  Status ParsePipe(Pipe* pipe, bool allow_decl, Tok closer) {
    pipe->line = Peek().line;
    // Declarations: $x := / $x = / $k, $v :=
    if (allow_decl) {
      size_t save = pos_;
      std::vector<std::string> names;
      while (true) {
        const Token& t = NextNonSpace();
        if (t.kind != Tok::kVar || PeekNonSpace().kind == Tok::kField) break;
        names.push_back(t.text);
        const Token& op = NextNonSpace();
        if (op.kind == Tok::kComma && names.size() == 1) continue;
        if (op.kind == Tok::kDeclare || op.kind == Tok::kAssign) {
          pipe->decl = names;
          pipe->assign = op.kind == Tok::kAssign;
        }
        break;
      }
      if (pipe->decl.empty()) pos_ = save;
    }
    for (const auto& v : pipe->decl) {
      if (pipe->assign && !IsDefined(v)) return Err("undefined variable \"" + v + "\"");
    }
    while (true) {
      Command cmd;
      GPUMON_RETURN_IF_ERROR(ParseCommand(&cmd, closer));
      pipe->cmds.push_back(std::move(cmd));
      const Token& t = NextNonSpace();
      if (t.kind == closer) break;
      if (t.kind != Tok::kPipe) return Err("unexpected \"" + t.text + "\" in command");
    }
    if (pipe->cmds.empty()) return Err("missing value for command");
    for (size_t i = 1; i < pipe->cmds.size(); ++i) {
      const Arg& a0 = pipe->cmds[i].args[0];
      if (a0.kind != Arg::kFunc) {
        return Err("non executable command in pipeline stage " + std::to_string(i + 1));
      }
    }
    if (!pipe->assign) {
      for (const auto& v : pipe->decl) vars_.push_back(v);
    }
    return Status::Ok();
  }

  bool IsDefined(const std::string& v) const {
    for (const auto& x : vars_) {
      if (x == v) return true;
    }
    return false;
  }

  Status ParseCommand(Command* cmd, Tok closer) {
    while (true) {
      const Token& t = PeekNonSpace();
      if (t.kind == closer || t.kind == Tok::kPipe || t.kind == Tok::kEOF ||
          (closer == Tok::kRParen && t.kind == Tok::kRightDelim)) {
        break;
      }
      NextNonSpace();
      Arg a;
      switch (t.kind) {
        case Tok::kField:
          a.kind = Arg::kField;
          a.fields.push_back(t.text);
          break;
        case Tok::kVar:
          if (!IsDefined(t.text)) return Err("undefined variable \"" + t.text + "\"");
          a.kind = Arg::kVar;
          a.name = t.text;
          break;
        case Tok::kDot:
          a.kind = Arg::kDot;
          break;
        case Tok::kString: {
          a.kind = Arg::kString;
          auto s = Unquote(t.text);
          if (!s.ok()) return Err(s.status().message());
          a.str = *s;
          break;
        }
        case Tok::kNumber: {
          std::string txt = t.text;
          int64_t iv = 0;
          auto [p, ec] = std::from_chars(txt.data(), txt.data() + txt.size(), iv);
          if (ec == std::errc() && p == txt.data() + txt.size()) {
            a.kind = Arg::kInt;
            a.i = iv;
          } else if (double d = 0;
                     ParseGoFloat(txt, &d) && txt.find_first_of("In") == std::string::npos) {
            a.kind = Arg::kFloat;
            a.f = d;
          } else {
            return Err("bad number syntax: \"" + txt + "\"");
          }
          break;
        }
        case Tok::kIdent:
          if (t.text == "true" || t.text == "false") {
            a.kind = Arg::kBool;
            a.b = t.text == "true";
          } else if (t.text == "nil") {
            a.kind = Arg::kNil;
          } else if (FunctionNames().count(t.text)) {
            a.kind = Arg::kFunc;
            a.name = t.text;
          } else if (t.text == "if" || t.text == "else" || t.text == "end" || t.text == "with" ||
                     t.text == "range") {
            return Err("unexpected <" + t.text + "> in command");
          } else if (PrometheusOnlyFunctions().count(t.text)) {
            return Err("function \"" + t.text + "\" is not supported in alert templates");
          } else {
            return Err("function \"" + t.text + "\" not defined");
          }
          break;
        case Tok::kLParen: {
          a.kind = Arg::kPipe;
          a.pipe = std::make_shared<Pipe>();
          GPUMON_RETURN_IF_ERROR(ParsePipe(a.pipe.get(), /*allow_decl=*/false, Tok::kRParen));
          break;
        }
        default:
          return Err("unexpected \"" + t.text + "\" in command");
      }
      // Field chain directly attached: $x.a.b, (pipe).a, .A.B
      while (Peek().kind == Tok::kField) a.fields.push_back(Next().text);
      if (a.kind == Arg::kFunc && !a.fields.empty()) {
        return Err("unexpected . after term \"" + a.name + "\"");
      }
      cmd->args.push_back(std::move(a));
    }
    if (cmd->args.empty()) return Err("missing value for command");
    return Status::Ok();
  }

  std::vector<Token> toks_;
  size_t pos_ = 0;
  std::vector<std::string> vars_;
};

// ---------------------------------------------------------------- execution

Status ExecErr(int line, const std::string& msg) {
  return Status::Error("line " + std::to_string(line) + ": " + msg);
}

// Go's fmt verbs for printf, for the value kinds templates hold.
std::string BadVerb(char verb, const Value& v) {
  return std::string("%!") + verb + "(" + TypeName(v) + "=" + Sprint(v) + ")";
}

std::string Pad(std::string s, int width, bool minus, bool zero) {
  if (width <= 0 || static_cast<int>(s.size()) >= width) return s;
  size_t n = width - s.size();
  if (minus) return s + std::string(n, ' ');
  if (zero && !s.empty() && (s[0] == '-' || s[0] == '+')) {
    return s.substr(0, 1) + std::string(n, '0') + s.substr(1);
  }
  return std::string(n, zero ? '0' : ' ') + s;
}

using promql::internal::GoQuote;  // fmt's %q

std::string GoSprintf(const std::string& fmt, const std::vector<Value>& args) {
  std::string out;
  size_t argi = 0;
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%') {
      out += fmt[i];
      continue;
    }
    if (++i >= fmt.size()) {
      out += "%!(NOVERB)";
      break;
    }
    bool minus = false, plus = false, sharp = false, zero = false, space = false;
    for (; i < fmt.size(); ++i) {
      char c = fmt[i];
      if (c == '-') {
        minus = true;
      } else if (c == '+') {
        plus = true;
      } else if (c == '#') {
        sharp = true;
      } else if (c == '0') {
        zero = true;
      } else if (c == ' ') {
        space = true;
      } else {
        break;
      }
    }
    int width = -1, prec = -1;
    while (i < fmt.size() && std::isdigit(static_cast<unsigned char>(fmt[i]))) {
      width = (width < 0 ? 0 : width * 10) + (fmt[i++] - '0');
    }
    if (i < fmt.size() && fmt[i] == '.') {
      ++i;
      prec = 0;
      while (i < fmt.size() && std::isdigit(static_cast<unsigned char>(fmt[i]))) {
        prec = prec * 10 + (fmt[i++] - '0');
      }
    }
    if (i >= fmt.size()) {
      out += "%!(NOVERB)";
      break;
    }
    char verb = fmt[i];
    if (verb == '%') {
      out += '%';
      continue;
    }
    if (argi >= args.size()) {
      out += std::string("%!") + verb + "(MISSING)";
      continue;
    }
    const Value& v = args[argi++];
    std::string flags;
    if (minus) flags += '-';
    if (plus) flags += '+';
    if (sharp) flags += '#';
    if (zero) flags += '0';
    if (space) flags += ' ';
    std::string spec = "%" + flags + (width >= 0 ? std::to_string(width) : "") +
                       (prec >= 0 ? "." + std::to_string(prec) : "");
    char buf[512];
    std::string s;
    switch (verb) {
      case 'v':
        s = Pad(Sprint(v), width, minus, false);
        break;
      case 's':
        if (v.index() == 2 || v.index() == 3 || v.index() == 1) {
          s = BadVerb(verb, v);
        } else {
          s = Sprint(v);
          if (prec >= 0 && static_cast<int>(s.size()) > prec) s.resize(prec);
          s = Pad(s, width, minus, false);
        }
        break;
      case 'q':
        s = v.index() == 4 ? Pad(GoQuote(std::get<std::string>(v)), width, minus, false)
                           : BadVerb(verb, v);
        break;
      case 't':
        s = v.index() == 1 ? Pad(Sprint(v), width, minus, false) : BadVerb(verb, v);
        break;
      case 'd':
      case 'x':
      case 'X':
      case 'o':
      case 'b':
        if (v.index() == 2 && verb != 'b') {
          std::snprintf(buf, sizeof(buf), (spec + "ll" + verb).c_str(),
                        static_cast<long long>(std::get<int64_t>(v)));
          s = buf;
        } else if (v.index() == 4 && (verb == 'x' || verb == 'X')) {
          for (unsigned char c : std::get<std::string>(v)) {
            std::snprintf(buf, sizeof(buf), verb == 'x' ? "%02x" : "%02X", c);
            s += buf;
          }
          s = Pad(s, width, minus, false);
        } else {
          s = BadVerb(verb, v);
        }
        break;
      case 'f':
      case 'F':
      case 'e':
      case 'E':
      case 'g':
      case 'G':
        if (v.index() == 3) {
          double d = std::get<double>(v);
          if (std::isnan(d) || std::isinf(d)) {
            s = std::isnan(d) ? (plus ? "+NaN" : "NaN") : (d > 0 ? "+Inf" : "-Inf");
            if (std::isinf(d) && d > 0 && !plus) s = "+Inf";
            s = Pad(s, width, minus, false);
          } else {
            std::snprintf(buf, sizeof(buf), (spec + (verb == 'F' ? 'f' : verb)).c_str(), d);
            s = buf;
            if ((verb == 'g' || verb == 'G') && prec < 0) {
              // Go's %g without precision is the shortest representation.
              s = Pad(FormatGoFloat(d), width, minus, zero);
              if (plus && d >= 0) s = "+" + s;
            }
          }
        } else {
          s = BadVerb(verb, v);
        }
        break;
      default:
        s = std::string("%!") + verb + "(" + TypeName(v) + "=" + Sprint(v) + ")";
    }
    out += s;
  }
  if (argi < args.size()) {
    out += "%!(EXTRA ";
    for (size_t k = argi; k < args.size(); ++k) {
      if (k > argi) out += ", ";
      out += std::string(TypeName(args[k])) + "=" + Sprint(args[k]);
    }
    out += ")";
  }
  return out;
}

// fmt.Sprint: spaces between operands when neither side is a string.
std::string GoSprint(const std::vector<Value>& args, bool ln) {
  std::string out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i > 0 && (ln || (args[i].index() != 4 && args[i - 1].index() != 4))) out += ' ';
    out += Sprint(args[i]);
  }
  if (ln) out += '\n';
  return out;
}

std::string QueryEscape(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else if (c == ' ') {
      out += '+';
    } else {
      char b[4];
      std::snprintf(b, sizeof(b), "%%%02X", c);
      out += b;
    }
  }
  return out;
}

// Go's regexp.ReplaceAllString with $1 / ${1} / ${name} expansion.
std::string ReplaceAll(const RE2& re, const std::string& text, const std::string& repl) {
  int ngroups = re.NumberOfCapturingGroups();
  std::vector<re2::StringPiece> m(ngroups + 1);
  const auto& named = re.NamedCapturingGroups();
  std::string out;
  size_t pos = 0;
  size_t last_match_end = std::string::npos;
  re2::StringPiece input(text);
  while (pos <= text.size()) {
    if (!re.Match(input, pos, text.size(), RE2::UNANCHORED, m.data(), ngroups + 1)) break;
    size_t ms = m[0].data() - text.data();
    size_t me = ms + m[0].size();
    if (m[0].empty() && ms == last_match_end) {
      // Go skips an empty match right after the previous match.
      if (ms >= text.size()) break;
      out.append(text, pos, ms + 1 - pos);
      pos = ms + 1;
      continue;
    }
    out.append(text, pos, ms - pos);
    for (size_t i = 0; i < repl.size(); ++i) {
      if (repl[i] != '$' || i + 1 >= repl.size()) {
        out += repl[i];
        continue;
      }
      if (repl[i + 1] == '$') {
        out += '$';
        ++i;
        continue;
      }
      std::string name;
      size_t j = i + 1;
      if (repl[j] == '{') {
        size_t close = repl.find('}', j);
        if (close == std::string::npos) {
          out += '$';
          continue;
        }
        name = repl.substr(j + 1, close - j - 1);
        j = close + 1;
      } else {
        while (j < repl.size() &&
               (std::isalnum(static_cast<unsigned char>(repl[j])) || repl[j] == '_')) {
          ++j;
        }
        name = repl.substr(i + 1, j - i - 1);
      }
      if (name.empty()) {
        out += '$';
        continue;
      }
      int idx = -1;
      if (std::all_of(name.begin(), name.end(), [](char c) { return std::isdigit(c); })) {
        idx = std::stoi(name);
      } else if (auto it = named.find(name); it != named.end()) {
        idx = it->second;
      }
      if (idx >= 0 && idx <= ngroups && m[idx].data() != nullptr) {
        out.append(m[idx].data(), m[idx].size());
      }
      i = j - 1;
    }
    last_match_end = me;
    if (m[0].empty()) {
      if (ms >= text.size()) {
        pos = text.size() + 1;
        break;
      }
      out += text[ms];
      pos = ms + 1;
    } else {
      pos = me;
    }
  }
  if (pos < text.size()) out.append(text, pos, std::string::npos);
  return out;
}

int Kind(const Value& v) { return static_cast<int>(v.index()); }

Result<int> Compare(const Value& a, const Value& b) {
  if (Kind(a) != Kind(b)) return Status::Error("incompatible types for comparison");
  switch (Kind(a)) {
    case 2: {
      auto x = std::get<int64_t>(a), y = std::get<int64_t>(b);
      return x < y ? -1 : x > y ? 1 : 0;
    }
    case 3: {
      auto x = std::get<double>(a), y = std::get<double>(b);
      if (std::isnan(x) || std::isnan(y)) return 2;  // unordered
      return x < y ? -1 : x > y ? 1 : 0;
    }
    case 4: {
      int c = std::get<std::string>(a).compare(std::get<std::string>(b));
      return c < 0 ? -1 : c > 0 ? 1 : 0;
    }
    default:
      return Status::Error("invalid type for comparison");
  }
}

std::string GoTitle(const std::string& s) {
  std::string out = s;
  bool prev_sep = true;
  for (auto& c : out) {
    unsigned char u = static_cast<unsigned char>(c);
    if (prev_sep && std::islower(u)) c = static_cast<char>(std::toupper(u));
    prev_sep = !(std::isalnum(u) || c == '_' || u >= 0x80);
  }
  return out;
}

class Executor {
 public:
  explicit Executor(const TemplateData& data) {
    vars_ = {{"$", DataRef{&data}},
             {"$labels", data.labels},
             {"$externalLabels", data.external_labels},
             {"$externalURL", data.external_url},
             {"$value", data.value}};
  }

  Status Walk(const Node& n, const Value& dot, std::string* out) {
    switch (n.kind) {
      case Node::kList: {
        size_t scope = vars_.size();
        for (const auto& c : n.list) GPUMON_RETURN_IF_ERROR(Walk(*c, dot, out));
        vars_.resize(scope);
        return Status::Ok();
      }
      case Node::kText:
        *out += n.text;
        return Status::Ok();
      case Node::kAction: {
        GPUMON_ASSIGN_OR_RETURN(Value v, EvalPipe(n.pipe, dot));
        if (n.pipe.decl.empty()) *out += Sprint(v);
        return Status::Ok();
      }
      case Node::kIf:
      case Node::kWith: {
        size_t scope = vars_.size();
        GPUMON_ASSIGN_OR_RETURN(Value v, EvalPipe(n.pipe, dot));
        Status st;
        if (Truth(v)) {
          st = Walk(*n.list[0], n.kind == Node::kWith ? v : dot, out);
        } else if (n.else_list) {
          st = Walk(*n.else_list, dot, out);
        }
        vars_.resize(scope);
        return st;
      }
      case Node::kRange: {
        size_t scope = vars_.size();
        // The declaration binds per element, not the whole map.
        Pipe p = n.pipe;
        std::vector<std::string> decl = p.decl;
        p.decl.clear();
        GPUMON_ASSIGN_OR_RETURN(Value v, EvalPipe(p, dot));
        vars_.resize(scope);
        if (Kind(v) != 5 && Kind(v) != 0) {
          return ExecErr(n.pipe.line, std::string("range can't iterate over ") + Sprint(v));
        }
        bool any = false;
        if (Kind(v) == 5) {
          for (const auto& l : std::get<Labels>(v)) {
            any = true;
            size_t s2 = vars_.size();
            if (decl.size() == 1) vars_.push_back({decl[0], l.value});
            if (decl.size() == 2) {
              vars_.push_back({decl[0], l.name});
              vars_.push_back({decl[1], l.value});
            }
            GPUMON_RETURN_IF_ERROR(Walk(*n.list[0], l.value, out));
            vars_.resize(s2);
          }
        }
        if (!any && n.else_list) GPUMON_RETURN_IF_ERROR(Walk(*n.else_list, dot, out));
        vars_.resize(scope);
        return Status::Ok();
      }
    }
    return Status::Ok();
  }

 private:
  Value* Lookup(const std::string& name) {
    for (auto it = vars_.rbegin(); it != vars_.rend(); ++it) {
      if (it->first == name) return &it->second;
    }
    return nullptr;
  }

  Result<Value> Field(int line, const Value& v, const std::string& f) {
    if (Kind(v) == 5) {
      return Value(std::string(std::get<Labels>(v).Get(f)));
    }
    if (Kind(v) == 6) {
      const TemplateData& d = *std::get<DataRef>(v).data;
      if (f == "Labels") return Value(d.labels);
      if (f == "ExternalLabels") return Value(d.external_labels);
      if (f == "ExternalURL") return Value(d.external_url);
      if (f == "Value") return Value(d.value);
      return ExecErr(line, "can't evaluate field " + f + " in type template.AlertData");
    }
    if (Kind(v) == 0) return ExecErr(line, "nil pointer evaluating interface {}." + f);
    return ExecErr(line, "can't evaluate field " + f + " in type " + TypeName(v));
  }

  Result<Value> EvalArg(int line, const Arg& a, const Value& dot) {
    Value v;
    switch (a.kind) {
      case Arg::kField:
      case Arg::kDot:
        v = dot;
        break;
      case Arg::kVar: {
        Value* p = Lookup(a.name);
        if (p == nullptr) return ExecErr(line, "undefined variable: " + a.name);
        v = *p;
        break;
      }
      case Arg::kString:
        v = a.str;
        break;
      case Arg::kInt:
        v = a.i;
        break;
      case Arg::kFloat:
        v = a.f;
        break;
      case Arg::kBool:
        v = a.b;
        break;
      case Arg::kNil:
        v = std::monostate{};
        break;
      case Arg::kPipe: {
        GPUMON_ASSIGN_OR_RETURN(v, EvalPipe(*a.pipe, dot));
        break;
      }
      case Arg::kFunc: {
        std::vector<Value> none;
        GPUMON_ASSIGN_OR_RETURN(v, Call(line, a.name, none));
        break;
      }
    }
    for (const auto& f : a.fields) {
      GPUMON_ASSIGN_OR_RETURN(v, Field(line, v, f));
    }
    return v;
  }

  Result<Value> EvalPipe(const Pipe& p, const Value& dot) {
    Value last;
    bool have_last = false;
    for (const auto& cmd : p.cmds) {
      const Arg& a0 = cmd.args[0];
      if (a0.kind == Arg::kFunc) {
        std::vector<Value> args;
        for (size_t i = 1; i < cmd.args.size(); ++i) {
          GPUMON_ASSIGN_OR_RETURN(Value v, EvalArg(p.line, cmd.args[i], dot));
          args.push_back(std::move(v));
        }
        if (have_last) args.push_back(last);
        GPUMON_ASSIGN_OR_RETURN(last, Call(p.line, a0.name, args));
      } else {
        if (cmd.args.size() > 1 || have_last) {
          return ExecErr(p.line, "can't give argument to non-function");
        }
        GPUMON_ASSIGN_OR_RETURN(last, EvalArg(p.line, a0, dot));
      }
      have_last = true;
    }
    for (const auto& name : p.decl) {
      if (p.assign) {
        Value* slot = Lookup(name);
        if (slot) *slot = last;
      } else {
        vars_.push_back({name, last});
      }
    }
    return last;
  }

  Result<Value> Call(int line, const std::string& fn, const std::vector<Value>& args) {
    auto want = [&](size_t n) -> Status {
      if (args.size() != n) {
        return ExecErr(line, "wrong number of args for " + fn + ": want " + std::to_string(n) +
                                 " got " + std::to_string(args.size()));
      }
      return Status::Ok();
    };
    auto fail = [&](const Status& s) {
      return ExecErr(line, "error calling " + fn + ": " + s.message());
    };
    auto str_arg = [&](size_t i) -> Result<std::string> {
      if (Kind(args[i]) != 4) {
        return ExecErr(
            line, "wrong type for value; expected string; got " + std::string(TypeName(args[i])));
      }
      return std::get<std::string>(args[i]);
    };
    if (fn.rfind("humanize", 0) == 0) {
      GPUMON_RETURN_IF_ERROR(want(1));
      auto f = ToFloat(args[0]);
      if (!f.ok()) return fail(f.status());
      double v = *f;
      if (fn == "humanize") return Value(Humanize(v));
      if (fn == "humanize1024") return Value(Humanize1024(v));
      if (fn == "humanizeDuration") return Value(HumanizeDuration(v));
      if (fn == "humanizePercentage") return Value(HumanizePercentage(v));
      return Value(HumanizeTimestamp(v));
    }
    if (fn == "printf") {
      if (args.empty()) return ExecErr(line, "wrong number of args for printf");
      GPUMON_ASSIGN_OR_RETURN(std::string f, str_arg(0));
      return Value(GoSprintf(f, std::vector<Value>(args.begin() + 1, args.end())));
    }
    if (fn == "print" || fn == "println") return Value(GoSprint(args, fn == "println"));
    if (fn == "toUpper" || fn == "toLower" || fn == "title" || fn == "safeHtml" ||
        fn == "stripPort") {
      GPUMON_RETURN_IF_ERROR(want(1));
      GPUMON_ASSIGN_OR_RETURN(std::string s, str_arg(0));
      if (fn == "toUpper") {
        for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      } else if (fn == "toLower") {
        for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      } else if (fn == "title") {
        s = GoTitle(s);
      } else if (fn == "stripPort") {
        // net.SplitHostPort: host:port or [v6]:port; anything else unchanged.
        if (!s.empty() && s[0] == '[') {
          size_t close = s.find("]:");
          if (close != std::string::npos) s = s.substr(1, close - 1);
        } else if (size_t c = s.find(':');
                   c != std::string::npos && s.find(':', c + 1) == std::string::npos) {
          s = s.substr(0, c);
        }
      }
      return Value(s);
    }
    if (fn == "reReplaceAll" || fn == "match") {
      GPUMON_RETURN_IF_ERROR(want(fn == "match" ? 2 : 3));
      GPUMON_ASSIGN_OR_RETURN(std::string pattern, str_arg(0));
      RE2 re(pattern, RE2::Quiet);
      if (!re.ok()) return fail(Status::Error("error parsing regexp: " + re.error()));
      if (fn == "match") {
        GPUMON_ASSIGN_OR_RETURN(std::string text, str_arg(1));
        return Value(RE2::PartialMatch(text, re));
      }
      GPUMON_ASSIGN_OR_RETURN(std::string repl, str_arg(1));
      GPUMON_ASSIGN_OR_RETURN(std::string text, str_arg(2));
      return Value(ReplaceAll(re, text, repl));
    }
    if (fn == "urlquery") return Value(QueryEscape(GoSprint(args, false)));
    if (fn == "not") {
      GPUMON_RETURN_IF_ERROR(want(1));
      return Value(!Truth(args[0]));
    }
    if (fn == "and" || fn == "or") {
      if (args.empty()) return ExecErr(line, "wrong number of args for " + fn);
      for (size_t i = 0; i + 1 < args.size(); ++i) {
        if (Truth(args[i]) != (fn == "and")) return args[i];
      }
      return args.back();
    }
    if (fn == "len") {
      GPUMON_RETURN_IF_ERROR(want(1));
      if (Kind(args[0]) == 4) return Value(int64_t(std::get<std::string>(args[0]).size()));
      if (Kind(args[0]) == 5) return Value(int64_t(std::get<Labels>(args[0]).size()));
      return fail(Status::Error(std::string("len of type ") + TypeName(args[0])));
    }
    if (fn == "index") {
      if (args.size() == 1) return args[0];
      if (args.size() != 2 || Kind(args[0]) != 5 || Kind(args[1]) != 4) {
        return fail(Status::Error("index of this type is not supported"));
      }
      return Value(std::string(std::get<Labels>(args[0]).Get(std::get<std::string>(args[1]))));
    }
    // Comparisons.
    if (fn == "eq") {
      if (args.size() < 2) return ExecErr(line, "missing argument for comparison");
      for (size_t i = 1; i < args.size(); ++i) {
        if (Kind(args[0]) == 1 && Kind(args[i]) == 1) {
          if (std::get<bool>(args[0]) == std::get<bool>(args[i])) return Value(true);
          continue;
        }
        auto c = Compare(args[0], args[i]);
        if (!c.ok()) return fail(c.status());
        if (*c == 0) return Value(true);
      }
      return Value(false);
    }
    GPUMON_RETURN_IF_ERROR(want(2));
    if (fn == "ne" && Kind(args[0]) == 1 && Kind(args[1]) == 1) {
      return Value(std::get<bool>(args[0]) != std::get<bool>(args[1]));
    }
    auto c = Compare(args[0], args[1]);
    if (!c.ok()) return fail(c.status());
    int r = *c;
    if (fn == "ne") return Value(r != 0);
    if (r == 2) return Value(false);
    if (fn == "lt") return Value(r < 0);
    if (fn == "le") return Value(r <= 0);
    if (fn == "gt") return Value(r > 0);
    return Value(r >= 0);  // ge
  }

  std::vector<std::pair<std::string, Value>> vars_;
};

}  // namespace

Result<Template> Template::Parse(std::string_view text) {
  GPUMON_ASSIGN_OR_RETURN(std::vector<Token> toks, Lexer(text).Run());
  GPUMON_ASSIGN_OR_RETURN(NodePtr root, Parser(std::move(toks)).Run());
  Template t;
  t.root_ = root;
  return t;
}

Result<std::string> Template::Execute(const TemplateData& data) const {
  std::string out;
  if (!root_) return out;
  Executor ex(data);
  GPUMON_RETURN_IF_ERROR(ex.Walk(*root_, DataRef{&data}, &out));
  return out;
}

}  // namespace gpumon::rules
