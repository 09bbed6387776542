#include "tsdb/head/series.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <new>

#include "tsdb/head/symbol_table.h"

namespace gpumon::tsdb::head {

namespace {

// Floor division, so negative timestamps fall into the right range.
int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

std::vector<Sample>& ScratchSamples() {
  thread_local std::vector<Sample> samples;
  samples.clear();
  return samples;
}

uint8_t* CopyBytes(std::span<const uint8_t> bytes) {
  auto* p = new uint8_t[bytes.size()];
  std::memcpy(p, bytes.data(), bytes.size());
  return p;
}

// Heap bytes of an allocation of n bytes, as glibc malloc rounds it.
size_t AllocBytes(size_t n) { return n == 0 ? 0 : ((n + 8 + 15) & ~size_t{15}); }

}  // namespace

bool DecodeChunk(std::span<const uint8_t> chunk, std::vector<Sample>* out) {
  auto it = chunkenc::NewIterator(chunk);
  while (it->Next()) out->push_back(it->At());
  return it->status().ok();
}

Series* Series::New(uint64_t ref, uint64_t hash, std::span<const uint32_t> label_ids) {
  void* mem = ::operator new(sizeof(Series) + label_ids.size() * sizeof(uint32_t));
  auto* s = new (mem) Series(ref, hash, static_cast<int>(label_ids.size() / 2));
  std::memcpy(s->mutable_label_ids(), label_ids.data(), label_ids.size() * sizeof(uint32_t));
  return s;
}

void Series::Free(Series* s) {
  s->~Series();
  ::operator delete(s);
}

Series::~Series() {
  for (auto& c : closed_) delete[] c.data;
}

Labels Series::ToLabels(const SymbolTable& symbols) const {
  std::vector<Label> items;
  items.reserve(num_labels_);
  auto ids = label_ids();
  for (size_t i = 0; i < ids.size(); i += 2) {
    items.push_back(Label{std::string(symbols.Get(ids[i])), std::string(symbols.Get(ids[i + 1]))});
  }
  return Labels::FromSorted(std::move(items));
}

bool Series::LabelsEqual(const Labels& labels, const SymbolTable& symbols) const {
  if (labels.size() != num_labels_) return false;
  auto ids = label_ids();
  size_t i = 0;
  for (const Label& l : labels) {
    if (symbols.Get(ids[i]) != l.name || symbols.Get(ids[i + 1]) != l.value) return false;
    i += 2;
  }
  return true;
}

void Series::AddClosed(std::span<const Sample> samples) {
  std::vector<uint8_t> bytes = chunkenc::EncodeBest(samples);
  ClosedChunk c;
  c.mint = samples.front().t;
  c.maxt = samples.back().t;
  c.data = CopyBytes(bytes);
  c.size = static_cast<uint32_t>(bytes.size());
  c.num_samples = static_cast<uint32_t>(samples.size());
  // Chunks stay in time order: a rewritten chunk replaces one in place
  // (DeleteRange), a cut one goes after every closed chunk.
  auto pos = std::lower_bound(closed_.begin(), closed_.end(), c.mint,
                              [](const ClosedChunk& x, int64_t t) { return x.mint < t; });
  closed_.insert(pos, c);
}

void Series::CutOpenChunk() {
  if (open_.num_samples() == 0) return;
  auto& samples = ScratchSamples();
  samples.reserve(open_.num_samples());
  DecodeChunk(open_.bytes(), &samples);
  if (!samples.empty()) AddClosed(samples);
  open_ = chunkenc::XorAppender();
}

void Series::AppendInOrder(int64_t t, double v, const ChunkOptions& opts) {
  const int n = open_.num_samples();
  if (n > 0) {
    bool cut = n >= opts.samples_per_chunk || open_.full();
    if (!cut && opts.chunk_range_ms > 0) {
      const int64_t boundary =
          (FloorDiv(open_mint_, opts.chunk_range_ms) + 1) * opts.chunk_range_ms;
      cut = t >= boundary;
    }
    if (cut) CutOpenChunk();
  }
  if (open_.num_samples() == 0) open_mint_ = t;
  open_.Append(t, v);
  last_v.store(std::bit_cast<uint64_t>(v), std::memory_order_relaxed);
  last_t.store(t, std::memory_order_release);
}

void Series::InsertOoo(int64_t t, double v) {
  if (!ooo_) ooo_ = std::make_unique<std::vector<Sample>>();
  auto pos = std::lower_bound(ooo_->begin(), ooo_->end(), t,
                              [](const Sample& s, int64_t x) { return s.t < x; });
  ooo_->insert(pos, Sample{t, v});
}

std::optional<uint64_t> Series::ValueBitsAt(int64_t t) const {
  auto find_in = [t](std::span<const uint8_t> bytes) -> std::optional<uint64_t> {
    auto it = chunkenc::NewIterator(bytes);
    if (it->Seek(t) && it->At().t == t) return std::bit_cast<uint64_t>(it->At().v);
    return std::nullopt;
  };
  if (ooo_) {
    auto pos = std::lower_bound(ooo_->begin(), ooo_->end(), t,
                                [](const Sample& s, int64_t x) { return s.t < x; });
    if (pos != ooo_->end() && pos->t == t) return std::bit_cast<uint64_t>(pos->v);
  }
  if (open_.num_samples() > 0 && t >= open_mint_) return find_in(open_.bytes());
  for (const auto& c : closed_) {
    if (t >= c.mint && t <= c.maxt) return find_in(c.bytes());
  }
  return std::nullopt;
}

int64_t Series::MinTime() const {
  int64_t m = kMaxTime;
  if (!closed_.empty())
    m = closed_.front().mint;
  else if (open_.num_samples() > 0)
    m = open_mint_;
  if (HasOoo()) m = std::min(m, ooo_->front().t);
  return m;
}

int64_t Series::MaxTime() const {
  int64_t m = kMinTime;
  if (open_.num_samples() > 0)
    m = last_t.load(std::memory_order_relaxed);
  else if (!closed_.empty())
    m = closed_.back().maxt;
  if (HasOoo()) m = std::max(m, ooo_->back().t);
  return m;
}

uint64_t Series::NumSamples() const {
  uint64_t n = static_cast<uint64_t>(open_.num_samples()) + NumOoo();
  for (const auto& c : closed_) n += c.num_samples;
  return n;
}

size_t Series::MemoryBytes() const {
  size_t bytes = AllocBytes(sizeof(Series) + label_ids().size_bytes());
  bytes += AllocBytes(open_.MemoryBytes() - sizeof(open_));
  bytes += AllocBytes(closed_.capacity() * sizeof(ClosedChunk));
  for (const auto& c : closed_) bytes += AllocBytes(c.size);
  if (ooo_) bytes += AllocBytes(sizeof(*ooo_)) + AllocBytes(ooo_->capacity() * sizeof(Sample));
  return bytes;
}

void Series::TruncateBefore(int64_t mint, std::vector<uint8_t*>* garbage) {
  size_t drop = 0;
  while (drop < closed_.size() && closed_[drop].maxt < mint) {
    garbage->push_back(closed_[drop].data);
    ++drop;
  }
  closed_.erase(closed_.begin(), closed_.begin() + static_cast<ptrdiff_t>(drop));
  if (closed_.empty() && closed_.capacity() > 0) closed_.shrink_to_fit();
  if (open_.num_samples() > 0 && last_t.load(std::memory_order_relaxed) < mint) {
    open_ = chunkenc::XorAppender();
  }
  if (ooo_) {
    auto end = std::lower_bound(ooo_->begin(), ooo_->end(), mint,
                                [](const Sample& s, int64_t x) { return s.t < x; });
    ooo_->erase(ooo_->begin(), end);
    if (ooo_->empty()) ooo_.reset();
  }
}

uint64_t Series::DeleteRange(int64_t mint, int64_t maxt, std::vector<uint8_t*>* garbage) {
  uint64_t deleted = 0;
  auto outside = [mint, maxt](const Sample& s) { return s.t < mint || s.t > maxt; };
  // Closed chunks: drop or rewrite the overlapping ones.
  std::vector<ClosedChunk> old;
  old.swap(closed_);
  std::vector<std::vector<Sample>> rewrites;
  for (auto& c : old) {
    if (c.maxt < mint || c.mint > maxt) {
      closed_.push_back(c);
      continue;
    }
    std::vector<Sample> kept;
    DecodeChunk(c.bytes(), &kept);
    const size_t before = kept.size();
    kept.erase(
        std::remove_if(kept.begin(), kept.end(), [&](const Sample& s) { return !outside(s); }),
        kept.end());
    deleted += before - kept.size();
    garbage->push_back(c.data);
    if (!kept.empty()) rewrites.push_back(std::move(kept));
  }
  for (const auto& r : rewrites) AddClosed(r);
  // The open chunk: what survives becomes a closed chunk, so a non-empty open
  // chunk always ends at last_t.
  if (open_.num_samples() > 0 && last_t.load(std::memory_order_relaxed) >= mint &&
      open_mint_ <= maxt) {
    std::vector<Sample> kept;
    DecodeChunk(open_.bytes(), &kept);
    const size_t before = kept.size();
    kept.erase(
        std::remove_if(kept.begin(), kept.end(), [&](const Sample& s) { return !outside(s); }),
        kept.end());
    deleted += before - kept.size();
    if (!kept.empty()) AddClosed(kept);
    open_ = chunkenc::XorAppender();
  }
  if (ooo_) {
    const size_t before = ooo_->size();
    ooo_->erase(
        std::remove_if(ooo_->begin(), ooo_->end(), [&](const Sample& s) { return !outside(s); }),
        ooo_->end());
    deleted += before - ooo_->size();
    if (ooo_->empty()) ooo_.reset();
  }
  return deleted;
}

void Series::Snapshot(int64_t mint, int64_t maxt, std::vector<ChunkView>* chunks,
                      std::vector<uint8_t>* open_copy, std::vector<Sample>* ooo) const {
  for (const auto& c : closed_) {
    if (c.maxt < mint) continue;
    if (c.mint > maxt) break;
    chunks->push_back(ChunkView{c.mint, c.maxt, c.bytes()});
  }
  if (open_.num_samples() > 0) {
    const int64_t open_maxt = last_t.load(std::memory_order_relaxed);
    if (open_maxt >= mint && open_mint_ <= maxt) {
      auto bytes = open_.bytes();
      open_copy->assign(bytes.begin(), bytes.end());
      chunks->push_back(ChunkView{open_mint_, open_maxt, *open_copy});
    }
  }
  if (ooo_) {
    auto lo = std::lower_bound(ooo_->begin(), ooo_->end(), mint,
                               [](const Sample& s, int64_t x) { return s.t < x; });
    for (auto it = lo; it != ooo_->end() && it->t <= maxt; ++it) ooo->push_back(*it);
  }
}

}  // namespace gpumon::tsdb::head
