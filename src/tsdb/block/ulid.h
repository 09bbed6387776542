// Block identifiers: ULIDs (26 characters of Crockford base32 holding a 48-bit
// millisecond creation time and 80 random bits), as Prometheus names block
// directories. Lexical order of ids is creation order across milliseconds.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gpumon::tsdb::block {

// A new id stamped with `unix_ms` (the current time by default).
std::string NewUlid();
std::string NewUlid(uint64_t unix_ms);
// Whether `s` has the shape of a ULID (26 base32 characters, upper case).
bool IsUlid(std::string_view s);

}  // namespace gpumon::tsdb::block
