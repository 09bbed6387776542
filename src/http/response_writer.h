// Response serialization: the status line and header block the server
// writes for an HttpResponse, and the chunked-coding framing pieces. No
// I/O here, so it stays out of the Asio translation units' compile time.
//
// Contract: SerializeHead() writes handler and default headers (handler's
// win on equal names) except the framing fields the server owns
// (Content-Length, Transfer-Encoding, Connection, Date), which it adds
// itself per `framing`. A field whose name is not a token or whose value
// holds CR, LF or NUL is dropped rather than written, so a handler echoing
// request data into a header cannot split the response.
#pragma once

#include <cstddef>
#include <string>

#include "http/headers.h"
#include "http/response.h"

namespace gpumon::http {

enum class BodyFraming {
  kNone,     // no body by status (1xx, 204, 304): no length field either
  kLength,   // Content-Length
  kChunked,  // Transfer-Encoding: chunked (HTTP/1.1 streams)
  kClose,    // delimited by closing the connection (HTTP/1.0 streams)
};

// True when a response with this status never carries a body.
bool StatusForbidsBody(int status);

std::string SerializeHead(const HttpResponse& res, const Headers& default_headers,
                          BodyFraming framing, size_t content_length, bool keep_alive,
                          bool http10_client);

// "1a2b\r\n": the line starting a chunk of `size` bytes.
std::string ChunkLine(size_t size);
inline constexpr char kLastChunk[] = "0\r\n\r\n";

// The current time as an IMF-fixdate (RFC 9110 5.6.7), for Date.
std::string HttpDate();

}  // namespace gpumon::http
