// HttpResponse: what a handler fills in; the server frames and writes it.
//
// Contract:
// - status defaults to 200; headers are written as given, plus the
//   framing ones the server owns (Content-Length or Transfer-Encoding,
//   Connection, Date); a handler must not set those.
// - Either a fixed body (SetContent / body) or a streamed one (Stream):
//   the producer runs on the handler's worker thread after the handler
//   returns, calls `write` for each piece and returns true when done;
//   `write` returns false once the client is gone (the producer should
//   stop) and may block while more than the server's high-water mark of
//   output is waiting to be sent (back-pressure, bounded by the write
//   timeout). A streamed body goes out chunked to HTTP/1.1 clients.
// - A producer returning false, or throwing, aborts the response: the
//   connection is closed without the final chunk, so the client sees a
//   truncated message rather than a wrong one.
// - close_connection asks the server to close after this response (e.g.
//   a 401 whose request body was not read).
// - For HEAD requests the server sends the headers only.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "http/headers.h"

namespace gpumon::http {

using BodyWriter = std::function<bool(const char* data, size_t size)>;
using BodyProducer = std::function<bool(const BodyWriter& write)>;

struct HttpResponse {
  int status = 200;
  Headers headers;
  std::string body;
  BodyProducer stream;  // set: streamed body, `body` ignored
  bool close_connection = false;

  void SetHeader(std::string name, std::string value) {
    headers.Set(std::move(name), std::move(value));
  }
  void SetContent(std::string content, std::string_view content_type) {
    body = std::move(content);
    headers.Set("Content-Type", std::string(content_type));
  }
  void Stream(std::string_view content_type, BodyProducer producer) {
    headers.Set("Content-Type", std::string(content_type));
    stream = std::move(producer);
  }
};

// The reason phrase of a status code in Go's net/http wording, which
// Prometheus's error messages quote ("OK", "Request Entity Too Large", ...;
// "" if unknown).
std::string_view ReasonPhrase(int status);

// A JSON error body in the Prometheus API's shape:
// {"status":"error","errorType":<type>,"error":<message>}.
// Used by the server for the errors it answers itself (400, 413, 414, 431,
// 503) so API clients can always parse what they get.
void SetJsonError(HttpResponse& res, int status, std::string_view error_type,
                  std::string_view message);

}  // namespace gpumon::http
