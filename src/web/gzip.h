// gzip (RFC 1952) compression of a whole buffer, via zlib.
#pragma once

#include <string>
#include <string_view>

namespace gpumon::web {

std::string GzipCompress(std::string_view data, int level = 6);

// True when an Accept-Encoding header value accepts gzip (q > 0).
bool AcceptsGzip(std::string_view accept_encoding);

}  // namespace gpumon::web
