#include "exposition/parser.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <system_error>
#include <unordered_map>
#include <utility>

namespace gpumon::exposition {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsLabelNameStart(char c) { return IsLetter(c) || c == '_'; }
bool IsLabelNameChar(char c) { return IsLabelNameStart(c) || IsDigit(c); }
bool IsMetricNameStart(char c) { return IsLabelNameStart(c) || c == ':'; }
bool IsMetricNameChar(char c) { return IsMetricNameStart(c) || IsDigit(c); }
bool IsBlank(char c) { return c == ' ' || c == '\t'; }

bool EqualsIgnoreCase(std::string_view a, std::string_view lower) {
  if (a.size() != lower.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char c = a[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != lower[i]) return false;
  }
  return true;
}

// Quotes a piece of input for an error message: printable ASCII verbatim,
// everything else as \xNN, long tokens shortened, so that hostile input
// cannot inject newlines or huge blobs into logs.
std::string Quote(std::string_view s) {
  constexpr size_t kMaxShown = 32;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (size_t i = 0; i < s.size() && i < kMaxShown; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  if (s.size() > kMaxShown) out += "...";
  out += '"';
  return out;
}

// Returns the offset of the first byte that is not part of valid UTF-8
// (overlong forms, surrogates and code points above U+10FFFF are invalid),
// or npos when the whole string is valid.
size_t FindInvalidUtf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    unsigned char lo = 0x80, hi = 0xbf;  // allowed range of the second byte
    if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      if (c == 0xe0) lo = 0xa0;  // overlong
      if (c == 0xed) hi = 0x9f;  // surrogates
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      if (c == 0xf0) lo = 0x90;  // overlong
      if (c == 0xf4) hi = 0x8f;  // above U+10FFFF
    } else {
      return i;
    }
    if (n - i < len) return i;
    if (p[i + 1] < lo || p[i + 1] > hi) return i;
    for (size_t k = 2; k < len; ++k) {
      if (p[i + k] < 0x80 || p[i + k] > 0xbf) return i;
    }
    i += len;
  }
  return std::string_view::npos;
}

// For a decimal literal that std::from_chars reported out of range, tells
// whether it is too small (underflow, which Go and hence Prometheus round to
// zero) rather than too large (overflow, an error).
bool IsUnderflow(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && s[i] == '0') ++i;
  int64_t magnitude = 0;  // decimal exponent of the leading digit, plus one
  size_t int_digits = 0;
  while (i < s.size() && IsDigit(s[i])) ++int_digits, ++i;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (int_digits == 0) {
      while (i < s.size() && s[i] == '0') --magnitude, ++i;
    }
    while (i < s.size() && IsDigit(s[i])) ++i;
  }
  magnitude += static_cast<int64_t>(std::min<size_t>(int_digits, 1'000'000));
  int64_t exponent = 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool negative = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
    for (; i < s.size() && IsDigit(s[i]); ++i) {
      if (exponent < 1'000'000'000) exponent = exponent * 10 + (s[i] - '0');
    }
    if (negative) exponent = -exponent;
  }
  return magnitude + exponent <= 0;
}

// Parses a float the way Prometheus does (Go's strconv.ParseFloat without
// hexadecimal or underscore forms): optional sign, decimal with optional
// exponent, "Inf"/"Infinity" with optional sign, or "NaN"; case-insensitive
// words. Overflow is an error; underflow yields zero.
bool ParseGoFloat(std::string_view s, double& out) {
  if (s.empty()) return false;
  bool negative = false;
  bool has_sign = false;
  if (s[0] == '+' || s[0] == '-') {
    negative = s[0] == '-';
    has_sign = true;
    s.remove_prefix(1);
  }
  if (s.empty()) return false;
  const char first = s[0];
  if (first == 'i' || first == 'I') {
    if (!EqualsIgnoreCase(s, "inf") && !EqualsIgnoreCase(s, "infinity")) return false;
    out = negative ? -std::numeric_limits<double>::infinity()
                   : std::numeric_limits<double>::infinity();
    return true;
  }
  if (first == 'n' || first == 'N') {
    if (has_sign || !EqualsIgnoreCase(s, "nan")) return false;
    out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (!IsDigit(first) && first != '.') return false;
  double value = 0;
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, value, std::chars_format::general);
  if (ptr != end || ec == std::errc::invalid_argument) return false;
  if (ec == std::errc::result_out_of_range) {
    if (!IsUnderflow(s)) return false;
    value = 0;
  }
  out = negative ? -value : value;
  return true;
}

constexpr std::string_view kOpenMetricsTypes =
    "counter, gauge, histogram, gaugehistogram, stateset, info, summary or unknown";
constexpr std::string_view kTextTypes = "counter, gauge, histogram, summary or untyped";

std::optional<MetricType> ParseTypeName(std::string_view s, Format format) {
  if (s == "counter") return MetricType::kCounter;
  if (s == "gauge") return MetricType::kGauge;
  if (s == "histogram") return MetricType::kHistogram;
  if (s == "summary") return MetricType::kSummary;
  if (format == Format::kText004) {
    if (s == "untyped") return MetricType::kUnknown;
    return std::nullopt;
  }
  if (s == "gaugehistogram") return MetricType::kGaugeHistogram;
  if (s == "stateset") return MetricType::kStateSet;
  if (s == "info") return MetricType::kInfo;
  if (s == "unknown") return MetricType::kUnknown;
  return std::nullopt;
}

const char* TypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
    case MetricType::kGaugeHistogram:
      return "gaugehistogram";
    case MetricType::kSummary:
      return "summary";
    case MetricType::kInfo:
      return "info";
    case MetricType::kStateSet:
      return "stateset";
    case MetricType::kUnknown:
      break;
  }
  return "unknown";
}

// Suffixes OpenMetrics reserves for the samples of a family.
constexpr std::string_view kReservedSuffixes[] = {"_total", "_created", "_bucket", "_count",
                                                  "_sum",   "_gcount",  "_gsum",   "_info"};

// The sample-name suffixes a family of `type` may use ("" is the bare name).
std::span<const std::string_view> AllowedSuffixes(MetricType type) {
  static constexpr std::string_view kCounter[] = {"_total", "_created"};
  static constexpr std::string_view kHistogram[] = {"_bucket", "_count", "_sum", "_created"};
  static constexpr std::string_view kGaugeHistogram[] = {"_bucket", "_gcount", "_gsum"};
  static constexpr std::string_view kSummary[] = {"", "_count", "_sum", "_created"};
  static constexpr std::string_view kInfo[] = {"_info"};
  static constexpr std::string_view kBare[] = {""};
  switch (type) {
    case MetricType::kCounter:
      return kCounter;
    case MetricType::kHistogram:
      return kHistogram;
    case MetricType::kGaugeHistogram:
      return kGaugeHistogram;
    case MetricType::kSummary:
      return kSummary;
    case MetricType::kInfo:
      return kInfo;
    case MetricType::kGauge:
    case MetricType::kStateSet:
    case MetricType::kUnknown:
      break;
  }
  return kBare;
}

// The family name samples are derived from. Prometheus tolerates counter
// families declared with "_total" and info families with "_info".
std::string_view FamilyBase(std::string_view family, MetricType type) {
  if (type == MetricType::kCounter && family.ends_with("_total")) {
    family.remove_suffix(6);
  } else if (type == MetricType::kInfo && family.ends_with("_info")) {
    family.remove_suffix(5);
  }
  return family;
}

bool HasNameWithSuffix(std::string_view name, std::string_view base, std::string_view suffix) {
  return name.size() == base.size() + suffix.size() && name.starts_with(base) &&
         name.ends_with(suffix);
}

bool BelongsToFamily(std::string_view sample, std::string_view family, MetricType type) {
  const std::string_view base = FamilyBase(family, type);
  for (std::string_view suffix : AllowedSuffixes(type)) {
    if (HasNameWithSuffix(sample, base, suffix)) return true;
  }
  return false;
}

}  // namespace

// One line of input (without its newline) and a read position in it.
struct Parser::Cursor {
  std::string_view line;
  size_t pos = 0;
  bool has_newline = false;

  bool AtEnd() const { return pos >= line.size(); }
  char Peek() const { return pos < line.size() ? line[pos] : '\n'; }
  size_t SkipBlanks() {
    size_t start = pos;
    while (pos < line.size() && IsBlank(line[pos])) ++pos;
    return pos - start;
  }
  // The run of bytes from pos up to the first byte in `stops`.
  std::string_view TokenUntil(std::string_view stops) {
    size_t start = pos;
    while (pos < line.size() && stops.find(line[pos]) == std::string_view::npos) ++pos;
    return line.substr(start, pos - start);
  }
};

Parser::Parser(std::string_view input, Format format, ParserOptions options)
    : input_(input), format_(format), options_(options) {}

Status Parser::Fail(size_t column, std::string message) {
  error_ = Status::Error("line " + std::to_string(line_) + ", column " +
                         std::to_string(column + 1) + ": " + message);
  return error_;
}

Status Parser::Expected(const Cursor& c, std::string_view what) {
  std::string found;
  if (c.AtEnd()) {
    found = c.has_newline ? "end of line" : "end of input";
  } else {
    // Show a single delimiter, or the word that starts here.
    static constexpr std::string_view kDelimiters = " \t{}=,\"#";
    std::string_view rest = c.line.substr(c.pos);
    size_t len = kDelimiters.find(rest[0]) != std::string_view::npos
                     ? 1
                     : std::min(rest.find_first_of(kDelimiters), rest.size());
    found = Quote(rest.substr(0, len));
  }
  std::string message = "expected ";
  message += what;
  message += ", found ";
  message += found;
  return Fail(c.pos, std::move(message));
}

std::string_view Parser::Unescape(std::string_view raw, bool allow_quote) {
  // scratch_ has capacity for the whole line, so appending never
  // reallocates and earlier views into it stay valid.
  const size_t start = scratch_.size();
  for (size_t i = 0; i < raw.size(); ++i) {
    char c = raw[i];
    if (c == '\\' && i + 1 < raw.size()) {
      const char next = raw[i + 1];
      if (next == '\\' || next == 'n' || (allow_quote && next == '"')) {
        c = next == 'n' ? '\n' : next;
        ++i;
      }
      // Unknown escapes stay verbatim, as in Prometheus.
    }
    scratch_.push_back(c);
  }
  return std::string_view(scratch_).substr(start);
}

Status Parser::Next(Entry& entry) {
  if (!error_.ok()) return error_;
  entry = Entry{};
  if (done_) return Status::Ok();
  while (true) {
    if (pos_ >= input_.size()) {
      line_ = next_line_;
      if (format_ == Format::kOpenMetrics1) {
        return Fail(0, "expected \"# EOF\", found end of input");
      }
      done_ = true;
      entry.line = 0;
      return Status::Ok();
    }
    // Bound the newline search so an endless line costs O(limit), not O(input).
    const size_t remaining = input_.size() - pos_;
    const size_t window = std::min(remaining, options_.max_line_length + 1);
    const char* begin = input_.data() + pos_;
    const auto* newline = static_cast<const char*>(std::memchr(begin, '\n', window));
    line_ = next_line_++;
    Cursor c;
    if (newline != nullptr) {
      c.line = std::string_view(begin, static_cast<size_t>(newline - begin));
      c.has_newline = true;
      pos_ += c.line.size() + 1;
    } else {
      if (remaining > options_.max_line_length) {
        return Fail(options_.max_line_length, "line is longer than the maximum of " +
                                                  std::to_string(options_.max_line_length) +
                                                  " bytes");
      }
      c.line = std::string_view(begin, remaining);
      pos_ = input_.size();
    }
    if (scratch_.capacity() < c.line.size()) scratch_.reserve(c.line.size());
    scratch_.clear();
    entry.line = line_;

    if (format_ == Format::kOpenMetrics1) {
      if (c.line.empty()) return Fail(0, "unexpected empty line");
      if (c.line[0] == '#') return ParseOpenMetricsComment(c, entry);
      return ParseSample(c, entry);
    }
    c.SkipBlanks();
    if (c.AtEnd()) continue;  // blank line
    if (c.Peek() == '#') {
      bool produced = false;
      Status status = ParseTextComment(c, entry, produced);
      if (!status.ok() || produced) return status;
      continue;
    }
    return ParseSample(c, entry);
  }
}

Status Parser::ParseTextComment(Cursor& c, Entry& entry, bool& produced) {
  ++c.pos;                                       // '#'
  if (c.SkipBlanks() == 0) return Status::Ok();  // "#foo" is a plain comment
  std::string_view rest = c.line.substr(c.pos);
  EntryKind kind;
  if (rest.starts_with("HELP")) {
    kind = EntryKind::kHelp;
  } else if (rest.starts_with("TYPE")) {
    kind = EntryKind::kType;
  } else {
    return Status::Ok();
  }
  if (rest.size() == 4 || !IsBlank(rest[4])) return Status::Ok();  // e.g. "# HELPER"
  c.pos += 4;
  c.SkipBlanks();
  produced = true;
  return ParseMetadata(c, kind, entry);
}

Status Parser::ParseOpenMetricsComment(Cursor& c, Entry& entry) {
  std::string_view line = c.line;
  if (line == "# EOF") {
    if (pos_ < input_.size()) {
      line_ = next_line_;
      return Fail(0, "unexpected data after \"# EOF\"");
    }
    done_ = true;
    entry.kind = EntryKind::kEof;
    return Status::Ok();
  }
  EntryKind kind;
  if (line.starts_with("# HELP ")) {
    kind = EntryKind::kHelp;
  } else if (line.starts_with("# TYPE ")) {
    kind = EntryKind::kType;
  } else if (line.starts_with("# UNIT ")) {
    kind = EntryKind::kUnit;
  } else {
    return Fail(0, "expected \"# HELP\", \"# TYPE\", \"# UNIT\" or \"# EOF\", found " +
                       Quote(line.substr(0, std::min<size_t>(line.size(), 7))));
  }
  c.pos = 7;
  return ParseMetadata(c, kind, entry);
}

Status Parser::ParseMetadata(Cursor& c, EntryKind kind, Entry& entry) {
  const bool om = format_ == Format::kOpenMetrics1;
  const size_t name_pos = c.pos;
  if (!IsMetricNameStart(c.Peek())) return Expected(c, "metric name");
  while (c.pos < c.line.size() && IsMetricNameChar(c.line[c.pos])) ++c.pos;
  const std::string_view name = c.line.substr(name_pos, c.pos - name_pos);
  if (!c.AtEnd()) {
    if (om ? c.Peek() != ' ' : !IsBlank(c.Peek())) {
      return Expected(c, om ? "\" \" after metric name" : "whitespace after metric name");
    }
    ++c.pos;  // exactly one separator; further blanks belong to the text
  }
  const size_t text_pos = c.pos;
  std::string_view text = c.line.substr(c.pos);
  entry.kind = kind;
  entry.name = name;

  switch (kind) {
    case EntryKind::kType: {
      std::optional<MetricType> type = ParseTypeName(text, format_);
      if (!type) {
        std::string what = "metric type (";
        what += om ? kOpenMetricsTypes : kTextTypes;
        what += ")";
        if (text.empty()) return Expected(c, what);
        return Fail(text_pos, "expected " + what + ", found " + Quote(text));
      }
      entry.type = *type;
      break;
    }
    case EntryKind::kHelp: {
      if (const void* nul = std::memchr(text.data(), '\0', text.size())) {
        return Fail(text_pos + static_cast<size_t>(static_cast<const char*>(nul) - text.data()),
                    "unexpected NUL byte in help text");
      }
      if (size_t bad = FindInvalidUtf8(text); bad != std::string_view::npos) {
        return Fail(text_pos + bad, "help text is not valid UTF-8");
      }
      entry.text = text.find('\\') == std::string_view::npos ? text : Unescape(text, om);
      break;
    }
    case EntryKind::kUnit: {
      for (size_t i = 0; i < text.size(); ++i) {
        if (!IsMetricNameChar(text[i])) {
          c.pos = text_pos + i;
          return Expected(c, "unit character [a-zA-Z0-9_:] or end of line");
        }
      }
      if (!text.empty() && !(name.size() > text.size() && name.ends_with(text) &&
                             name[name.size() - text.size() - 1] == '_')) {
        return Fail(text_pos, "unit " + Quote(text) + " is not a suffix of metric family name " +
                                  Quote(name));
      }
      entry.text = text;
      break;
    }
    case EntryKind::kSample:
    case EntryKind::kEof:
      break;
  }
  if (om) {
    Status status = TrackFamilyMetadata(Cursor{c.line, name_pos, c.has_newline}, name, kind);
    if (!status.ok()) return status;
    if (kind == EntryKind::kType) family_->type = entry.type;
  }
  return Status::Ok();
}

Status Parser::TrackFamilyMetadata(const Cursor& c, std::string_view name, EntryKind kind) {
  if (!family_ || family_->name != name) {
    family_ = Family{};
    family_->name = name;
  } else if (family_->has_samples) {
    return Fail(c.pos,
                "metadata for metric family " + Quote(name) + " must come before its samples");
  }
  bool* seen = kind == EntryKind::kType   ? &family_->has_type
               : kind == EntryKind::kHelp ? &family_->has_help
                                          : &family_->has_unit;
  if (*seen) {
    const char* what = kind == EntryKind::kType   ? "TYPE"
                       : kind == EntryKind::kHelp ? "HELP"
                                                  : "UNIT";
    return Fail(c.pos, std::string("duplicate ") + what + " line for metric family " + Quote(name));
  }
  *seen = true;
  return Status::Ok();
}

Status Parser::TrackFamilySample(const Cursor& c, std::string_view name) {
  if (family_) {
    if (BelongsToFamily(name, family_->name, family_->type)) {
      family_->has_samples = true;
      return Status::Ok();
    }
    if (family_->has_type) {
      // A name built from the declared family and a reserved suffix can only
      // mean a sample of that family, so it has to fit the declared type.
      const std::string_view base = FamilyBase(family_->name, family_->type);
      bool looks_like_member = name == base || name == family_->name;
      for (std::string_view suffix : kReservedSuffixes) {
        looks_like_member = looks_like_member || HasNameWithSuffix(name, base, suffix);
      }
      if (looks_like_member) {
        std::string allowed;
        for (std::string_view suffix : AllowedSuffixes(family_->type)) {
          if (!allowed.empty()) allowed += ", ";
          allowed += Quote(std::string(base) + std::string(suffix));
        }
        return Fail(c.pos, "sample name " + Quote(name) + " does not fit metric family " +
                               Quote(family_->name) + " of type " + TypeName(family_->type) +
                               " (expected " + allowed + ")");
      }
    }
  }
  // A sample without metadata forms its own family of unknown type.
  family_ = Family{};
  family_->name = name;
  family_->has_samples = true;
  return Status::Ok();
}

Status Parser::ParseLabelValue(Cursor& c, std::string_view& value) {
  if (c.Peek() != '"') return Expected(c, "'\"' starting a label value");
  const size_t open = c.pos;
  const std::string_view line = c.line;
  size_t i = open + 1;
  bool escaped = false;
  bool non_ascii = false;
  while (true) {
    if (i >= line.size()) {
      c.pos = i;
      return Expected(c,
                      "'\"' closing the label value opened at column " + std::to_string(open + 1));
    }
    const char ch = line[i];
    if (ch == '"') break;
    if (ch == '\\') {
      escaped = true;
      i += 2;  // the escaped byte is checked by the bounds test above
      if (i > line.size()) {
        c.pos = line.size();
        return Expected(
            c, "'\"' closing the label value opened at column " + std::to_string(open + 1));
      }
      if (line[i - 1] == '\0') return Fail(i - 1, "unexpected NUL byte in label value");
      non_ascii = non_ascii || static_cast<unsigned char>(line[i - 1]) >= 0x80;
      continue;
    }
    if (ch == '\0') return Fail(i, "unexpected NUL byte in label value");
    non_ascii = non_ascii || static_cast<unsigned char>(ch) >= 0x80;
    ++i;
  }
  const std::string_view raw = line.substr(open + 1, i - open - 1);
  if (non_ascii) {
    if (size_t bad = FindInvalidUtf8(raw); bad != std::string_view::npos) {
      return Fail(open + 1 + bad, "label value is not valid UTF-8");
    }
  }
  value = escaped ? Unescape(raw, /*allow_quote=*/true) : raw;
  c.pos = i + 1;
  return Status::Ok();
}

Status Parser::ParseLabelSet(Cursor& c, std::vector<LabelView>& out, bool is_exemplar) {
  // Text 0.0.4 allows blanks between tokens and a trailing comma;
  // OpenMetrics allows neither.
  const bool text = format_ == Format::kText004;
  out.clear();
  ++c.pos;  // '{'
  if (text) c.SkipBlanks();
  if (c.Peek() == '}') {
    ++c.pos;
    return Status::Ok();
  }
  while (true) {
    const size_t name_pos = c.pos;
    if (!IsLabelNameStart(c.Peek())) return Expected(c, "label name");
    while (c.pos < c.line.size() && IsLabelNameChar(c.line[c.pos])) ++c.pos;
    LabelView label;
    label.name = c.line.substr(name_pos, c.pos - name_pos);
    if (text) c.SkipBlanks();
    if (c.Peek() != '=') return Expected(c, "'=' after label name");
    ++c.pos;
    if (text) c.SkipBlanks();
    Status status = ParseLabelValue(c, label.value);
    if (!status.ok()) return status;
    out.push_back(label);
    if (text) c.SkipBlanks();
    if (c.Peek() == ',') {
      ++c.pos;
      if (text) {
        c.SkipBlanks();
        if (c.Peek() == '}') {
          ++c.pos;
          break;
        }
      }
      continue;
    }
    if (c.Peek() == '}') {
      ++c.pos;
      break;
    }
    return Expected(c, "',' or '}' after label value");
  }
  if (!is_exemplar) {
    for (const LabelView& label : out) {
      // The metric name is the implicit __name__ label, so an explicit one
      // would be a second value for it.
      if (label.name == "__name__") {
        return Fail(static_cast<size_t>(label.name.data() - c.line.data()),
                    "duplicate label name \"__name__\" (the metric name)");
      }
    }
  }
  return CheckDuplicateLabels(c, out);
}

Status Parser::CheckDuplicateLabels(const Cursor& c, const std::vector<LabelView>& labels) {
  // Quadratic scan is fastest for the usual handful of labels; sorting keeps
  // hostile lines with thousands of labels at n log n.
  constexpr size_t kLinearLimit = 16;
  std::string_view duplicate;
  if (labels.size() <= kLinearLimit) {
    for (size_t i = 1; i < labels.size() && duplicate.empty(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (labels[i].name == labels[j].name) {
          duplicate = labels[i].name;
          break;
        }
      }
    }
  } else {
    sorted_names_.clear();
    for (const LabelView& label : labels) sorted_names_.push_back(label.name);
    // Ties ordered by position, so the second of a pair is the later one.
    std::sort(sorted_names_.begin(), sorted_names_.end(),
              [](std::string_view a, std::string_view b) {
                return a < b || (a == b && a.data() < b.data());
              });
    for (size_t i = 1; i < sorted_names_.size(); ++i) {
      if (sorted_names_[i] == sorted_names_[i - 1]) {
        duplicate = sorted_names_[i];
        break;
      }
    }
  }
  if (duplicate.empty()) return Status::Ok();
  // Label names are views into the current line.
  return Fail(static_cast<size_t>(duplicate.data() - c.line.data()),
              "duplicate label name " + Quote(duplicate));
}

Status Parser::ParseOpenMetricsTimestamp(Cursor& c, std::optional<int64_t>& out) {
  const size_t start = c.pos;
  std::string_view token = c.TokenUntil(" ");
  double seconds = 0;
  if (token.empty() || !ParseGoFloat(token, seconds) || std::isnan(seconds) ||
      std::isinf(seconds)) {
    c.pos = start;
    if (token.empty()) return Expected(c, "timestamp");
    return Fail(start, "expected timestamp in seconds, found " + Quote(token));
  }
  const double ms = std::round(seconds * 1000.0);
  if (!(std::fabs(ms) < 9.2e18)) return Fail(start, "timestamp " + Quote(token) + " out of range");
  out = static_cast<int64_t>(ms);
  return Status::Ok();
}

Status Parser::ParseExemplar(Cursor& c, Entry& entry) {
  if (!c.line.substr(c.pos).starts_with("# {"))
    return Expected(c, "exemplar starting with \"# {\"");
  c.pos += 2;
  Status status = ParseLabelSet(c, exemplar_labels_, /*is_exemplar=*/true);
  if (!status.ok()) return status;
  ExemplarView exemplar;
  exemplar.labels = exemplar_labels_;
  if (c.Peek() != ' ') return Expected(c, "' ' before exemplar value");
  ++c.pos;
  const size_t value_pos = c.pos;
  std::string_view token = c.TokenUntil(" ");
  if (token.empty()) return Expected(c, "exemplar value");
  if (!ParseGoFloat(token, exemplar.value)) {
    return Fail(value_pos, "expected exemplar value, found " + Quote(token));
  }
  if (!c.AtEnd()) {
    ++c.pos;  // ' '
    status = ParseOpenMetricsTimestamp(c, exemplar.timestamp_ms);
    if (!status.ok()) return status;
    if (!c.AtEnd()) return Expected(c, "end of line after exemplar");
  }
  entry.exemplar = exemplar;
  return Status::Ok();
}

Status Parser::ParseSample(Cursor& c, Entry& entry) {
  const bool om = format_ == Format::kOpenMetrics1;
  const size_t name_pos = c.pos;
  if (!IsMetricNameStart(c.Peek())) return Expected(c, "metric name");
  while (c.pos < c.line.size() && IsMetricNameChar(c.line[c.pos])) ++c.pos;
  const std::string_view name = c.line.substr(name_pos, c.pos - name_pos);
  if (om) {
    Status status = TrackFamilySample(Cursor{c.line, name_pos, c.has_newline}, name);
    if (!status.ok()) return status;
  }
  entry.kind = EntryKind::kSample;
  entry.name = name;

  bool has_labels = false;
  size_t label_end = 0;
  size_t blanks = om ? 0 : c.SkipBlanks();
  if (c.Peek() == '{') {
    Status status = ParseLabelSet(c, labels_, /*is_exemplar=*/false);
    if (!status.ok()) return status;
    has_labels = true;
    label_end = c.pos;
    entry.labels = labels_;
    if (!om) blanks = c.SkipBlanks();
  }
  entry.series =
      c.line.substr(name_pos, (has_labels ? label_end : name_pos + name.size()) - name_pos);

  // Value.
  if (om) {
    if (c.Peek() != ' ') {
      return Expected(c, has_labels ? "' ' after label set" : "'{' or ' ' after metric name");
    }
    ++c.pos;
  } else if (blanks == 0 && !has_labels && !c.AtEnd()) {
    return Expected(c, "'{' or whitespace after metric name");
  }
  const size_t value_pos = c.pos;
  std::string_view token = c.TokenUntil(om ? " " : " \t");
  if (token.empty()) return Expected(c, "sample value");
  if (!ParseGoFloat(token, entry.value)) {
    return Fail(value_pos, "expected sample value (float, NaN or +/-Inf), found " + Quote(token));
  }

  // Timestamp (and, in OpenMetrics, exemplar).
  if (!om) {
    c.SkipBlanks();
    if (c.AtEnd()) return Status::Ok();
    const size_t ts_pos = c.pos;
    token = c.TokenUntil(" \t");
    int64_t ts = 0;
    auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), ts);
    if (ptr != token.data() + token.size() || ec == std::errc::invalid_argument) {
      return Fail(ts_pos, "expected timestamp in integer milliseconds, found " + Quote(token));
    }
    if (ec == std::errc::result_out_of_range) {
      return Fail(ts_pos, "timestamp " + Quote(token) + " out of range");
    }
    entry.timestamp_ms = ts;
    c.SkipBlanks();
    if (!c.AtEnd()) return Expected(c, "end of line after timestamp");
    return Status::Ok();
  }
  if (c.AtEnd()) return Status::Ok();
  ++c.pos;  // ' '
  if (c.Peek() == '#') return ParseExemplar(c, entry);
  Status status = ParseOpenMetricsTimestamp(c, entry.timestamp_ms);
  if (!status.ok()) return status;
  if (c.AtEnd()) return Status::Ok();
  ++c.pos;  // ' '
  if (c.Peek() == '#') return ParseExemplar(c, entry);
  return Expected(c, "exemplar or end of line after timestamp");
}

std::vector<Label> ToLabels(std::span<const LabelView> labels) {
  std::vector<Label> out;
  out.reserve(labels.size());
  for (const LabelView& label : labels) {
    out.push_back(Label{std::string(label.name), std::string(label.value)});
  }
  return out;
}

Result<std::vector<MetricFamily>> ParseToFamilies(std::string_view input, Format format,
                                                  ParserOptions options) {
  struct Metadata {
    std::optional<MetricType> type;
    std::string help;
    std::string unit;
    bool used = false;
  };
  struct Group {
    std::string name;
    std::vector<Sample> samples;
  };
  // Families appear in the order of their first metadata line or sample.
  struct Slot {
    bool is_metadata;
    std::string key;
  };
  std::unordered_map<std::string, Metadata> metadata;
  std::unordered_map<std::string, size_t> group_index;
  std::vector<Group> groups;
  std::vector<Slot> order;

  Parser parser(input, format, options);
  Entry entry;
  while (true) {
    Status status = parser.Next(entry);
    if (!status.ok()) return status;
    if (entry.kind == EntryKind::kEof) break;
    if (entry.kind == EntryKind::kSample) {
      std::string name(entry.name);
      auto [it, inserted] = group_index.try_emplace(name, groups.size());
      if (inserted) {
        groups.push_back(Group{name, {}});
        order.push_back(Slot{false, name});
      }
      Sample sample;
      sample.labels = ToLabels(entry.labels);
      sample.value = entry.value;
      sample.timestamp_ms = entry.timestamp_ms;
      groups[it->second].samples.push_back(std::move(sample));
      continue;
    }
    std::string name(entry.name);
    auto [it, inserted] = metadata.try_emplace(name);
    if (inserted) order.push_back(Slot{true, name});
    if (entry.kind == EntryKind::kType) it->second.type = entry.type;
    if (entry.kind == EntryKind::kHelp) it->second.help = std::string(entry.text);
    if (entry.kind == EntryKind::kUnit) it->second.unit = std::string(entry.text);
  }

  // The metadata a sample name belongs to: its own, or that of the family
  // it is a suffixed component of.
  auto owner = [&](const std::string& sample) -> Metadata* {
    if (auto it = metadata.find(sample); it != metadata.end()) return &it->second;
    for (std::string_view suffix : kReservedSuffixes) {
      if (!std::string_view(sample).ends_with(suffix)) continue;
      auto it = metadata.find(sample.substr(0, sample.size() - suffix.size()));
      if (it == metadata.end()) continue;
      MetricType type = it->second.type.value_or(MetricType::kUnknown);
      for (std::string_view allowed : AllowedSuffixes(type)) {
        if (allowed == suffix) return &it->second;
      }
    }
    return nullptr;
  };

  std::vector<MetricFamily> families;
  families.reserve(order.size());
  std::vector<std::optional<MetricFamily>> by_slot(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i].is_metadata) continue;
    Group& group = groups[group_index[order[i].key]];
    MetricFamily family;
    family.name = group.name;
    family.type = MetricType::kUnknown;
    if (Metadata* meta = owner(group.name)) {
      meta->used = true;
      family.type = meta->type.value_or(MetricType::kUnknown);
      family.help = meta->help;
      family.unit = meta->unit;
    }
    family.samples = std::move(group.samples);
    by_slot[i] = std::move(family);
  }
  for (size_t i = 0; i < order.size(); ++i) {
    if (!order[i].is_metadata) continue;
    const Metadata& meta = metadata[order[i].key];
    if (meta.used) continue;
    MetricFamily family;
    family.name = order[i].key;
    family.type = meta.type.value_or(MetricType::kUnknown);
    family.help = meta.help;
    family.unit = meta.unit;
    // An OpenMetrics family is named without the suffix its samples carry.
    if (format == Format::kOpenMetrics1 && family.type == MetricType::kCounter &&
        !family.name.ends_with("_total")) {
      family.name += "_total";
    } else if (format == Format::kOpenMetrics1 && family.type == MetricType::kInfo &&
               !family.name.ends_with("_info")) {
      family.name += "_info";
    }
    by_slot[i] = std::move(family);
  }
  for (auto& family : by_slot) {
    if (family) families.push_back(std::move(*family));
  }
  return families;
}

}  // namespace gpumon::exposition
