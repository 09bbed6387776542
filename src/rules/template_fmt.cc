#include "rules/template_fmt.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "promql/parser/quote.h"

namespace gpumon::rules {

namespace {

std::string GoPercentG4(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.4g", v);
  return buf;
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
  auto ms = template_internal::FloatToTimeMs(v);
  if (!ms.ok()) return GoPercentG4(v);
  return template_internal::TimeString(*ms);
}

namespace template_internal {

namespace {

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

}  // namespace

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

}  // namespace template_internal

}  // namespace gpumon::rules
