// Fuzz target for the exposition parser: any byte string, fed to both
// formats and to ParseToFamilies, must yield entries or an error naming a
// position — never a crash, hang, leak or out-of-bounds access.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "exposition/parser.h"

namespace {

using gpumon::exposition::Entry;
using gpumon::exposition::EntryKind;
using gpumon::exposition::Format;
using gpumon::exposition::Parser;
using gpumon::exposition::ParserOptions;

void Drain(std::string_view input, Format format, ParserOptions options) {
  Parser parser(input, format, options);
  Entry entry;
  // Each entry consumes at least one line, so more entries than bytes + 2
  // means the parser stopped making progress.
  for (size_t i = 0; i <= input.size() + 2; ++i) {
    gpumon::Status status = parser.Next(entry);
    if (!status.ok()) {
      if (status.message().rfind("line ", 0) != 0) std::abort();  // error lacks a position
      return;
    }
    if (entry.kind == EntryKind::kEof) return;
    for (const auto& label : entry.labels) {
      if (label.name.empty()) std::abort();
    }
  }
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  ParserOptions options;
  options.max_line_length = 4096;  // small limit so the fuzzer reaches it
  for (Format format : {Format::kText004, Format::kOpenMetrics1}) {
    Drain(input, format, options);
    Drain(input, format, ParserOptions{});
    (void)gpumon::exposition::ParseToFamilies(input, format, options);
  }
  return 0;
}
