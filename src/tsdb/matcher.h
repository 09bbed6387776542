// Label matchers: =, !=, =~, !~ with Prometheus semantics. Regular
// expressions use RE2 (the syntax and semantics of Go's regexp, which
// Prometheus uses) and are fully anchored; a matcher on a label the series
// lacks sees the empty string.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/labels.h"
#include "common/status.h"

namespace re2 {
class RE2;
}

namespace gpumon::tsdb {

enum class MatchType { kEqual, kNotEqual, kRegexMatch, kRegexNoMatch };

class Matcher {
 public:
  // Fails with a message naming the pattern when a regex does not compile.
  static Result<Matcher> Make(MatchType type, std::string name, std::string value);

  MatchType type() const { return type_; }
  const std::string& name() const { return name_; }
  const std::string& value() const { return value_; }

  bool Matches(std::string_view value) const;
  bool Matches(const Labels& labels) const { return Matches(labels.Get(name_)); }
  // True when the matcher accepts the empty string (so series without the
  // label match too).
  bool MatchesEmpty() const { return Matches(std::string_view()); }

  // name="value", name=~"value", ... as PromQL prints it.
  std::string ToString() const;

 private:
  Matcher() = default;
  MatchType type_ = MatchType::kEqual;
  std::string name_;
  std::string value_;
  std::shared_ptr<const re2::RE2> re_;  // regex types only
};

}  // namespace gpumon::tsdb
