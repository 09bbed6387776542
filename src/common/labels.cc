#include "common/labels.h"

#include <algorithm>

namespace gpumon {

Labels::Labels(std::initializer_list<Label> labels) : Labels(FromUnsorted(labels)) {}

Labels Labels::FromUnsorted(std::vector<Label> labels) {
  std::stable_sort(labels.begin(), labels.end(),
                   [](const Label& a, const Label& b) { return a.name < b.name; });
  // Keep the last of equal names.
  std::vector<Label> out;
  out.reserve(labels.size());
  for (auto& l : labels) {
    if (!out.empty() && out.back().name == l.name) {
      out.back() = std::move(l);
    } else {
      out.push_back(std::move(l));
    }
  }
  return FromSorted(std::move(out));
}

Labels Labels::FromSorted(std::vector<Label> labels) {
  Labels l;
  if (labels.empty()) return l;
  l.rep_ = std::make_shared<const Rep>(std::move(labels));
  return l;
}

uint64_t Labels::ComputeHash() const {
  const uint64_t h = HashOf(rep_->items);
  rep_->hash.store(h, std::memory_order_relaxed);
  rep_->hashed.store(true, std::memory_order_release);
  return h;
}

const std::vector<Label>& Labels::EmptyItems() {
  static const std::vector<Label> kEmpty;
  return kEmpty;
}

uint64_t Labels::EmptyHash() {
  static const uint64_t kHash = HashOf({});
  return kHash;
}

std::string_view Labels::Get(std::string_view name) const {
  auto it = std::lower_bound(items().begin(), items().end(), name,
                             [](const Label& l, std::string_view n) { return l.name < n; });
  if (it != items().end() && it->name == name) return it->value;
  return {};
}

bool Labels::Has(std::string_view name) const {
  auto it = std::lower_bound(items().begin(), items().end(), name,
                             [](const Label& l, std::string_view n) { return l.name < n; });
  return it != items().end() && it->name == name;
}

uint64_t Labels::HashOf(const std::vector<Label>& items) {
  // FNV-1a over name\xff value\xff ...: stable and simple.
  uint64_t h = 1469598103934665603ULL;
  auto mix = [&h](std::string_view s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ULL;
    }
    h ^= 0xff;
    h *= 1099511628211ULL;
  };
  for (const auto& l : items) {
    mix(l.name);
    mix(l.value);
  }
  return h;
}

std::string Labels::ToString() const {
  std::string out;
  std::string_view name = Get(kMetricName);
  out.append(name);
  out.push_back('{');
  bool first = true;
  for (const auto& l : items()) {
    if (l.name == kMetricName) continue;
    if (!first) out.append(", ");
    first = false;
    out.append(l.name);
    out.append("=\"");
    for (char c : l.value) {
      if (c == '"' || c == '\\') out.push_back('\\');
      if (c == '\n') {
        out.append("\\n");
        continue;
      }
      out.push_back(c);
    }
    out.push_back('"');
  }
  out.push_back('}');
  return out;
}

}  // namespace gpumon
