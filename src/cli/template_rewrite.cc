#include "cli/template_rewrite.h"

#include <cctype>
#include <cstdlib>
#include <vector>

#include "promql/parser/quote.h"

namespace gpumon::cli {
namespace {

struct Token {
  enum class Kind { kWord, kString, kRaw, kOther };
  Kind kind;
  std::string text;  // as written (strings with their quotes)
};

bool WordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.';
}

// Splits an action's body into words, string literals and everything else.
Result<std::vector<Token>> Tokenize(std::string_view body) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < body.size()) {
    char c = body[i];
    if (c == '"' || c == '`' || c == '\'') {
      size_t j = i + 1;
      while (j < body.size() && body[j] != c) {
        if (c != '`' && body[j] == '\\') ++j;
        ++j;
      }
      if (j >= body.size()) return Status::Error("unterminated string in template action");
      Token::Kind kind = c == '`' ? Token::Kind::kRaw : Token::Kind::kString;
      if (c == '\'') kind = Token::Kind::kOther;  // a character constant
      out.push_back({kind, std::string(body.substr(i, j + 1 - i))});
      i = j + 1;
    } else if (WordChar(c)) {
      size_t j = i;
      while (j < body.size() && WordChar(body[j])) ++j;
      out.push_back({Token::Kind::kWord, std::string(body.substr(i, j - i))});
      i = j;
    } else {
      out.push_back({Token::Kind::kOther, std::string(1, c)});
      ++i;
    }
  }
  return out;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The value of a Go string literal ("..." with escapes, or `raw`).
Result<std::string> Unquote(const Token& t) {
  std::string_view s(t.text);
  s = s.substr(1, s.size() - 2);
  if (t.kind == Token::Kind::kRaw) return std::string(s);
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') {
      out += s[i];
      continue;
    }
    if (++i >= s.size()) return Status::Error("bad escape in " + t.text);
    char e = s[i];
    static constexpr std::string_view kSimple = "abfnrtv\\\"'";
    static constexpr std::string_view kValues = "\a\b\f\n\r\t\v\\\"'";
    if (auto k = kSimple.find(e); k != std::string_view::npos) {
      out += kValues[k];
      continue;
    }
    int digits = e == 'x' ? 2 : e == 'u' ? 4 : e == 'U' ? 8 : 0;
    if (digits == 0 && e >= '0' && e <= '7' && i + 2 < s.size()) {
      out += static_cast<char>(((e - '0') << 6) | ((s[i + 1] - '0') << 3) | (s[i + 2] - '0'));
      i += 2;
      continue;
    }
    if (digits == 0 || i + digits >= s.size()) {
      return Status::Error("bad escape in " + t.text);
    }
    uint32_t v = 0;
    for (int d = 1; d <= digits; ++d) {
      int h = HexValue(s[i + d]);
      if (h < 0) return Status::Error("bad escape in " + t.text);
      v = v * 16 + static_cast<uint32_t>(h);
    }
    i += digits;
    if (e == 'x') {
      out += static_cast<char>(v);
    } else {
      promql::internal::AppendRune(out, v);
    }
  }
  return out;
}

// A Go literal of `value` in the style of `original`: raw, or
// strconv.Quote's (which text/template reads back to `value`).
Result<std::string> Quote(const Token& original, const std::string& value) {
  if (original.kind == Token::Kind::kRaw) {
    if (value.find('`') != std::string::npos) {
      return Status::Error("rewritten query contains a backquote: " + value);
    }
    return "`" + value + "`";
  }
  return promql::internal::GoQuote(value);
}

constexpr std::string_view kPlaceholder = "__gpumon_template_arg_";

// A printf format holding PromQL: verbs become placeholders for the parse.
Result<std::string> RewriteQueryText(const std::string& query, bool printf_format,
                                     const promql::RewriteMap& map) {
  std::string text;
  std::vector<std::string> verbs;
  if (printf_format) {
    for (size_t i = 0; i < query.size(); ++i) {
      if (query[i] != '%') {
        text += query[i];
        continue;
      }
      if (i + 1 < query.size() && query[i + 1] == '%') {
        text += '%';
        ++i;
        continue;
      }
      size_t j = i + 1;
      while (j < query.size() && !std::isalpha(static_cast<unsigned char>(query[j]))) ++j;
      if (j >= query.size()) return Status::Error("bad printf verb in \"" + query + "\"");
      verbs.push_back(query.substr(i, j + 1 - i));
      text += std::string(kPlaceholder) + std::to_string(verbs.size() - 1) + "__";
      i = j;
    }
  } else {
    text = query;
  }
  auto rewritten = promql::RewriteQuery(text, map);
  if (!rewritten.ok()) {
    return rewritten.status().WithContext("template query \"" + query + "\"");
  }
  if (!printf_format) return *rewritten;
  std::string out;
  const std::string& r = *rewritten;
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.compare(i, kPlaceholder.size(), kPlaceholder) == 0) {
      size_t j = i + kPlaceholder.size();
      size_t n = std::strtoul(r.c_str() + j, nullptr, 10);
      while (j < r.size() && std::isdigit(static_cast<unsigned char>(r[j]))) ++j;
      if (n < verbs.size() && r.compare(j, 2, "__") == 0) {
        out += verbs[n];
        i = j + 1;
        continue;
      }
    }
    out += r[i] == '%' ? "%%" : std::string(1, r[i]);
  }
  return out;
}

// Uses single quotes for the query's strings when that avoids escapes.
std::string PreferSingleQuotes(const std::string& q) {
  if (q.find('\'') != std::string::npos || q.find('\\') != std::string::npos) return q;
  std::string out = q;
  for (char& c : out) {
    if (c == '"') c = '\'';
  }
  return out;
}

Result<std::string> RewriteAction(std::string_view body, const promql::RewriteMap& map) {
  auto tokens = Tokenize(body);
  if (!tokens.ok()) return tokens.status();
  std::vector<Token>& t = *tokens;
  bool has_query = false;
  for (const auto& tok : t)
    has_query = has_query || (tok.kind == Token::Kind::kWord && tok.text == "query");
  auto label = [&](std::string_view name) -> Result<std::string> {
    if (map.unmapped_labels.count(name)) {
      return Status::Error("label \"" + std::string(name) +
                           "\" has no equivalent in the target naming");
    }
    return promql::RenameLabel(map, name);
  };
  // The words before token i, skipping blanks and parentheses.
  auto previous_words = [&](size_t i, int n) {
    std::vector<std::string> words;
    for (size_t k = i; k-- > 0 && static_cast<int>(words.size()) < n;) {
      if (t[k].kind == Token::Kind::kOther &&
          (t[k].text == " " || t[k].text == "\t" || t[k].text == "\n" || t[k].text == "(")) {
        continue;
      }
      if (t[k].kind != Token::Kind::kWord) break;
      words.push_back(t[k].text);
    }
    return words;
  };
  std::string out;
  for (size_t i = 0; i < t.size(); ++i) {
    Token& tok = t[i];
    if (tok.kind == Token::Kind::kWord) {
      for (std::string_view prefix : {"$labels.", ".Labels."}) {
        if (tok.text.compare(0, prefix.size(), prefix) != 0) continue;
        std::string rest = tok.text.substr(prefix.size());
        size_t dot = rest.find('.');
        auto l = label(rest.substr(0, dot));
        if (!l.ok()) return l.status();
        tok.text = std::string(prefix) + *l + (dot == std::string::npos ? "" : rest.substr(dot));
      }
      out += tok.text;
      continue;
    }
    if (tok.kind != Token::Kind::kString && tok.kind != Token::Kind::kRaw) {
      out += tok.text;
      continue;
    }
    auto words = previous_words(i, 2);
    bool is_label = (!words.empty() && words[0] == "label") ||
                    (words.size() == 2 && words[1] == "index" &&
                     (words[0] == "$labels" || words[0] == ".Labels"));
    bool is_query = !words.empty() && words[0] == "query";
    bool is_format = has_query && !words.empty() && words[0] == "printf";
    if (!is_label && !is_query && !is_format) {
      out += tok.text;
      continue;
    }
    auto value = Unquote(tok);
    if (!value.ok()) return value.status();
    std::string replaced;
    if (is_label) {
      auto l = label(*value);
      if (!l.ok()) return l.status();
      replaced = *l;
    } else {
      auto q = RewriteQueryText(*value, is_format, map);
      if (!q.ok()) return q.status();
      replaced = tok.kind == Token::Kind::kString ? PreferSingleQuotes(*q) : *q;
    }
    auto quoted = Quote(tok, replaced);
    if (!quoted.ok()) return quoted.status();
    out += *quoted;
  }
  return out;
}

// The end of the action starting at `open` ("{{"): the position of its "}}".
Result<size_t> ActionEnd(std::string_view text, size_t open) {
  size_t i = open + 2;
  while (i + 1 < text.size()) {
    char c = text[i];
    if (c == '"' || c == '`' || c == '\'') {
      size_t j = i + 1;
      while (j < text.size() && text[j] != c) {
        if (c != '`' && text[j] == '\\') ++j;
        ++j;
      }
      i = j + 1;
      continue;
    }
    if (c == '/' && text[i + 1] == '*') {
      size_t end = text.find("*/", i + 2);
      if (end == std::string_view::npos) break;
      i = end + 2;
      continue;
    }
    if (c == '}' && text[i + 1] == '}') return i;
    ++i;
  }
  return Status::Error("unclosed action in template");
}

bool NameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':';
}

}  // namespace

std::string RenameMetricsInText(std::string_view text, const promql::RewriteMap& map) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    if (!NameChar(text[i]) || (i > 0 && NameChar(text[i - 1]))) {
      out += text[i++];
      continue;
    }
    size_t j = i;
    while (j < text.size() && NameChar(text[j])) ++j;
    std::string_view word = text.substr(i, j - i);
    auto it = map.metrics.find(word);
    const promql::SelectorVariant* v = it != map.metrics.end() && it->second.variants.size() == 1
                                           ? &it->second.variants[0]
                                           : nullptr;
    if (v && v->scale == 1 && v->bit == 0 && v->fixed_labels.empty() && v->matchers.empty()) {
      out += v->name;
    } else {
      out += word;
    }
    i = j;
  }
  return out;
}

Result<std::string> RewriteTemplate(std::string_view text, const promql::RewriteMap& map) {
  std::string out;
  size_t pos = 0;
  while (true) {
    size_t open = text.find("{{", pos);
    if (open == std::string_view::npos) {
      out += RenameMetricsInText(text.substr(pos), map);
      return out;
    }
    out += RenameMetricsInText(text.substr(pos, open - pos), map);
    out += "{{";
    auto end = ActionEnd(text, open);
    if (!end.ok()) return end.status();
    std::string_view body = text.substr(open + 2, *end - open - 2);
    bool comment = body.find("/*") != std::string_view::npos &&
                   body.find_first_not_of(" -") == body.find("/*");
    if (comment) {
      out += body;
    } else {
      auto rewritten = RewriteAction(body, map);
      if (!rewritten.ok()) return rewritten.status();
      out += *rewritten;
    }
    out += "}}";
    pos = *end + 2;
  }
}

}  // namespace gpumon::cli
