// The output side of the API's JSON encoding: a rapidjson output stream
// that hands its bytes to a sink in chunks of about `chunk_size`, and the
// Writer the encoders use.
//
// Contract: bytes reach the sink in order; Flush() (rapidjson calls it
// when a document ends) hands over whatever is buffered. Once the sink
// returns false (the client went away), further output is dropped and
// ok() turns false, so encoders can stop early.
#pragma once

#include <rapidjson/writer.h>

#include <functional>
#include <string>

namespace gpumon::web::api {

class ChunkedOutput {
 public:
  using Ch = char;
  using Sink = std::function<bool(const char* data, size_t size)>;

  explicit ChunkedOutput(Sink sink, size_t chunk_size = 64 * 1024);

  void Put(char c) {
    buf_.push_back(c);
    if (buf_.size() >= chunk_size_) Flush();
  }
  // Bulk append, for encoders that format many values themselves.
  void Append(const char* data, size_t size) {
    // Hand over first rather than outgrow the buffer's capacity.
    if (buf_.size() + size > buf_.capacity()) Flush();
    buf_.append(data, size);
    if (buf_.size() >= chunk_size_) Flush();
  }
  void Flush();
  bool ok() const { return ok_; }
  uint64_t bytes() const { return bytes_; }

 private:
  Sink sink_;
  size_t chunk_size_;
  std::string buf_;
  bool ok_ = true;
  uint64_t bytes_ = 0;
};

class JsonWriter : public rapidjson::Writer<ChunkedOutput> {
 public:
  explicit JsonWriter(ChunkedOutput& out) : rapidjson::Writer<ChunkedOutput>(out), out_(out) {}
  // False once the receiver is gone.
  bool ok() const { return out_.ok(); }
  bool Str(std::string_view s) {
    return String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  }
  bool Raw(std::string_view s, rapidjson::Type type) { return RawValue(s.data(), s.size(), type); }
  // Starts a value of `type` whose JSON text the caller then appends to
  // the returned output itself (the writer has already put the separator
  // it owes). Bulk encoders use it to bypass per-character output.
  ChunkedOutput& RawValueOutput(rapidjson::Type type) {
    RawValue("", 0, type);
    return out_;
  }

 private:
  ChunkedOutput& out_;
};

}  // namespace gpumon::web::api
