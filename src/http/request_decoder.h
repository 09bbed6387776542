// RequestDecoder: turns the bytes of an HTTP/1.x connection into requests,
// without doing any I/O (the connection and the fuzzer feed it).
//
// Contract:
// - The caller owns the byte buffer. Feed() is given every byte not yet
//   consumed (what earlier calls left, plus what arrived since) and reports
//   how many it consumed; the caller drops those from the front and keeps
//   the rest, so bytes pipelined after one request stay for the next.
//   Until the header is complete nothing is consumed (the header is
//   decoded in one piece once its end is in the buffer).
// - Stages: kNeedMore (feed more bytes); kHeadReady once per request, when
//   the head is decoded and checked and before any body byte is taken (the
//   connection routes, authorizes, then calls BeginBody() with the route's
//   body limit and feeds again); kComplete when the whole message is in
//   request(); kError with error_status()/error_message(), after which the
//   connection must answer and close (message boundaries are lost).
// - Checks beyond Beast's parser (RFC 9112): request line longer than
//   max_request_line_bytes → 414; a head (request line, fields and the
//   empty line ending them) longer than max_header_bytes or with more than
//   max_header_fields fields → 431;
//   obs-fold, a repeated or list-valued Content-Length, Content-Length with
//   Transfer-Encoding, Transfer-Encoding in HTTP/1.0, a final coding other
//   than chunked, a missing or repeated Host in HTTP/1.1, a target that is
//   not origin-, absolute- or (for OPTIONS) asterisk-form → 400; codings
//   other than chunked → 501; an HTTP major version other than 1 → 505;
//   an Expect other than 100-continue → 417; Content-Length or a chunked
//   body over the body limit → 413; a chunk line or trailer section longer
//   than max_header_bytes → 400.
// - Reset() starts the next request on the same connection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "http/request.h"

namespace gpumon::http {

struct DecoderLimits {
  size_t max_request_line_bytes = 64 * 1024;
  size_t max_header_bytes = 1024 * 1024;
  size_t max_header_fields = 128;
};

class RequestDecoder {
 public:
  enum class Stage { kNeedMore, kHeadReady, kComplete, kError };

  explicit RequestDecoder(DecoderLimits limits);
  ~RequestDecoder();
  RequestDecoder(const RequestDecoder&) = delete;
  RequestDecoder& operator=(const RequestDecoder&) = delete;

  Stage Feed(const char* data, size_t size, size_t* consumed);
  // After kHeadReady: the most body bytes this request may carry. Returns
  // kError (413) when the announced Content-Length is larger, else the
  // stage to continue from (kComplete at once for an empty body).
  Stage BeginBody(size_t max_body_bytes);
  void Reset();

  Stage stage() const { return stage_; }
  // Bytes of this request seen so far (leading empty lines excluded); the
  // connection uses it to tell an idle connection from a partial request.
  bool started() const { return started_; }
  HttpRequest& request() { return request_; }
  int error_status() const { return error_status_; }
  const std::string& error_message() const { return error_message_; }

  // Valid from kHeadReady on.
  bool keep_alive() const { return keep_alive_; }
  bool expects_continue() const { return expects_continue_; }
  bool chunked() const { return chunked_; }
  std::optional<uint64_t> content_length() const { return content_length_; }
  // A body was announced (Content-Length > 0 or chunked).
  bool has_body() const { return chunked_ || content_length_.value_or(0) > 0; }

 private:
  class Parser;
  friend class Parser;

  Stage Fail(int status, std::string message);
  Stage FeedHead(const char* data, size_t size, size_t* consumed);
  Stage FeedBody(const char* data, size_t size, size_t* consumed);
  bool CheckRequestLine(const char* line, size_t size);
  Stage CheckHead();

  DecoderLimits limits_;
  std::unique_ptr<Parser> parser_;
  Stage stage_ = Stage::kNeedMore;
  HttpRequest request_;
  bool started_ = false;
  // Scan of the head so far (nothing is consumed before it is complete,
  // so these offsets stay valid between calls).
  size_t scan_pos_ = 0;
  size_t line_start_ = 0;
  size_t fields_ = 0;
  bool line_done_ = false;  // request line seen
  bool head_done_ = false;
  bool keep_alive_ = true;
  bool expects_continue_ = false;
  bool chunked_ = false;
  std::optional<uint64_t> content_length_;
  size_t body_limit_ = 0;
  int error_status_ = 0;
  std::string error_message_;
  // Set by the parser callbacks when a check of ours fails.
  int pending_status_ = 0;
  std::string pending_message_;
};

}  // namespace gpumon::http
