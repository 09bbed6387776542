// Text helpers shared by the simulator's spec parsers (fleet specs,
// fault schedules, scenarios): the pieces of "a:b=c;d" style text.
// Private to the simulator; not a general string library.
//
// Contract:
// - Trim drops leading and trailing spaces and tabs (nothing else).
// - Split cuts at every `sep` and keeps empty pieces: "a;;b;" gives
//   "a", "", "b", "" and "" gives one empty piece.
// - ParseUint reads a non-negative decimal integer (digits only: no sign,
//   blanks or prefix) no larger than `max` (itself below 2^59); -1 when
//   empty, malformed or larger.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace gpumon::sim {

std::string_view Trim(std::string_view s);
std::vector<std::string_view> Split(std::string_view s, char sep);
int64_t ParseUint(std::string_view s, int64_t max);

}  // namespace gpumon::sim
