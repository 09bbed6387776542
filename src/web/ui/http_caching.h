// HTTP validators and cache policy for the UI's files (RFC 9110 8.8.3,
// 13.1.2; RFC 9111 5.2).
//
// Contract:
// - StrongEtag(token, gzip) is the quoted entity tag of one representation:
//   "\"<token>\"" for the identity bytes, "\"<token>-gzip\"" for the gzip
//   ones (a strong ETag must differ between encodings).
// - IfNoneMatchHits(header, etag) applies If-None-Match with the weak
//   comparison RFC 9110 prescribes for it: true when the header is "*" or
//   lists a tag whose opaque part (W/ ignored) equals etag's.
// - IsContentHashedName(path) says whether a file's name carries a content
//   hash, as esbuild's [name]-[hash] entry and chunk names do: the last
//   '-' of the base name is followed by 8 or more characters of [A-Z0-9]
//   and then a '.' (the extension). Such a file never changes under that name, so it
//   may be cached for a year without revalidation.
#pragma once

#include <string>
#include <string_view>

namespace gpumon::web::ui {

inline constexpr std::string_view kImmutableCacheControl = "public, max-age=31536000, immutable";
// Cached but revalidated on every use (the page and files without a hash).
inline constexpr std::string_view kRevalidateCacheControl = "no-cache";

std::string StrongEtag(std::string_view token, bool gzip);
bool IfNoneMatchHits(std::string_view if_none_match, std::string_view etag);
bool IsContentHashedName(std::string_view path);

}  // namespace gpumon::web::ui
