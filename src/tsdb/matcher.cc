#include "tsdb/matcher.h"

#include <re2/re2.h>

namespace gpumon::tsdb {

Result<Matcher> Matcher::Make(MatchType type, std::string name, std::string value) {
  Matcher m;
  m.type_ = type;
  m.name_ = std::move(name);
  m.value_ = std::move(value);
  if (type == MatchType::kRegexMatch || type == MatchType::kRegexNoMatch) {
    RE2::Options options;
    options.set_log_errors(false);
    options.set_dot_nl(true);  // Prometheus compiles with (?s)
    auto re = std::make_shared<const RE2>("^(?:" + m.value_ + ")$", options);
    if (!re->ok()) {
      return Status::Error("invalid regular expression \"" + m.value_ + "\": " + re->error());
    }
    m.re_ = std::move(re);
  }
  return m;
}

bool Matcher::Matches(std::string_view value) const {
  switch (type_) {
    case MatchType::kEqual: return value == value_;
    case MatchType::kNotEqual: return value != value_;
    case MatchType::kRegexMatch: return RE2::FullMatch(value, *re_);
    case MatchType::kRegexNoMatch: return !RE2::FullMatch(value, *re_);
  }
  return false;
}

std::string Matcher::ToString() const {
  static constexpr const char* kOps[] = {"=", "!=", "=~", "!~"};
  std::string out = name_ + kOps[static_cast<int>(type_)] + "\"";
  for (char c : value_) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

}  // namespace gpumon::tsdb
