// SymbolTable: interned label names and values, so that a million series
// with ~10 labels each store small integer ids instead of strings (GPU
// series repeat a few thousand distinct strings).
//
// Contract:
// - Intern returns the id of a string, adding it if absent, and takes one
//   reference; Release drops one and frees the id at zero (ids are reused).
// - Intern, Release, Find and MemoryBytes need external synchronization (the
//   head's index lock, held exclusively for Intern/Release).
// - Get(id) needs no lock: entries live in segments that never move, and an
//   entry is only rewritten after its last reference is released. A caller
//   that reached the id through a live series (published to it through a
//   lock) may read it concurrently with Intern of other strings.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gpumon::tsdb::head {

class SymbolTable {
 public:
  SymbolTable() = default;
  ~SymbolTable();
  SymbolTable(const SymbolTable&) = delete;
  SymbolTable& operator=(const SymbolTable&) = delete;

  uint32_t Intern(std::string_view s);
  void Release(uint32_t id);
  std::optional<uint32_t> Find(std::string_view s) const;
  std::string_view Get(uint32_t id) const {
    const Entry& e = EntryAt(id);
    return {e.data, e.len};
  }
  // Number of live symbols.
  size_t size() const { return index_.size(); }
  // Estimated heap bytes (strings, entries, the lookup map).
  size_t MemoryBytes() const;

 private:
  struct Entry {
    char* data = nullptr;
    uint32_t len = 0;
    uint32_t refs = 0;
  };
  // Segment k holds 2^(k + kFirstBits) entries, so ids map to (segment,
  // offset) with a bit scan and segments never move once allocated.
  static constexpr int kFirstBits = 6;
  static constexpr int kSegments = 32 - kFirstBits + 1;

  static void Locate(uint32_t id, int* seg, uint32_t* off) {
    const uint64_t x = uint64_t{id} + (uint64_t{1} << kFirstBits);
    const int top = 63 - __builtin_clzll(x);
    *seg = top - kFirstBits;
    *off = static_cast<uint32_t>(x - (uint64_t{1} << top));
  }
  const Entry& EntryAt(uint32_t id) const {
    int seg;
    uint32_t off;
    Locate(id, &seg, &off);
    return segments_[seg][off];
  }
  Entry& EntryAt(uint32_t id) {
    return const_cast<Entry&>(static_cast<const SymbolTable*>(this)->EntryAt(id));
  }

  std::array<std::unique_ptr<Entry[]>, kSegments> segments_;
  std::unordered_map<std::string_view, uint32_t> index_;
  std::vector<uint32_t> free_ids_;
  uint32_t next_id_ = 0;
  size_t string_bytes_ = 0;
  size_t segment_bytes_ = 0;
};

}  // namespace gpumon::tsdb::head
