// Tombstones: time ranges deleted from series of a block, kept beside the
// immutable index and chunks in the block's `tombstones` file
// (docs/formats/block.md) until compaction rewrites the data without them.
//
// Contract: Intervals are inclusive [mint, maxt] ranges kept sorted, disjoint
// and non-adjacent (AddInterval merges). Tombstones maps a series id of the
// block's index to its intervals. The file encoding is deterministic (ids
// ascending); decoding untrusted bytes never crashes and errors name the
// file and the offset.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"

namespace gpumon::tsdb::block {

inline constexpr char kTombstonesFileName[] = "tombstones";
inline constexpr uint8_t kTombstonesMagic[4] = {'G', 'P', 'M', 'T'};
inline constexpr uint8_t kTombstonesVersion = 1;

struct Interval {
  int64_t mint = 0;
  int64_t maxt = 0;
  bool operator==(const Interval&) const = default;
};

using Intervals = std::vector<Interval>;

// Adds `iv` (mint <= maxt), merging it with overlapping or adjacent ranges.
void AddInterval(Intervals* ivs, Interval iv);
bool IsDeleted(const Intervals& ivs, int64_t t);
// Whether [mint, maxt] lies entirely inside one deleted range.
bool Covers(const Intervals& ivs, int64_t mint, int64_t maxt);

class Tombstones {
 public:
  void Add(uint64_t series, Interval iv) { AddInterval(&map_[series], iv); }
  // nullptr when the series has none.
  const Intervals* Get(uint64_t series) const {
    auto it = map_.find(series);
    return it == map_.end() ? nullptr : &it->second;
  }
  bool empty() const { return map_.empty(); }
  size_t num_series() const { return map_.size(); }
  uint64_t num_intervals() const;
  const std::map<uint64_t, Intervals>& all() const { return map_; }
  bool operator==(const Tombstones&) const = default;

 private:
  std::map<uint64_t, Intervals> map_;
};

std::vector<uint8_t> EncodeTombstones(const Tombstones& t);
Result<Tombstones> DecodeTombstones(std::span<const uint8_t> data, const std::string& name);
// A missing file reads as no tombstones.
Result<Tombstones> ReadTombstones(const std::string& block_dir);
Status WriteTombstones(const std::string& block_dir, const Tombstones& t);

}  // namespace gpumon::tsdb::block
