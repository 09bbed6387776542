#include "tsdb/block/tombstones.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "tsdb/index/crc.h"
#include "tsdb/index/encoding.h"
#include "tsdb/index/file_writer.h"

namespace gpumon::tsdb::block {

void AddInterval(Intervals* ivs, Interval iv) {
  // First range that could touch iv: its maxt + 1 >= iv.mint.
  auto touches_left = [&iv](const Interval& x) {
    // x.maxt < iv.mint, so x.maxt + 1 cannot overflow.
    return x.maxt < iv.mint && x.maxt + 1 < iv.mint;
  };
  auto first = std::find_if_not(ivs->begin(), ivs->end(), touches_left);
  auto last = first;
  while (last != ivs->end() &&
         (last->mint <= iv.maxt ||
          (iv.maxt != std::numeric_limits<int64_t>::max() && last->mint == iv.maxt + 1))) {
    iv.mint = std::min(iv.mint, last->mint);
    iv.maxt = std::max(iv.maxt, last->maxt);
    ++last;
  }
  first = ivs->erase(first, last);
  ivs->insert(first, iv);
}

bool IsDeleted(const Intervals& ivs, int64_t t) {
  auto it = std::lower_bound(ivs.begin(), ivs.end(), t,
                             [](const Interval& x, int64_t v) { return x.maxt < v; });
  return it != ivs.end() && it->mint <= t;
}

bool Covers(const Intervals& ivs, int64_t mint, int64_t maxt) {
  auto it = std::lower_bound(ivs.begin(), ivs.end(), mint,
                             [](const Interval& x, int64_t v) { return x.maxt < v; });
  return it != ivs.end() && it->mint <= mint && it->maxt >= maxt;
}

uint64_t Tombstones::num_intervals() const {
  uint64_t n = 0;
  for (const auto& [id, ivs] : map_) n += ivs.size();
  return n;
}

std::vector<uint8_t> EncodeTombstones(const Tombstones& t) {
  index::Encbuf e;
  for (uint8_t b : kTombstonesMagic) e.PutByte(b);
  e.PutByte(kTombstonesVersion);
  e.PutByte(0);
  e.PutByte(0);
  e.PutByte(0);
  const size_t body = e.size();
  e.PutUvarint(t.num_series());
  for (const auto& [id, ivs] : t.all()) {
    e.PutUvarint(id);
    e.PutUvarint(ivs.size());
    for (const Interval& iv : ivs) {
      e.PutVarint(iv.mint);
      e.PutUvarint(static_cast<uint64_t>(iv.maxt) - static_cast<uint64_t>(iv.mint));
    }
  }
  uint32_t crc = index::Crc32c(std::span<const uint8_t>(e.bytes()).subspan(body));
  e.PutU32(crc);
  return std::move(e.bytes());
}

Result<Tombstones> DecodeTombstones(std::span<const uint8_t> data, const std::string& name) {
  auto err = [&name](uint64_t off, const std::string& what) {
    return Status::Error("tombstones " + name + ": " + what + " at offset " + std::to_string(off));
  };
  if (data.size() < 8 + 4) return err(0, "file too small");
  if (std::memcmp(data.data(), kTombstonesMagic, 4) != 0) return err(0, "bad magic");
  if (data[4] != kTombstonesVersion) return err(4, "unsupported version");
  if (data[5] != 0 || data[6] != 0 || data[7] != 0) return err(5, "non-zero header padding");
  std::span<const uint8_t> body = data.subspan(8, data.size() - 12);
  if (index::LoadU32(data.data() + data.size() - 4) != index::Crc32c(body)) {
    return err(data.size() - 4, "checksum mismatch");
  }
  Tombstones t;
  index::Decbuf d(body);
  uint64_t n = d.Uvarint();
  if (n > d.remaining()) return err(8, "bad series count");
  uint64_t prev_id = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t at = 8 + d.position();
    uint64_t id = d.Uvarint();
    uint64_t k = d.Uvarint();
    if (!d.ok() || (i > 0 && id <= prev_id) || k == 0 || k > d.remaining()) {
      return err(at, "malformed series entry");
    }
    prev_id = id;
    for (uint64_t j = 0; j < k; ++j) {
      int64_t mint = d.Varint();
      uint64_t span = d.Uvarint();
      const uint64_t room =
          static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) - static_cast<uint64_t>(mint);
      if (!d.ok() || span > room) return err(at, "malformed interval");
      t.Add(id, {mint, static_cast<int64_t>(static_cast<uint64_t>(mint) + span)});
    }
  }
  if (!d.ok() || d.remaining() != 0) return err(8 + d.position(), "trailing or truncated data");
  return t;
}

Result<Tombstones> ReadTombstones(const std::string& block_dir) {
  const std::string path = block_dir + "/" + kTombstonesFileName;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec) && !ec) return Tombstones{};
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Error("open " + path + ": cannot read");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return Status::Error("read " + path + ": I/O error");
  return DecodeTombstones({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, path);
}

Status WriteTombstones(const std::string& block_dir, const Tombstones& t) {
  std::vector<uint8_t> bytes = EncodeTombstones(t);
  return index::WriteFileAtomically(block_dir + "/" + kTombstonesFileName, bytes);
}

}  // namespace gpumon::tsdb::block
