#include "tsdb/downsample/series_spill.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "tsdb/record/varint.h"

namespace gpumon::tsdb::downsample {
namespace {

constexpr size_t kIoBuffer = 1 << 20;

std::string Errno() { return std::strerror(errno); }

}  // namespace

Result<std::unique_ptr<SpillWriter>> SpillWriter::Create(const std::string& path) {
  auto w = std::unique_ptr<SpillWriter>(new SpillWriter());
  w->path_ = path;
  w->f_ = std::fopen(path.c_str(), "wb");
  if (w->f_ == nullptr) return Status::Error("create " + path + ": " + Errno());
  std::setvbuf(w->f_, nullptr, _IOFBF, kIoBuffer);
  return w;
}

SpillWriter::~SpillWriter() {
  if (f_ != nullptr) std::fclose(f_);
}

Status SpillWriter::Add(const Labels& labels, std::span<const block::ChunkData> chunks) {
  if (f_ == nullptr) return Status::Error("spill " + path_ + ": closed");
  buf_.assign(8, 0);  // payload length, filled in below
  record::PutUvarint(&buf_, labels.size());
  for (const Label& l : labels) {
    record::PutString(&buf_, l.name);
    record::PutString(&buf_, l.value);
  }
  record::PutUvarint(&buf_, chunks.size());
  for (const block::ChunkData& c : chunks) {
    record::PutVarint(&buf_, c.mint);
    record::PutVarint(&buf_, c.maxt);
    record::PutString(
        &buf_, std::string_view(reinterpret_cast<const char*>(c.bytes.data()), c.bytes.size()));
  }
  record::PutFixed64Raw(buf_.data(), buf_.size() - 8);
  if (std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size()) {
    return Status::Error("write " + path_ + ": " + Errno());
  }
  return Status::Ok();
}

Status SpillWriter::Close() {
  if (f_ == nullptr) return Status::Ok();
  const bool ok = std::fclose(f_) == 0;
  f_ = nullptr;
  if (!ok) return Status::Error("close " + path_ + ": " + Errno());
  return Status::Ok();
}

Result<std::unique_ptr<SpillReader>> SpillReader::Open(const std::string& path) {
  auto r = std::unique_ptr<SpillReader>(new SpillReader());
  r->path_ = path;
  r->f_ = std::fopen(path.c_str(), "rb");
  if (r->f_ == nullptr) return Status::Error("open " + path + ": " + Errno());
  std::setvbuf(r->f_, nullptr, _IOFBF, kIoBuffer);
  return r;
}

SpillReader::~SpillReader() {
  if (f_ != nullptr) std::fclose(f_);
}

bool SpillReader::Fail(const std::string& why) {
  status_ = Status::Error("spill " + path_ + " at offset " + std::to_string(offset_) + ": " + why);
  return false;
}

bool SpillReader::Next() {
  if (!status_.ok() || f_ == nullptr) return false;
  uint8_t len_bytes[8];
  const size_t got = std::fread(len_bytes, 1, 8, f_);
  if (got == 0 && std::feof(f_)) return false;
  if (got != 8) return Fail("truncated record length");
  const uint64_t len = record::GetFixed64Raw(len_bytes);
  if (len > (uint64_t{1} << 40)) return Fail("implausible record length");
  buf_.resize(static_cast<size_t>(len));
  if (std::fread(buf_.data(), 1, buf_.size(), f_) != buf_.size()) return Fail("truncated record");
  record::ByteReader r(buf_);
  uint64_t n = 0;
  if (!r.GetUvarint(&n)) return Fail("bad label count");
  std::vector<Label> items;
  items.reserve(static_cast<size_t>(std::min<uint64_t>(n, 64)));
  for (uint64_t i = 0; i < n; ++i) {
    std::string_view name, value;
    if (!r.GetString(&name) || !r.GetString(&value)) return Fail("bad label");
    items.push_back({std::string(name), std::string(value)});
  }
  labels_ = Labels::FromSorted(std::move(items));
  if (!r.GetUvarint(&n)) return Fail("bad chunk count");
  chunks_.clear();
  for (uint64_t i = 0; i < n; ++i) {
    block::ChunkData c;
    std::string_view bytes;
    if (!r.GetVarint(&c.mint) || !r.GetVarint(&c.maxt) || !r.GetString(&bytes)) {
      return Fail("bad chunk");
    }
    c.bytes =
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    chunks_.push_back(c);
  }
  offset_ += 8 + len;
  return true;
}

}  // namespace gpumon::tsdb::downsample
