// Constants of the index file format (docs/formats/index.md), shared by its
// writer and reader.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpumon::tsdb::index {

// The first four bytes of an index file, "GPMI".
inline constexpr uint8_t kIndexMagic[4] = {'G', 'P', 'M', 'I'};
inline constexpr uint8_t kIndexVersion = 1;
inline constexpr size_t kIndexHeaderSize = 8;  // magic, version, 3 zero bytes

// Sections in TOC order.
enum Section : int {
  kSymbols = 0,
  kSeries,
  kSeriesOffsets,
  kPostings,
  kPostingsTable,
  kLabelIndex,
  kNumSections,
};
inline constexpr const char* kSectionNames[kNumSections] = {
    "symbols", "series", "series offsets", "postings", "postings table", "label index"};

// TOC: (offset u64, length u64) per section, then a CRC-32 of those bytes.
inline constexpr size_t kTocSize = kNumSections * 16 + 4;

inline constexpr size_t kPostingsEntrySize = 20;    // name u32, value u32, first u64, count u32
inline constexpr size_t kLabelIndexEntrySize = 12;  // name u32, first entry u32, entries u32

}  // namespace gpumon::tsdb::index
