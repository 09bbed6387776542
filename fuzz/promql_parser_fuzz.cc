// Fuzz target for the PromQL parser (queries arrive over HTTP): any byte
// string must parse or yield an error with a position inside the input —
// never a crash, hang or out-of-bounds access. A query that parses must
// print to text that parses again and prints the same (printer.h contract).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "promql/parser.h"
#include "promql/printer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;  // deep nesting is bounded by the parser; keep runs fast
  std::string_view query(reinterpret_cast<const char*>(data), size);
  gpumon::promql::ParseResult parsed = gpumon::promql::Parse(query);
  if (!parsed.ok()) {
    const auto& err = *parsed.error;
    if (err.pos.start < 0 || err.pos.start > static_cast<int>(size) + 1) std::abort();
    if (err.line < 1 || err.column < 1 || err.message.empty()) std::abort();
    return 0;
  }
  std::string printed = gpumon::promql::Print(*parsed.expr);
  gpumon::promql::ParseResult again = gpumon::promql::Parse(printed);
  if (!again.ok()) std::abort();
  if (gpumon::promql::Print(*again.expr) != printed) std::abort();
  return 0;
}
