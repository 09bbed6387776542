#include "web/gzip.h"

#include <zlib.h>

#include <cstdlib>
#include <stdexcept>

namespace gpumon::web {

std::string GzipCompress(std::string_view data, int level) {
  z_stream zs{};
  // 16 + MAX_WBITS selects the gzip wrapper.
  if (deflateInit2(&zs, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw std::runtime_error("deflateInit2 failed");
  }
  std::string out;
  out.resize(deflateBound(&zs, static_cast<uLong>(data.size())));
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) throw std::runtime_error("deflate did not finish");
  return out;
}

bool AcceptsGzip(std::string_view header) {
  size_t start = 0;
  while (start < header.size()) {
    size_t end = header.find(',', start);
    if (end == std::string_view::npos) end = header.size();
    std::string_view item = header.substr(start, end - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    if (item.starts_with("gzip") || item.starts_with("*")) {
      auto q = item.find("q=");
      if (q == std::string_view::npos) return true;
      return std::strtod(std::string(item.substr(q + 2)).c_str(), nullptr) > 0;
    }
    start = end + 1;
  }
  return false;
}

}  // namespace gpumon::web
