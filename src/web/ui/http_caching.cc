#include "web/ui/http_caching.h"

#include <cctype>

namespace gpumon::web::ui {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The opaque-tag of an entity-tag, W/ prefix dropped ("" if malformed).
std::string_view OpaqueTag(std::string_view tag) {
  if (tag.starts_with("W/")) tag.remove_prefix(2);
  if (tag.size() < 2 || tag.front() != '"' || tag.back() != '"') return {};
  return tag;
}

}  // namespace

std::string StrongEtag(std::string_view token, bool gzip) {
  std::string etag = "\"";
  etag.append(token);
  if (gzip) etag.append("-gzip");
  etag.push_back('"');
  return etag;
}

bool IfNoneMatchHits(std::string_view if_none_match, std::string_view etag) {
  const std::string_view want = OpaqueTag(etag);
  if (want.empty()) return false;
  if (Trim(if_none_match) == "*") return true;
  // Entity tags hold no commas (RFC 9110 8.8.3: etagc excludes ','), so the
  // list splits on them.
  while (!if_none_match.empty()) {
    const size_t comma = if_none_match.find(',');
    const std::string_view item = Trim(if_none_match.substr(0, comma));
    if (!item.empty() && OpaqueTag(item) == want) return true;
    if (comma == std::string_view::npos) break;
    if_none_match.remove_prefix(comma + 1);
  }
  return false;
}

bool IsContentHashedName(std::string_view path) {
  const size_t slash = path.rfind('/');
  const std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  const size_t dash = base.rfind('-');
  if (dash == std::string_view::npos) return false;
  const std::string_view rest = base.substr(dash + 1);
  const size_t dot = rest.find('.');
  if (dot == std::string_view::npos) return false;  // the hash precedes an extension
  const std::string_view hash = rest.substr(0, dot);
  if (hash.size() < 8) return false;
  for (char c : hash) {
    if (!std::isupper(static_cast<unsigned char>(c)) &&
        !std::isdigit(static_cast<unsigned char>(c))) {
      return false;
    }
  }
  return true;
}

}  // namespace gpumon::web::ui
