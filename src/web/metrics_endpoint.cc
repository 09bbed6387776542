#include "web/metrics_endpoint.h"

#include "web/gzip.h"

namespace gpumon::web {

MetricsEndpoint::Body MetricsEndpoint::Get(std::string_view accept,
                                           std::string_view accept_encoding) {
  auto format = exposition::NegotiateFormat(accept);
  bool gzip = AcceptsGzip(accept_encoding);
  uint64_t gen = generation_();
  std::lock_guard<std::mutex> lock(mutex_);
  Cached& c = cache_[static_cast<int>(format)];
  if (c.generation != gen || !c.plain) {
    auto text = std::make_shared<std::string>();
    render_(format, text.get());
    c.plain = std::move(text);
    c.gzip.reset();
    c.generation = gen;
  }
  if (!gzip) return Body{c.plain, format, false};
  // Level 1: a third of level 6's CPU for a body ~15% larger.
  if (!c.gzip) c.gzip = std::make_shared<const std::string>(GzipCompress(*c.plain, 1));
  return Body{c.gzip, format, true};
}

}  // namespace gpumon::web
