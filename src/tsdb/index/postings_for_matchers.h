// PostingsForMatchers: the series matching a conjunction of label matchers,
// computed from an inverted index with Prometheus's semantics.
//
// Contract: a label the series lacks reads as the empty string, so a matcher
// that accepts "" (l="", l!="x", l=~"x|", l!~"x", l=~".*") also selects
// series without the label. Matchers that reject "" select the union of
// postings of the accepted values and are intersected; matchers that accept
// "" subtract the union of postings of the values they reject. With no
// matcher that rejects "", the start set is every series. No matchers: every
// series. The index behind LabelIndexView may be the head or a block; the
// result is sorted ascending.
#pragma once

#include <functional>
#include <span>
#include <string_view>

#include "common/status.h"
#include "tsdb/index/postings.h"
#include "tsdb/matcher.h"

namespace gpumon::tsdb::index {

class LabelIndexView {
 public:
  virtual ~LabelIndexView() = default;
  // Every series.
  virtual Result<Postings> AllPostings() const = 0;
  // Series with label name=value (empty when the pair is absent).
  virtual Result<Postings> PostingsFor(std::string_view name, std::string_view value) const = 0;
  // Union of the postings of every stored value v of `name` with accept(v).
  virtual Result<Postings> PostingsForValues(
      std::string_view name, const std::function<bool(std::string_view)>& accept) const = 0;
};

Result<Postings> PostingsForMatchers(const LabelIndexView& index,
                                     std::span<const Matcher> matchers);

}  // namespace gpumon::tsdb::index
