// label_replace and label_join: rewrite one label of every sample, keeping
// the metric name (or setting it, when it is the destination).
#include <re2/re2.h>

#include <algorithm>
#include <deque>
#include <memory>
#include <string>
#include <utility>

#include "promql/functions/internal.h"

namespace gpumon::promql::fn {
namespace {

// In Prometheus 3.x any non-empty valid UTF-8 string is a label name.
bool ValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t len = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > s.size()) return false;
    for (size_t k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    // Overlong forms, surrogates and out-of-range code points are invalid.
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += len;
  }
  return true;
}

bool ValidLabelName(std::string_view s) { return !s.empty() && ValidUtf8(s); }

// The engine calls label_replace once per step with the same pattern, so
// keep the last few compiled patterns per thread.
std::shared_ptr<const re2::RE2> CompileCached(const std::string& pattern) {
  thread_local std::deque<std::pair<std::string, std::shared_ptr<const re2::RE2>>> cache;
  for (const auto& [p, re] : cache) {
    if (p == pattern) return re;
  }
  re2::RE2::Options opts;
  opts.set_log_errors(false);
  // Go's regexp semantics: (?s:...) lets '.' match newlines as Prometheus
  // asks, anchors make the match cover the whole value.
  auto re = std::make_shared<const re2::RE2>("^(?s:" + pattern + ")$", opts);
  if (!re->ok()) return nullptr;
  cache.emplace_front(pattern, re);
  if (cache.size() > 16) cache.pop_back();
  return re;
}

bool IsNameChar(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c >= 0x80;
}

// Go's Regexp.ExpandString: $1, ${1}, $name, ${name}; $$ is a literal $;
// an unknown or unmatched group expands to nothing; a malformed $ stays.
std::string Expand(const re2::RE2& re, std::string_view tmpl, const re2::StringPiece* groups,
                   int ngroups) {
  std::string out;
  while (!tmpl.empty()) {
    size_t dollar = tmpl.find('$');
    if (dollar == std::string_view::npos) break;
    out.append(tmpl.substr(0, dollar));
    tmpl.remove_prefix(dollar + 1);
    if (!tmpl.empty() && tmpl.front() == '$') {
      out.push_back('$');
      tmpl.remove_prefix(1);
      continue;
    }
    std::string_view rest = tmpl;
    bool brace = false;
    if (!rest.empty() && rest.front() == '{') {
      brace = true;
      rest.remove_prefix(1);
    }
    size_t i = 0;
    while (i < rest.size() && IsNameChar(static_cast<unsigned char>(rest[i]))) ++i;
    if (i == 0 || (brace && (i >= rest.size() || rest[i] != '}'))) {
      out.push_back('$');
      continue;
    }
    std::string_view name = rest.substr(0, i);
    tmpl = rest.substr(i + (brace ? 1 : 0));
    int num = 0;
    for (char c : name) {
      if (c < '0' || c > '9' || num >= 100000000) {
        num = -1;
        break;
      }
      num = num * 10 + (c - '0');
    }
    if (name.size() > 1 && name.front() == '0') num = -1;
    if (num < 0) {
      const auto& named = re.NamedCapturingGroups();
      auto it = named.find(std::string(name));
      if (it != named.end()) num = it->second;
    }
    if (num >= 0 && num < ngroups && groups[num].data() != nullptr) {
      out.append(groups[num].data(), groups[num].size());
    }
  }
  out.append(tmpl);
  return out;
}

// The labels with `name` set to `value` (removed when value is empty).
Labels WithLabel(const Labels& in, const std::string& name, std::string value) {
  std::vector<Label> items;
  items.reserve(in.size() + 1);
  bool placed = false;
  for (const auto& l : in) {
    if (!placed && l.name >= name) {
      placed = true;
      if (!value.empty()) items.push_back(Label{name, std::move(value)});
      if (l.name == name) continue;
    }
    items.push_back(l);
  }
  if (!placed && !value.empty()) items.push_back(Label{name, std::move(value)});
  return Labels::FromSorted(std::move(items));
}

// Rewriting labels may make two samples identical; Prometheus fails the
// query then (series that never share a timestamp are merged, which a
// per-step check gives for free).
Status CheckDistinct(const Vector& out, size_t from) {
  const size_t n = out.size() - from;
  if (n < 2) return Status::Ok();
  std::vector<const Sample*> order;
  order.reserve(n);
  for (size_t i = from; i < out.size(); ++i) order.push_back(&out[i]);
  std::sort(order.begin(), order.end(), [](const Sample* x, const Sample* y) {
    if (x->metric.Hash() != y->metric.Hash()) return x->metric.Hash() < y->metric.Hash();
    return x->metric < y->metric;
  });
  for (size_t i = 1; i < n; ++i) {
    if (order[i]->metric == order[i - 1]->metric) {
      return Status::Error("vector cannot contain metrics with the same labelset");
    }
  }
  return Status::Ok();
}

}  // namespace

// label_replace(v, dst, replacement, src, regex)
Status LabelReplace(const FunctionArgs& a, Vector& out) {
  const std::string dst(StringArg(a, 1));
  const std::string_view repl = StringArg(a, 2);
  const std::string src(StringArg(a, 3));
  const std::string regex(StringArg(a, 4));
  auto re = CompileCached(regex);
  if (re == nullptr) {
    return Status::Error("invalid regular expression in label_replace(): " + regex);
  }
  if (!ValidLabelName(dst)) {
    return Status::Error("invalid destination label name in label_replace(): " + dst);
  }
  const Vector* in = VectorArg(a, 0);
  if (in == nullptr) return Status::Ok();
  const int ngroups = re->NumberOfCapturingGroups() + 1;
  thread_local std::vector<re2::StringPiece> groups;
  groups.assign(static_cast<size_t>(ngroups), re2::StringPiece());
  const size_t from = out.size();
  for (const Sample& s : *in) {
    std::string_view value = s.metric.Get(src);
    if (re->Match(re2::StringPiece(value.data(), value.size()), 0, value.size(),
                  re2::RE2::UNANCHORED, groups.data(), ngroups)) {
      out.push_back(
          Sample{WithLabel(s.metric, dst, Expand(*re, repl, groups.data(), ngroups)), a.ts, s.f});
    } else {
      out.push_back(Sample{s.metric, a.ts, s.f});
    }
  }
  return CheckDistinct(out, from);
}

// label_join(v, dst, separator, src...)
Status LabelJoin(const FunctionArgs& a, Vector& out) {
  const std::string dst(StringArg(a, 1));
  const std::string_view sep = StringArg(a, 2);
  for (size_t i = 3; i < a.args.size(); ++i) {
    if (!ValidLabelName(StringArg(a, i))) {
      return Status::Error("invalid source label name in label_join(): " +
                           std::string(StringArg(a, i)));
    }
  }
  if (!ValidLabelName(dst)) {
    return Status::Error("invalid destination label name in label_join(): " + dst);
  }
  const Vector* in = VectorArg(a, 0);
  if (in == nullptr) return Status::Ok();
  const size_t from = out.size();
  for (const Sample& s : *in) {
    std::string joined;
    for (size_t i = 3; i < a.args.size(); ++i) {
      if (i > 3) joined.append(sep);
      joined.append(s.metric.Get(StringArg(a, i)));
    }
    out.push_back(Sample{WithLabel(s.metric, dst, std::move(joined)), a.ts, s.f});
  }
  return CheckDistinct(out, from);
}

}  // namespace gpumon::promql::fn
