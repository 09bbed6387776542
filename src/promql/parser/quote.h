// Go-compatible string quoting used by the PromQL lexer, parser and
// printer: PromQL strings use Go's escape rules, and Prometheus's messages
// and printed queries use Go's %q formatting.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gpumon::promql::internal {

inline constexpr uint32_t kRuneError = 0xFFFD;

// Decodes the UTF-8 rune at s[pos]; sets *width (1 for invalid bytes, which
// yield kRuneError).
uint32_t DecodeRune(std::string_view s, size_t pos, int* width);
void AppendRune(std::string& out, uint32_t r);

// strconv.Quote: "..." with Go escapes.
std::string GoQuote(std::string_view s);
// strconv.QuoteRune: '.' with Go escapes.
std::string GoQuoteRune(uint32_t r);
// fmt's %#U: U+0027 '''.
std::string GoRuneDescription(uint32_t r);

// Removes the quotes ("", '' or ``) of a lexed PromQL string and resolves
// its escapes. False (with *error set) for a malformed string.
bool Unquote(std::string_view quoted, std::string* out, std::string* error);

}  // namespace gpumon::promql::internal
