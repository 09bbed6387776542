#include "exposition/format.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>

namespace gpumon::exposition {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool StartsWithIgnoreCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  }
  return true;
}

// The q parameter of a media range ("...;q=0.5"); 1 when absent.
double QualityOf(std::string_view media_range) {
  auto pos = media_range.find("q=");
  if (pos == std::string_view::npos) return 1.0;
  return std::strtod(std::string(media_range.substr(pos + 2)).c_str(), nullptr);
}

}  // namespace

Format FormatFromContentType(std::string_view content_type) {
  std::string_view media = Trim(content_type.substr(0, content_type.find(';')));
  if (media.size() == std::string_view("application/openmetrics-text").size() &&
      StartsWithIgnoreCase(media, "application/openmetrics-text")) {
    return Format::kOpenMetrics1;
  }
  return Format::kText004;
}

std::string_view ContentTypeOf(Format format) {
  return format == Format::kOpenMetrics1
             ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
             : "text/plain; version=0.0.4; charset=utf-8";
}

Format NegotiateFormat(std::string_view accept) {
  double best_om = -1, best_text = -1;
  size_t start = 0;
  while (start <= accept.size()) {
    size_t end = accept.find(',', start);
    if (end == std::string_view::npos) end = accept.size();
    std::string_view range = Trim(accept.substr(start, end - start));
    double q = QualityOf(range);
    if (StartsWithIgnoreCase(range, "application/openmetrics-text")) {
      if (range.find("version=") == std::string_view::npos ||
          range.find("version=1.0.0") != std::string_view::npos) {
        best_om = std::max(best_om, q);
      }
    } else if (StartsWithIgnoreCase(range, "text/plain") || range.starts_with("*/*")) {
      best_text = std::max(best_text, q);
    }
    start = end + 1;
  }
  return best_om > 0 && best_om >= best_text ? Format::kOpenMetrics1 : Format::kText004;
}

const char* FormatName(Format format) {
  return format == Format::kOpenMetrics1 ? "openmetrics-1.0" : "text-0.0.4";
}

}  // namespace gpumon::exposition
