#include "rules/template_parse.h"

#include <cctype>
#include <charconv>
#include <set>

#include "rules/status_macros.h"
#include "rules/template_query.h"
#include "rules/template_value.h"

namespace gpumon::rules::template_internal {

namespace {

using Node = Template::Node;
using NodePtr = std::shared_ptr<Node>;

// Go's builtins and Prometheus's functions that the executor (template.cc)
// implements itself; template_query.h has the rest.
const std::set<std::string, std::less<>>& CoreFunctions() {
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

// Functions a Go text/template in Prometheus 2.42 may call that this engine
// does not implement (html/js escaping, call, slice; tmpl exists in console
// templates only), and functions later Prometheus versions add: named in
// errors so a rule author knows why the template is refused.
const char* UnsupportedFunction(std::string_view name) {
  static const std::set<std::string, std::less<>> kGo = {"html", "js", "call", "slice", "tmpl"};
  static const std::set<std::string, std::less<>> kLater = {"toDuration", "now", "urlQueryEscape"};
  if (kGo.count(name)) return "";
  if (kLater.count(name)) return " (Prometheus 2.42 has no such function; later versions add it)";
  return nullptr;
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
          } else if (IsTemplateFunction(t.text)) {
            a.kind = Arg::kFunc;
            a.name = t.text;
          } else if (t.text == "if" || t.text == "else" || t.text == "end" || t.text == "with" ||
                     t.text == "range") {
            return Err("unexpected <" + t.text + "> in command");
          } else if (const char* why = UnsupportedFunction(t.text)) {
            return Err("function \"" + t.text + "\" is not supported in alert templates" + why);
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

}  // namespace

bool IsTemplateFunction(std::string_view name) {
  return CoreFunctions().count(name) > 0 || IsPrometheusFunction(name);
}

Result<std::shared_ptr<Template::Node>> ParseTemplate(std::string_view text) {
  GPUMON_ASSIGN_OR_RETURN(std::vector<Token> toks, Lexer(text).Run());
  return Parser(std::move(toks)).Run();
}

}  // namespace gpumon::rules::template_internal
