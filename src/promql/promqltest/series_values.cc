#include "promql/promqltest/series_values.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "tsdb/sample.h"

namespace gpumon::promql::promqltest {

namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlpha(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsAlnum(char c) { return IsAlpha(c) || IsDigit(c) || c == ':'; }
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Integer with Go's base-0 rules (0x, 0o, 0b, leading-0 octal, underscores).
std::optional<double> ParseGoInt(std::string_view s) {
  bool neg = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return std::nullopt;
  int base = 10;
  bool prefixed = false;
  if (s.size() > 1 && s[0] == '0') {
    char p = static_cast<char>(std::tolower(static_cast<unsigned char>(s[1])));
    if (p == 'x' || p == 'o' || p == 'b') {
      base = p == 'x' ? 16 : (p == 'o' ? 8 : 2);
      s.remove_prefix(2);
    } else {
      base = 8;
      s.remove_prefix(1);
    }
    prefixed = true;
  }
  std::string digits;
  for (char c : s) {
    if (c != '_') digits.push_back(c);  // Go allows digit separators with base 0
  }
  if (digits.empty()) return prefixed && base == 8 ? std::optional<double>(0) : std::nullopt;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v, base);
  if (ec != std::errc() || p != digits.data() + digits.size()) return std::nullopt;
  if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
  double d = static_cast<double>(static_cast<int64_t>(v));
  return neg ? -d : d;
}

// Decimal float or Inf/Infinity/NaN (any case), with optional sign.
std::optional<double> ParseGoFloat(std::string_view s) {
  bool neg = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return std::nullopt;
  std::string low = Lower(s);
  if (low == "inf" || low == "infinity") {
    return neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  }
  if (low == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (!IsDigit(s[0]) && s[0] != '.') return std::nullopt;
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, std::chars_format::general);
  if (p != s.data() + s.size()) return std::nullopt;
  if (ec == std::errc::result_out_of_range) {
    // Go returns ±Inf or 0 with an error for out-of-range input; treat the
    // literal as unparseable rather than guessing.
    return std::nullopt;
  }
  if (ec != std::errc()) return std::nullopt;
  return neg ? -v : v;
}

// Reads a number token starting at text[i] (digits, '.', exponent with
// sign, underscores) the way the series lexer does, or a keyword
// (inf/nan/stale). Advances i.
Result<double> ReadValue(std::string_view item, size_t& i) {
  auto bad = [&] {
    return Status::Error("invalid value \"" + std::string(item) + "\" in series values");
  };
  if (i >= item.size()) return bad();
  if (IsAlpha(item[i]) && item[i] != '_') {
    size_t start = i;
    while (i < item.size() && IsAlnum(item[i])) ++i;
    std::string word = Lower(item.substr(start, i - start));
    if (word == "inf") return std::numeric_limits<double>::infinity();
    if (word == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (word == "stale") return tsdb::StaleNaN();
    return bad();
  }
  size_t start = i;
  if (item[i] == '.') ++i;
  while (i < item.size()) {
    char c = item[i];
    if (IsDigit(c) || c == '.' || c == '_') {
      ++i;
    } else if (c == 'e' || c == 'E') {
      ++i;
      if (i < item.size() && (item[i] == '+' || item[i] == '-')) ++i;
    } else {
      break;
    }
  }
  if (i == start) return bad();
  std::string_view num = item.substr(start, i - start);
  // Anything alphanumeric right after a number other than the repeat
  // marker makes the item invalid, as in the lexer.
  if (i < item.size() && item[i] != 'x' && IsAlnum(item[i])) return bad();
  if (auto v = ParseGoInt(num)) return *v;
  std::string plain;
  for (char c : num) {
    if (c != '_') plain.push_back(c);
  }
  if (auto v = ParseGoFloat(plain)) return *v;
  return bad();
}

// An optional sign followed by a value.
Result<double> ReadSignedValue(std::string_view item, size_t& i) {
  bool neg = false;
  if (i < item.size() && (item[i] == '+' || item[i] == '-')) {
    neg = item[i] == '-';
    ++i;
  }
  bool signed_value = i > 0 && (item[i - 1] == '+' || item[i - 1] == '-');
  Result<double> v = ReadValue(item, i);
  if (!v.ok()) return v;
  // `stale` is a keyword, not a number: the grammar allows no sign on it.
  if (signed_value && tsdb::IsStaleNaN(*v)) {
    return Status::Error("invalid value \"" + std::string(item) + "\" in series values");
  }
  return neg ? -*v : *v;
}

Result<uint64_t> ReadRepeat(std::string_view item, size_t& i) {
  size_t start = i;
  while (i < item.size() && IsDigit(item[i])) ++i;
  if (i == start || i != item.size()) {
    return Status::Error("invalid repetition in series values: \"" + std::string(item) + "\"");
  }
  uint64_t n = 0;
  auto [p, ec] = std::from_chars(item.data() + start, item.data() + i, n);
  if (ec != std::errc()) {
    return Status::Error("invalid repetition in series values: \"" + std::string(item) + "\"");
  }
  return n;
}

Status ExpandItem(std::string_view item, std::vector<SequenceValue>& out) {
  // Guards against `1x100000000000` exhausting memory.
  constexpr uint64_t kMaxRepeat = 10'000'000;
  size_t i = 0;
  if (item[0] == '_') {
    if (item.size() == 1) {
      out.push_back({true, 0});
      return Status::Ok();
    }
    if (item[1] != 'x') return Status::Error("invalid item \"" + std::string(item) + "\"");
    i = 2;
    Result<uint64_t> n = ReadRepeat(item, i);
    if (!n.ok()) return n.status();
    if (*n > kMaxRepeat)
      return Status::Error("repetition too large: \"" + std::string(item) + "\"");
    for (uint64_t k = 0; k < *n; ++k) out.push_back({true, 0});
    return Status::Ok();
  }
  Result<double> first = ReadSignedValue(item, i);
  if (!first.ok()) return first.status();
  if (i == item.size()) {
    out.push_back({false, *first});
    return Status::Ok();
  }
  double step = 0;
  if (item[i] == '+' || item[i] == '-') {
    Result<double> s = ReadSignedValue(item, i);
    if (!s.ok()) return s.status();
    step = *s;
    if (i == item.size() || item[i] != 'x') {
      return Status::Error("expected 'x<count>' in \"" + std::string(item) + "\"");
    }
  }
  if (item[i] != 'x') return Status::Error("invalid item \"" + std::string(item) + "\"");
  ++i;
  Result<uint64_t> n = ReadRepeat(item, i);
  if (!n.ok()) return n.status();
  if (*n > kMaxRepeat) return Status::Error("repetition too large: \"" + std::string(item) + "\"");
  double v = *first;
  for (uint64_t k = 0; k <= *n; ++k) {
    out.push_back({false, v});
    v += step;  // accumulated, as Prometheus does, not first + k*step
  }
  return Status::Ok();
}

}  // namespace

Result<SeriesValues> ExpandSeriesValues(std::string_view text) {
  SeriesValues result;
  if (text.find("{{") != std::string_view::npos) {
    result.histogram = true;
    return result;
  }
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && IsSpace(text[i])) ++i;
    size_t start = i;
    while (i < text.size() && !IsSpace(text[i])) ++i;
    if (i == start) break;
    Status st = ExpandItem(text.substr(start, i - start), result.values);
    if (!st.ok()) return st;
  }
  return result;
}

Result<SeriesLineParts> SplitSeriesLine(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && IsSpace(line[i])) ++i;
  size_t start = i;
  auto skip_braces = [&]() -> Status {
    // line[i] == '{': find the matching '}' outside quoted strings.
    char quote = 0;
    for (++i; i < line.size(); ++i) {
      char c = line[i];
      if (quote) {
        if (c == '\\') {
          ++i;
        } else if (c == quote) {
          quote = 0;
        }
      } else if (c == '"' || c == '\'' || c == '`') {
        quote = c;
      } else if (c == '}') {
        ++i;
        return Status::Ok();
      }
    }
    return Status::Error("unterminated label set in \"" + std::string(line) + "\"");
  };
  if (i < line.size() && line[i] == '{') {
    Status st = skip_braces();
    if (!st.ok()) return st;
  } else {
    if (i >= line.size() || !(IsAlpha(line[i]) || line[i] == ':')) {
      return Status::Error("invalid series description \"" + std::string(line) + "\"");
    }
    while (i < line.size() && IsAlnum(line[i])) ++i;
    size_t j = i;
    while (j < line.size() && IsSpace(line[j])) ++j;
    if (j < line.size() && line[j] == '{' && !(j + 1 < line.size() && line[j + 1] == '{')) {
      i = j;
      Status st = skip_braces();
      if (!st.ok()) return st;
    }
  }
  SeriesLineParts parts;
  parts.metric = line.substr(start, i - start);
  if (i < line.size() && !IsSpace(line[i])) {
    return Status::Error("invalid series description \"" + std::string(line) + "\"");
  }
  size_t v = i;
  while (v < line.size() && IsSpace(line[v])) ++v;
  parts.values = line.substr(v);
  return parts;
}

std::optional<double> ParseScriptNumber(std::string_view text) {
  if (auto v = ParseGoInt(text)) return v;
  return ParseGoFloat(text);
}

}  // namespace gpumon::promql::promqltest
