#include "tsdb/head/symbol_table.h"

#include <cstring>

namespace gpumon::tsdb::head {

SymbolTable::~SymbolTable() {
  for (auto& [s, id] : index_) delete[] EntryAt(id).data;
}

uint32_t SymbolTable::Intern(std::string_view s) {
  if (auto it = index_.find(s); it != index_.end()) {
    ++EntryAt(it->second).refs;
    return it->second;
  }
  uint32_t id;
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
  } else {
    id = next_id_++;
    int seg;
    uint32_t off;
    Locate(id, &seg, &off);
    if (!segments_[seg]) {
      const size_t n = size_t{1} << (seg + kFirstBits);
      segments_[seg] = std::make_unique<Entry[]>(n);
      segment_bytes_ += n * sizeof(Entry);
    }
  }
  Entry& e = EntryAt(id);
  e.data = new char[s.size() + 1];
  if (!s.empty()) std::memcpy(e.data, s.data(), s.size());
  e.data[s.size()] = '\0';
  e.len = static_cast<uint32_t>(s.size());
  e.refs = 1;
  string_bytes_ += s.size() + 1;
  index_.emplace(std::string_view(e.data, e.len), id);
  return id;
}

void SymbolTable::Release(uint32_t id) {
  Entry& e = EntryAt(id);
  if (--e.refs > 0) return;
  index_.erase(std::string_view(e.data, e.len));
  string_bytes_ -= e.len + 1;
  delete[] e.data;
  e.data = nullptr;
  e.len = 0;
  free_ids_.push_back(id);
}

std::optional<uint32_t> SymbolTable::Find(std::string_view s) const {
  auto it = index_.find(s);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

size_t SymbolTable::MemoryBytes() const {
  // Per string: the allocation rounded up to the allocator's 16 bytes plus
  // its header; per map node: key, value, next pointer, cached hash.
  constexpr size_t kNodeBytes = 48;
  return string_bytes_ + index_.size() * (16 + kNodeBytes) + index_.bucket_count() * sizeof(void*) +
         segment_bytes_ + free_ids_.capacity() * sizeof(uint32_t);
}

}  // namespace gpumon::tsdb::head
