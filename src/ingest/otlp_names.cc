#include "ingest/otlp_names.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace gpumon::ingest {
namespace {

bool IsMetricNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == ':';
}

bool IsLabelNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Splits at every character that may not appear in a metric name; empty
// tokens disappear (so runs of separators collapse).
std::vector<std::string> Tokens(std::string_view s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (IsMetricNameChar(c)) {
      cur.push_back(c);
    } else if (!cur.empty()) {
      out.push_back(std::move(cur));
      cur.clear();
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

std::string_view MainUnitWord(std::string_view u) {
  static constexpr std::pair<std::string_view, std::string_view> kUnits[] = {
      // time
      {"d", "days"},
      {"h", "hours"},
      {"min", "minutes"},
      {"s", "seconds"},
      {"ms", "milliseconds"},
      {"us", "microseconds"},
      {"ns", "nanoseconds"},
      // bytes
      {"By", "bytes"},
      {"KiBy", "kibibytes"},
      {"MiBy", "mebibytes"},
      {"GiBy", "gibibytes"},
      {"TiBy", "tebibytes"},
      {"KBy", "kilobytes"},
      {"MBy", "megabytes"},
      {"GBy", "gigabytes"},
      {"TBy", "terabytes"},
      // SI
      {"m", "meters"},
      {"V", "volts"},
      {"A", "amperes"},
      {"J", "joules"},
      {"W", "watts"},
      {"g", "grams"},
      // misc
      {"Cel", "celsius"},
      {"Hz", "hertz"},
      {"1", ""},
      {"%", "percent"},
  };
  for (const auto& [from, to] : kUnits) {
    if (u == from) return to;
  }
  return u;
}

std::string_view PerUnitWord(std::string_view u) {
  static constexpr std::pair<std::string_view, std::string_view> kUnits[] = {
      {"s", "second"}, {"m", "minute"}, {"h", "hour"}, {"d", "day"},
      {"w", "week"},   {"mo", "month"}, {"y", "year"},
  };
  for (const auto& [from, to] : kUnits) {
    if (u == from) return to;
  }
  return u;
}

// Unit text as name tokens: invalid characters become separators.
std::string CleanUnit(std::string_view u) {
  std::vector<std::string> t = Tokens(u);
  std::string out;
  for (const std::string& s : t) {
    if (!out.empty()) out.push_back('_');
    out += s;
  }
  return out;
}

struct UnitParts {
  std::string main;  // e.g. "bytes"; "" when none
  std::string per;   // e.g. "second" (without "per_"); "" when none
};

UnitParts SplitUnit(std::string_view unit) {
  UnitParts parts;
  size_t slash = unit.find('/');
  std::string_view main = Trim(unit.substr(0, slash));
  if (!main.empty() && main.find_first_of("{}") == std::string_view::npos) {
    parts.main = CleanUnit(MainUnitWord(main));
  }
  if (slash != std::string_view::npos) {
    std::string_view per = Trim(unit.substr(slash + 1));
    if (!per.empty() && per.find_first_of("{}") == std::string_view::npos) {
      parts.per = CleanUnit(PerUnitWord(per));
    }
  }
  return parts;
}

bool Contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

void MoveToEnd(std::vector<std::string>& tokens, std::string_view word) {
  tokens.erase(std::remove(tokens.begin(), tokens.end(), word), tokens.end());
  tokens.emplace_back(word);
}

}  // namespace

std::string OtlpMetricName(std::string_view name, std::string_view unit, OtlpNameKind kind) {
  std::vector<std::string> tokens = Tokens(name);
  if (tokens.empty()) return "";
  UnitParts parts = SplitUnit(unit);
  if (!parts.main.empty() && !Contains(tokens, parts.main)) tokens.push_back(parts.main);
  if (!parts.per.empty() && !Contains(tokens, parts.per)) {
    tokens.emplace_back("per");
    tokens.push_back(parts.per);
  }
  if (kind == OtlpNameKind::kCounter) MoveToEnd(tokens, "total");
  if (kind == OtlpNameKind::kGauge && Trim(unit) == "1") MoveToEnd(tokens, "ratio");
  std::string out;
  for (const std::string& t : tokens) {
    if (!out.empty()) out.push_back('_');
    out += t;
  }
  if (out[0] >= '0' && out[0] <= '9') out.insert(out.begin(), '_');
  return out;
}

std::string OtlpUnitSuffix(std::string_view unit) {
  UnitParts parts = SplitUnit(unit);
  if (parts.per.empty()) return parts.main;
  if (parts.main.empty()) return "per_" + parts.per;
  return parts.main + "_per_" + parts.per;
}

std::string OtlpLabelName(std::string_view key) {
  std::string out(key);
  for (char& c : out) {
    if (!IsLabelNameChar(c)) c = '_';
  }
  if (out.empty()) return out;
  if (out[0] >= '0' && out[0] <= '9') return "key_" + out;
  if (out[0] == '_') return "key" + out;
  return out;
}

}  // namespace gpumon::ingest
