#include "tsdb/chunkenc/chunk.h"

#include <bit>

#include "tsdb/chunkenc/chunk_iterator.h"
#include "tsdb/chunkenc/packed.h"
#include "tsdb/chunkenc/xor_chunk.h"

namespace gpumon::tsdb::chunkenc {

namespace {

class ErrorIterator final : public ChunkIterator {
 public:
  explicit ErrorIterator(const std::string& why) { Fail(why); }

 protected:
  int Fill() override { return 0; }
};

// The exact check: every sample decodes to the same time and the same bits.
bool RoundTrips(std::span<const uint8_t> chunk, std::span<const Sample> samples) {
  auto it = NewIterator(chunk);
  for (const Sample& s : samples) {
    if (!it->Next()) return false;
    const Sample got = it->At();
    if (got.t != s.t || std::bit_cast<uint64_t>(got.v) != std::bit_cast<uint64_t>(s.v)) {
      return false;
    }
  }
  return !it->Next() && it->status().ok();
}

}  // namespace

std::string_view EncodingName(uint8_t encoding) {
  switch (static_cast<Encoding>(encoding)) {
    case Encoding::kXor:
      return "xor";
    case Encoding::kPacked:
      return "packed";
  }
  return "unknown";
}

std::vector<uint8_t> EncodeBest(std::span<const Sample> samples) {
  Result<std::vector<uint8_t>> packed = EncodePacked(samples);
  if (packed.ok() && packed->size() < XorChunkSize(samples) && RoundTrips(*packed, samples)) {
    return std::move(packed).value();
  }
  return EncodeXor(samples);
}

std::unique_ptr<SeriesIterator> NewIterator(std::span<const uint8_t> chunk) {
  return NewChunkIterator(chunk);
}

std::unique_ptr<ChunkIterator> NewChunkIterator(std::span<const uint8_t> chunk) {
  if (chunk.empty()) return std::make_unique<ErrorIterator>("empty");
  switch (static_cast<Encoding>(chunk[0])) {
    case Encoding::kXor:
      return NewXorIterator(chunk);
    case Encoding::kPacked:
      return NewPackedIterator(chunk);
  }
  return std::make_unique<ErrorIterator>("unknown encoding " + std::to_string(chunk[0]));
}

Result<int> CountSamples(std::span<const uint8_t> chunk) {
  if (chunk.empty()) return Status::Error("corrupt chunk: empty");
  switch (static_cast<Encoding>(chunk[0])) {
    case Encoding::kXor:
      return XorSampleCount(chunk);
    case Encoding::kPacked:
      return PackedSampleCount(chunk);
  }
  return Status::Error("corrupt chunk: unknown encoding " + std::to_string(chunk[0]));
}

}  // namespace gpumon::tsdb::chunkenc
