#include "tsdb/index/postings_for_matchers.h"

#include <algorithm>
#include <vector>

namespace gpumon::tsdb::index {

Result<Postings> PostingsForMatchers(const LabelIndexView& index,
                                     std::span<const Matcher> matchers) {
  std::vector<Postings> keep;      // intersected
  std::vector<Postings> subtract;  // removed afterwards
  for (const Matcher& m : matchers) {
    const bool matches_empty = m.MatchesEmpty();
    Result<Postings> p = [&]() -> Result<Postings> {
      if (m.type() == MatchType::kEqual && !matches_empty) {
        return index.PostingsFor(m.name(), m.value());
      }
      if (m.type() == MatchType::kNotEqual && matches_empty) {
        // l!="x" rejects exactly the value x.
        return index.PostingsFor(m.name(), m.value());
      }
      if (!matches_empty) {
        return index.PostingsForValues(m.name(), [&m](std::string_view v) { return m.Matches(v); });
      }
      return index.PostingsForValues(m.name(), [&m](std::string_view v) { return !m.Matches(v); });
    }();
    if (!p.ok()) return p.status();
    if (matches_empty) {
      if (!p->empty()) subtract.push_back(std::move(p).value());
    } else {
      // Nothing can match once one required set is empty.
      if (p->empty()) return Postings{};
      keep.push_back(std::move(p).value());
    }
  }

  Postings result;
  if (keep.empty()) {
    auto all = index.AllPostings();
    if (!all.ok()) return all.status();
    result = std::move(all).value();
  } else {
    std::vector<std::span<const uint64_t>> spans(keep.begin(), keep.end());
    result = IntersectAll(spans);
  }
  if (result.empty() || subtract.empty()) return result;
  if (subtract.size() == 1) return Without(result, subtract[0]);
  std::vector<std::span<const uint64_t>> spans(subtract.begin(), subtract.end());
  return Without(result, MergeAll(spans));
}

}  // namespace gpumon::tsdb::index
