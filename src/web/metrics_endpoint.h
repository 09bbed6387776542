// MetricsEndpoint: serves a /metrics body from a source that changes in
// generations (a new collection), rendering each (generation, format) once
// and gzip-compressing it once, so a scrape costs a cache look-up when
// nothing changed and never waits for collection.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "exposition/text_writer.h"

namespace gpumon::web {

class MetricsEndpoint {
 public:
  using GenerationFn = std::function<uint64_t()>;
  using RenderFn = std::function<void(exposition::Format, std::string*)>;

  MetricsEndpoint(GenerationFn generation, RenderFn render)
      : generation_(std::move(generation)), render_(std::move(render)) {}

  struct Body {
    std::shared_ptr<const std::string> bytes;
    exposition::Format format;
    bool gzip;
  };

  // Picks the format from Accept, compression from Accept-Encoding.
  Body Get(std::string_view accept, std::string_view accept_encoding);

 private:
  struct Cached {
    uint64_t generation = UINT64_MAX;
    std::shared_ptr<const std::string> plain;
    std::shared_ptr<const std::string> gzip;
  };
  GenerationFn generation_;
  RenderFn render_;
  std::mutex mutex_;
  Cached cache_[2];  // by Format
};

}  // namespace gpumon::web
