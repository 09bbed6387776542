#include "cli/yaml_doc.h"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <cstdio>

namespace gpumon::cli {
namespace {

constexpr size_t kFoldWidth = 100;

std::string Indent(int n) { return std::string(static_cast<size_t>(n), ' '); }

bool HasControl(std::string_view s, bool allow_newline) {
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '\n' && allow_newline) continue;
    if (u < 0x20 || u == 0x7f) return true;
  }
  return false;
}

// Words YAML 1.1/1.2 resolve to null, booleans or numbers.
bool LooksSpecial(std::string_view s) {
  std::string lower;
  for (char c : s) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static const char* kWords[] = {"~",   "null", "true", "false", "yes",  "no",    "on",
                                 "off", "y",    "n",    ".inf",  ".nan", "-.inf", "+.inf"};
  for (const char* w : kWords) {
    if (lower == w) return true;
  }
  char c = s[0];
  return std::isdigit(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
}

// Whether `s` can be written as a plain scalar and read back as this string.
bool PlainSafe(std::string_view s) {
  if (s.empty() || HasControl(s, false)) return false;
  if (s.front() == ' ' || s.back() == ' ' || s.back() == ':') return false;
  static constexpr std::string_view kIndicators = "-?:,[]{}#&*!|>'\"%@`";
  if (kIndicators.find(s.front()) != std::string_view::npos) return false;
  if (s.find(": ") != std::string_view::npos || s.find(" #") != std::string_view::npos) {
    return false;
  }
  return !LooksSpecial(s);
}

std::string DoubleQuoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (u < 0x20 || u == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", u);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string Key(std::string_view k) {
  bool simple = !k.empty();
  for (char c : k) {
    simple = simple && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ||
                        c == '.' || c == '/');
  }
  return simple && PlainSafe(k) ? std::string(k) : DoubleQuoted(k);
}

// Literal block: text with line breaks, no other control characters, and a
// first line that does not start with a space (no indentation indicator).
bool LiteralOk(std::string_view s) {
  if (HasControl(s, true) || s.empty() || s.front() == ' ' || s.front() == '\n') return false;
  // Lines of only spaces would be read as more-indented content or lost.
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find('\n', start);
    std::string_view line = s.substr(start, end == std::string_view::npos ? s.npos : end - start);
    if (!line.empty() && line.find_first_not_of(' ') == std::string_view::npos) return false;
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return true;
}

// Folding is for long prose and templates; code-like text (series, queries
// with quoted strings) stays on one line, where a break could fall inside
// a quoted value.
bool FoldOk(std::string_view s) {
  if (s.size() <= 100 || HasControl(s, false)) return false;
  if (s.find('"') != std::string_view::npos && s.find("{{") == std::string_view::npos) {
    return false;
  }
  if (s.front() == ' ' || s.back() == ' ' || s.find("  ") != std::string_view::npos) return false;
  return s.find(' ') != std::string_view::npos;
}

// The text after "key:" or "- " for a scalar at indentation `indent`.
std::string ScalarText(const YamlNode& n, int indent) {
  const std::string& s = n.text;
  if (n.plain && !s.empty() && !HasControl(s, false)) return " " + s;
  if (s.find('\n') != std::string::npos && LiteralOk(s)) {
    size_t trailing = 0;
    while (trailing < s.size() && s[s.size() - 1 - trailing] == '\n') ++trailing;
    std::string out = trailing == 0 ? " |-" : trailing == 1 ? " |" : " |+";
    std::string body = s.substr(0, s.size() - trailing);
    size_t start = 0;
    while (true) {
      size_t end = body.find('\n', start);
      std::string line = body.substr(start, end == std::string::npos ? end : end - start);
      out += "\n";
      if (!line.empty()) out += Indent(indent) + line;
      if (end == std::string::npos) break;
      start = end + 1;
    }
    for (size_t i = 1; i < trailing; ++i) out += "\n";
    return out;
  }
  bool fold = FoldOk(s);
  if (PlainSafe(s) && !fold) return " " + s;
  if (fold) {
    std::string out = " >-";
    size_t width = kFoldWidth > static_cast<size_t>(indent) + 40 ? kFoldWidth - indent : 40;
    size_t pos = 0;
    while (pos < s.size()) {
      size_t end = s.size();
      if (s.size() - pos > width) {
        // Break at the last space before the width (or the first after it).
        size_t sp = s.rfind(' ', pos + width);
        if (sp == std::string::npos || sp <= pos) sp = s.find(' ', pos + width);
        end = sp == std::string::npos ? s.size() : sp;
      }
      out += "\n" + Indent(indent) + s.substr(pos, end - pos);
      pos = end == s.size() ? end : end + 1;
    }
    return out;
  }
  return " " + DoubleQuoted(s);
}

void Write(const YamlNode& n, int indent, std::string* out);

bool OnlyComments(const YamlNode& seq) {
  for (const auto& item : seq.seq) {
    if (item.kind != YamlNode::Kind::kComment) return false;
  }
  return true;
}

// A mapping's entries; the first one continues the current line when
// `inline_first` (after "- ").
void WriteMap(const YamlNode& n, int indent, bool inline_first, std::string* out) {
  bool first = true;
  for (const auto& [k, v] : n.map) {
    if (!(first && inline_first)) *out += Indent(indent);
    first = false;
    *out += Key(k) + ":";
    switch (v.kind) {
      case YamlNode::Kind::kNull:
      case YamlNode::Kind::kComment:
        *out += "\n";
        break;
      case YamlNode::Kind::kScalar:
        *out += ScalarText(v, indent + 2) + "\n";
        break;
      case YamlNode::Kind::kMap:
        if (v.map.empty()) {
          *out += " {}\n";
        } else {
          *out += "\n";
          WriteMap(v, indent + 2, false, out);
        }
        break;
      case YamlNode::Kind::kSeq:
        if (OnlyComments(v)) {
          // A sequence left with comments alone is empty, not null.
          *out += " []\n";
          Write(v, indent + 2, out);
        } else {
          *out += "\n";
          Write(v, indent + 2, out);
        }
        break;
    }
  }
}

void Write(const YamlNode& n, int indent, std::string* out) {
  switch (n.kind) {
    case YamlNode::Kind::kNull:
      break;
    case YamlNode::Kind::kComment:
      *out += Indent(indent) + "# " + n.text + "\n";
      break;
    case YamlNode::Kind::kScalar:
      *out += Indent(indent) + ScalarText(n, indent).substr(1) + "\n";
      break;
    case YamlNode::Kind::kMap:
      WriteMap(n, indent, false, out);
      break;
    case YamlNode::Kind::kSeq:
      for (const auto& item : n.seq) {
        if (item.kind == YamlNode::Kind::kComment) {
          *out += Indent(indent) + "# " + item.text + "\n";
          continue;
        }
        *out += Indent(indent) + "-";
        if (item.IsMap() && !item.map.empty()) {
          *out += " ";
          WriteMap(item, indent + 2, true, out);
        } else if (item.IsScalar()) {
          *out += ScalarText(item, indent + 2) + "\n";
        } else if (item.IsMap()) {
          *out += " {}\n";
        } else if (item.IsSeq() && item.seq.empty()) {
          *out += " []\n";
        } else if (item.IsSeq()) {
          *out += "\n";
          Write(item, indent + 2, out);
        } else {
          *out += "\n";
        }
      }
      break;
  }
}

}  // namespace

YamlNode* YamlNode::Find(std::string_view key) {
  for (auto& [k, v] : map) {
    if (k == key) return &v;
  }
  return nullptr;
}

const YamlNode* YamlNode::Find(std::string_view key) const {
  for (const auto& [k, v] : map) {
    if (k == key) return &v;
  }
  return nullptr;
}

YamlNode FromYaml(const YAML::Node& node) {
  YamlNode out;
  if (!node.IsDefined() || node.IsNull()) return out;
  if (node.IsScalar()) {
    out.kind = YamlNode::Kind::kScalar;
    out.text = node.Scalar();
    out.plain = node.Tag() == "?";
    return out;
  }
  if (node.IsSequence()) {
    out.kind = YamlNode::Kind::kSeq;
    for (const auto& item : node) out.seq.push_back(FromYaml(item));
    return out;
  }
  out.kind = YamlNode::Kind::kMap;
  for (auto it = node.begin(); it != node.end(); ++it) {
    out.map.push_back({it->first.Scalar(), FromYaml(it->second)});
  }
  return out;
}

std::string WriteYaml(const YamlNode& root, const std::vector<std::string>& header) {
  std::string out;
  for (const auto& h : header) out += h.empty() ? "#\n" : "# " + h + "\n";
  Write(root, 0, &out);
  return out;
}

}  // namespace gpumon::cli
