// Grafana variables in PromQL <-> parseable placeholders
// (dashboards_placeholders.h).

#include "cli/dashboards_placeholders.h"

#include <cctype>
#include <cstdint>

#include "promql/parser.h"
#include "promql/printer.h"

namespace gpumon::cli {
namespace {

bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Placeholders are far from values a dashboard uses: hundreds of days plus
// an odd number of seconds, and numbers around 4e8 (odd).
constexpr int64_t kDurationBaseMs = int64_t{400} * 86400 * 1000;
constexpr int64_t kNumberBase = 400000000;

// The end of the string literal opening at text[pos] (one past its closing
// quote), or text.size() when it is unterminated (the parser reports it).
size_t StringEnd(std::string_view text, size_t pos) {
  char quote = text[pos];
  for (size_t i = pos + 1; i < text.size(); ++i) {
    if (quote != '`' && text[i] == '\\') {
      ++i;
    } else if (text[i] == quote) {
      return i + 1;
    }
  }
  return text.size();
}

// Whether a duration is expected at `pos`: after '[', a subquery's ':' or
// the keyword offset (spaces skipped).
bool DurationExpected(std::string_view text, size_t pos) {
  size_t i = pos;
  while (i > 0 && std::isspace(static_cast<unsigned char>(text[i - 1]))) --i;
  if (i == 0) return false;
  char c = text[i - 1];
  if (c == '[' || c == ':') return true;
  constexpr std::string_view kOffset = "offset";
  if (i >= kOffset.size() && text.substr(i - kOffset.size(), kOffset.size()) == kOffset) {
    return i == kOffset.size() || !IsNameChar(text[i - kOffset.size() - 1]);
  }
  return false;
}

// Replaces every occurrence of `from` in `s` that is not part of a longer
// name or number; returns how many were replaced.
size_t ReplaceWhole(std::string& s, const std::string& from, const std::string& to) {
  size_t count = 0;
  size_t pos = 0;
  while ((pos = s.find(from, pos)) != std::string::npos) {
    size_t end = pos + from.size();
    bool left_ok = pos == 0 || !(IsNameChar(s[pos - 1]) || s[pos - 1] == '.');
    bool right_ok = end == s.size() || !(IsNameChar(s[end]) || s[end] == '.');
    if (left_ok && right_ok) {
      s.replace(pos, from.size(), to);
      pos += to.size();
      ++count;
    } else {
      pos = end;
    }
  }
  return count;
}

}  // namespace

size_t GrafanaVariableLength(std::string_view text, size_t pos) {
  if (pos >= text.size()) return 0;
  if (text[pos] == '$') {
    if (pos + 1 < text.size() && text[pos + 1] == '{') {
      size_t close = text.find('}', pos + 2);
      if (close == std::string_view::npos || close == pos + 2) return 0;
      for (size_t i = pos + 2; i < close && text[i] != ':'; ++i) {
        if (!IsNameChar(text[i])) return 0;
      }
      return close + 1 - pos;
    }
    size_t i = pos + 1;
    while (i < text.size() && IsNameChar(text[i])) ++i;
    return i > pos + 1 ? i - pos : 0;
  }
  if (text.substr(pos, 2) == "[[") {
    size_t close = text.find("]]", pos + 2);
    if (close == std::string_view::npos || close == pos + 2) return 0;
    for (size_t i = pos + 2; i < close && text[i] != ':'; ++i) {
      if (!IsNameChar(text[i])) return 0;
    }
    return close + 2 - pos;
  }
  return 0;
}

std::string GrafanaVariableName(std::string_view reference) {
  std::string_view inner = reference;
  if (inner.substr(0, 2) == "${") {
    inner = inner.substr(2, inner.size() - 3);
  } else if (inner.substr(0, 2) == "[[") {
    inner = inner.substr(2, inner.size() - 4);
  } else if (!inner.empty() && inner[0] == '$') {
    inner = inner.substr(1);
  }
  return std::string(inner.substr(0, inner.find(':')));
}

std::string GrafanaPlaceholders::PlaceholderFor(const std::string& variable, bool duration) {
  for (const auto& p : placeholders_) {
    if (p.variable == variable && p.duration == duration) return p.printed;
  }
  int64_t k = static_cast<int64_t>(placeholders_.size());
  std::string printed;
  if (duration) {
    printed = promql::FormatDuration(kDurationBaseMs + (2 * k + 1) * 1000);
  } else {
    printed = std::to_string(kNumberBase + 2 * k + 1);
    auto parsed = promql::Parse(printed);
    if (parsed.ok()) printed = promql::Print(*parsed.expr);
  }
  placeholders_.push_back({variable, printed, duration});
  return printed;
}

Result<std::string> GrafanaPlaceholders::Substitute(std::string_view query) {
  std::string out;
  size_t i = 0;
  while (i < query.size()) {
    char c = query[i];
    if (c == '"' || c == '\'' || c == '`') {
      size_t end = StringEnd(query, i);
      out.append(query.substr(i, end - i));
      i = end;
      continue;
    }
    if (c == '#') {  // a comment runs to the end of the line
      size_t end = query.find('\n', i);
      if (end == std::string_view::npos) end = query.size();
      out.append(query.substr(i, end - i));
      i = end;
      continue;
    }
    size_t len = GrafanaVariableLength(query, i);
    if (len > 0) {
      std::string variable(query.substr(i, len));
      out += PlaceholderFor(variable, DurationExpected(query, i));
      i += len;
      continue;
    }
    out += c;
    ++i;
  }
  return out;
}

Result<std::string> GrafanaPlaceholders::Restore(std::string_view printed) const {
  std::string out(printed);
  for (const auto& p : placeholders_) {
    if (ReplaceWhole(out, p.printed, p.variable) == 0) {
      return Status::Error("the rewrite lost the Grafana variable " + p.variable);
    }
  }
  return out;
}

}  // namespace gpumon::cli
