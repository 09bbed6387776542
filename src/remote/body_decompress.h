// Decompression of remote-write request bodies with a hard limit on the
// decoded size, checked before memory is committed to it.
//
// Contract:
// - DecompressBody(encoding, body, max_decoded_bytes): encoding is the
//   Content-Encoding value, trimmed; "" and "snappy" mean a snappy block
//   (the remote-write 1.0 default), "gzip" a gzip stream (RFC 1952) whose
//   content is the protobuf itself. Anything else is 415.
// - Snappy: the declared length in the block header is checked against the
//   limit (and against snappy's maximum expansion of the body) before the
//   output is allocated, so a tiny hostile body never costs more than
//   max_decoded_bytes. Gzip is inflated in steps into a buffer that grows
//   with the output actually produced and stops at the limit (a "zip bomb"
//   costs at most the limit). Concatenated gzip members are inflated in
//   turn, as gzip(1) does; trailing garbage is an error.
// - Errors: 413 when the decoded body would exceed the limit, 415 for an
//   unsupported encoding, 400 for corrupt input; message says which.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gpumon::remote {

struct DecompressResult {
  int status = 200;     // 200: ok; else the HTTP status to answer
  std::string message;  // set on error
  std::string data;     // the decoded body when ok
};

DecompressResult DecompressBody(std::string_view encoding, std::string_view body,
                                size_t max_decoded_bytes);

}  // namespace gpumon::remote
