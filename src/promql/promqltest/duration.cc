#include "promql/promqltest/duration.h"

#include <array>
#include <limits>
#include <string>

namespace gpumon::promql::promqltest {

namespace {

struct Unit {
  std::string_view name;
  int64_t ms;
};

// In the order they must appear.
constexpr std::array<Unit, 7> kUnits = {{
    {"y", 365LL * 24 * 3600 * 1000},
    {"w", 7LL * 24 * 3600 * 1000},
    {"d", 24LL * 3600 * 1000},
    {"h", 3600LL * 1000},
    {"m", 60LL * 1000},
    {"s", 1000},
    {"ms", 1},
}};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

Result<int64_t> ParseScriptDuration(std::string_view text) {
  auto invalid = [&] {
    return Status::Error("not a valid duration string: \"" + std::string(text) + "\"");
  };
  if (text == "0") return int64_t{0};
  if (text.empty()) return Status::Error("empty duration string");
  int64_t total = 0;
  size_t next_unit = 0;  // units before this index are used up
  size_t i = 0;
  while (i < text.size()) {
    if (!IsDigit(text[i])) return invalid();
    int64_t count = 0;
    while (i < text.size() && IsDigit(text[i])) {
      if (count > (std::numeric_limits<int64_t>::max() - 9) / 10) {
        return Status::Error("duration out of range: \"" + std::string(text) + "\"");
      }
      count = count * 10 + (text[i] - '0');
      ++i;
    }
    size_t end = i;
    while (end < text.size() && !IsDigit(text[end])) ++end;
    std::string_view unit = text.substr(i, end - i);
    size_t u = next_unit;
    while (u < kUnits.size() && kUnits[u].name != unit) ++u;
    if (u == kUnits.size()) return invalid();
    if (count > std::numeric_limits<int64_t>::max() / kUnits[u].ms ||
        total > std::numeric_limits<int64_t>::max() - count * kUnits[u].ms) {
      return Status::Error("duration out of range: \"" + std::string(text) + "\"");
    }
    total += count * kUnits[u].ms;
    next_unit = u + 1;
    i = end;
  }
  return total;
}

}  // namespace gpumon::promql::promqltest
