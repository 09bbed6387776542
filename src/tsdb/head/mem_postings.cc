#include "tsdb/head/mem_postings.h"

#include <algorithm>

namespace gpumon::tsdb::head {

void MemPostings::Insert(List* list, uint64_t ref) {
  if (list->empty() || list->back() < ref) {
    list->push_back(ref);
    return;
  }
  auto it = std::lower_bound(list->begin(), list->end(), ref);
  if (it == list->end() || *it != ref) list->insert(it, ref);
}

void MemPostings::Add(uint64_t ref, std::span<const uint32_t> label_ids) {
  for (size_t i = 0; i + 1 < label_ids.size(); i += 2) {
    Insert(&by_name_[label_ids[i]][label_ids[i + 1]], ref);
  }
  Insert(&all_, ref);
}

namespace {

// Drops the elements of sorted `remove` from sorted `list` in one pass.
void Filter(std::vector<uint64_t>* list, std::span<const uint64_t> remove) {
  auto out = list->begin();
  auto r = remove.begin();
  for (auto in = list->begin(); in != list->end(); ++in) {
    while (r != remove.end() && *r < *in) ++r;
    if (r != remove.end() && *r == *in) continue;
    *out++ = *in;
  }
  list->erase(out, list->end());
  // Give memory back when a list shrank a lot (series churn).
  if (list->capacity() > 64 && list->size() < list->capacity() / 4) list->shrink_to_fit();
}

}  // namespace

std::vector<std::pair<uint32_t, uint32_t>> MemPostings::Remove(
    std::span<const uint64_t> refs, std::span<const std::pair<uint32_t, uint32_t>> pairs) {
  std::vector<std::pair<uint32_t, uint32_t>> touched(pairs.begin(), pairs.end());
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  std::vector<std::pair<uint32_t, uint32_t>> emptied;
  for (const auto& [name, value] : touched) {
    auto n = by_name_.find(name);
    if (n == by_name_.end()) continue;
    auto v = n->second.find(value);
    if (v == n->second.end()) continue;
    Filter(&v->second, refs);
    if (v->second.empty()) {
      n->second.erase(v);
      emptied.emplace_back(name, value);
      if (n->second.empty()) by_name_.erase(n);
    }
  }
  Filter(&all_, refs);
  return emptied;
}

const MemPostings::List* MemPostings::Get(uint32_t name, uint32_t value) const {
  auto n = by_name_.find(name);
  if (n == by_name_.end()) return nullptr;
  auto v = n->second.find(value);
  return v == n->second.end() ? nullptr : &v->second;
}

size_t MemPostings::MemoryBytes() const {
  // Map nodes: key, value, next pointer, cached hash (rounded).
  constexpr size_t kNameNode = 16 + sizeof(ValueMap) + 16;
  constexpr size_t kValueNode = 16 + sizeof(List) + 16;
  size_t bytes = all_.capacity() * sizeof(uint64_t) + by_name_.bucket_count() * sizeof(void*);
  for (const auto& [name, values] : by_name_) {
    bytes += kNameNode + values.bucket_count() * sizeof(void*);
    for (const auto& [value, list] : values) {
      bytes += kValueNode + list.capacity() * sizeof(uint64_t) + (list.capacity() ? 16 : 0);
    }
  }
  return bytes;
}

}  // namespace gpumon::tsdb::head
