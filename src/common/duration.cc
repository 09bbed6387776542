#include "common/duration.h"

#include <cstdint>
#include <utility>

namespace gpumon {
namespace {

struct Unit {
  std::string_view suffix;
  int64_t ms;
};
// Longest suffix first so "ms" is not read as "m".
constexpr Unit kUnits[] = {{"y", 365LL * 24 * 3600 * 1000},
                           {"w", 7LL * 24 * 3600 * 1000},
                           {"d", 24LL * 3600 * 1000},
                           {"h", 3600LL * 1000},
                           {"m", 60LL * 1000},
                           {"s", 1000},
                           {"ms", 1}};

}  // namespace

Result<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  auto bad = [&](const char* why) {
    return Status::Error("invalid duration \"" + std::string(text) + "\": " + why);
  };
  if (text.empty()) return bad("empty");
  int64_t total = 0;
  int last_rank = -1;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] < '0' || text[i] > '9') return bad("expected a number");
    int64_t n = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      n = n * 10 + (text[i] - '0');
      if (n > (int64_t{1} << 50)) return bad("too large");
      ++i;
    }
    size_t j = i;
    while (j < text.size() && (text[j] < '0' || text[j] > '9')) ++j;
    std::string_view suffix = text.substr(i, j - i);
    int rank = -1;
    for (int u = 0; u < static_cast<int>(std::size(kUnits)); ++u) {
      if (kUnits[u].suffix == suffix) rank = u;
    }
    if (rank < 0) return bad("unknown unit (use ms, s, m, h, d, w, y)");
    if (rank <= last_rank) return bad("units must be in decreasing order");
    last_rank = rank;
    // n < 2^50 and the largest unit < 2^35 ms: check before multiplying.
    if (n > (INT64_MAX - total) / kUnits[rank].ms) return bad("too large");
    total += n * kUnits[rank].ms;
    i = j;
  }
  return std::chrono::milliseconds(total);
}

std::string FormatDuration(std::chrono::milliseconds d) {
  int64_t ms = d.count();
  if (ms == 0) return "0s";
  std::string out;
  for (const auto& u : kUnits) {
    if (ms >= u.ms) {
      out += std::to_string(ms / u.ms);
      out += u.suffix;
      ms %= u.ms;
    }
  }
  return out;
}

}  // namespace gpumon
