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

void Discard(uint8_t* old, std::vector<uint8_t*>* garbage) {
  if (old != nullptr) garbage->push_back(old);
}

ClosedChunks::Entry EntryOf(std::span<const Sample> samples, std::span<const uint8_t> bytes) {
  return ClosedChunks::Entry{samples.front().t, samples.back().t,
                             static_cast<uint32_t>(samples.size()), bytes};
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

Series::~Series() = default;

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

void Series::CutOpenChunk(std::vector<uint8_t*>* garbage) {
  if (open_.num_samples() == 0) return;
  auto& samples = ScratchSamples();
  samples.reserve(open_.num_samples());
  DecodeChunk(open_.bytes(), &samples);
  if (!samples.empty()) {
    std::vector<uint8_t> bytes = chunkenc::EncodeBest(samples);
    Discard(closed_.Append(EntryOf(samples, bytes)), garbage);
  }
  // A fresh appender rather than a cleared one: the open chunk is half full
  // on average, so keeping the largest buffer it ever needed would waste
  // about half of it in every series.
  open_ = chunkenc::XorAppender();
}

void Series::AppendInOrder(int64_t t, double v, const ChunkOptions& opts,
                           std::vector<uint8_t*>* garbage) {
  const int n = open_.num_samples();
  if (n > 0) {
    bool cut = n >= opts.samples_per_chunk || open_.full();
    if (!cut && opts.chunk_range_ms > 0) {
      const int64_t boundary =
          (FloorDiv(open_mint_, opts.chunk_range_ms) + 1) * opts.chunk_range_ms;
      cut = t >= boundary;
    }
    if (cut) CutOpenChunk(garbage);
  }
  if (open_.num_samples() == 0) open_mint_ = t;
  open_.Append(t, v);
  last_v.store(std::bit_cast<uint64_t>(v), std::memory_order_relaxed);
  last_t.store(t, std::memory_order_release);
  has_last.store(true, std::memory_order_release);
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
  for (auto it = closed_.begin(); !it.Done(); it.Advance()) {
    const ClosedChunks::Entry c = it.Get();
    if (t >= c.mint && t <= c.maxt) return find_in(c.bytes);
    if (c.mint > t) break;
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
  for (auto it = closed_.begin(); !it.Done(); it.Advance()) n += it.Get().num_samples;
  return n;
}

size_t Series::MemoryBytes() const {
  size_t bytes = AllocBytes(sizeof(Series) + label_ids().size_bytes());
  bytes += AllocBytes(open_.MemoryBytes() - sizeof(open_));
  bytes += AllocBytes(closed_.buffer_bytes());
  if (ooo_) bytes += AllocBytes(sizeof(*ooo_)) + AllocBytes(ooo_->capacity() * sizeof(Sample));
  return bytes;
}

void Series::TruncateBefore(int64_t mint, std::vector<uint8_t*>* garbage) {
  if (!closed_.empty() && closed_.front().maxt < mint) {
    std::vector<ClosedChunks::Entry> kept;
    for (auto it = closed_.begin(); !it.Done(); it.Advance()) {
      if (it.Get().maxt >= mint) kept.push_back(it.Get());
    }
    Discard(closed_.Assign(kept), garbage);
  }
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
  // Keeps the samples outside [mint, maxt]; counts the others.
  auto filter = [&](std::vector<Sample>* samples) {
    const size_t before = samples->size();
    std::erase_if(*samples, [&](const Sample& s) { return !outside(s); });
    deleted += before - samples->size();
  };
  // Closed chunks: keep the untouched ones, re-encode what survives of the
  // overlapping ones. The open chunk's survivors become a closed chunk too,
  // so a non-empty open chunk always ends at last_t.
  std::vector<ClosedChunks::Entry> entries;
  std::vector<std::vector<uint8_t>> encoded;  // owns rewritten chunk bytes
  std::vector<std::vector<Sample>> runs;
  bool changed = false;
  for (auto it = closed_.begin(); !it.Done(); it.Advance()) {
    const ClosedChunks::Entry c = it.Get();
    if (c.maxt < mint || c.mint > maxt) {
      entries.push_back(c);
      continue;
    }
    changed = true;
    std::vector<Sample> kept;
    DecodeChunk(c.bytes, &kept);
    filter(&kept);
    if (!kept.empty()) {
      entries.push_back(ClosedChunks::Entry{});  // filled below
      runs.push_back(std::move(kept));
    }
  }
  if (open_.num_samples() > 0 && last_t.load(std::memory_order_relaxed) >= mint &&
      open_mint_ <= maxt) {
    changed = true;
    std::vector<Sample> kept;
    DecodeChunk(open_.bytes(), &kept);
    filter(&kept);
    if (!kept.empty()) {
      entries.push_back(ClosedChunks::Entry{});
      runs.push_back(std::move(kept));
    }
    open_ = chunkenc::XorAppender();
  }
  if (changed) {
    // Rewritten chunks keep their place: each lies between its untouched
    // neighbours, and the open chunk's survivors come last.
    encoded.reserve(runs.size());
    size_t r = 0;
    for (auto& e : entries) {
      if (e.bytes.data() != nullptr) continue;
      encoded.push_back(chunkenc::EncodeBest(runs[r]));
      e = EntryOf(runs[r], encoded.back());
      ++r;
    }
    Discard(closed_.Assign(entries), garbage);
  }
  if (ooo_) {
    std::vector<Sample> kept(ooo_->begin(), ooo_->end());
    filter(&kept);
    ooo_->assign(kept.begin(), kept.end());
    if (ooo_->empty()) ooo_.reset();
  }
  return deleted;
}

void Series::Snapshot(int64_t mint, int64_t maxt, std::vector<ChunkView>* chunks,
                      std::vector<uint8_t>* open_copy, std::vector<Sample>* ooo) const {
  for (auto it = closed_.begin(); !it.Done(); it.Advance()) {
    const ClosedChunks::Entry c = it.Get();
    if (c.maxt < mint) continue;
    if (c.mint > maxt) break;
    chunks->push_back(ChunkView{c.mint, c.maxt, c.bytes});
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
