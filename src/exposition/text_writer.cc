#include "exposition/text_writer.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace gpumon::exposition {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Parses the q parameter following a media range ("...;q=0.5"); 1 if absent.
double QualityOf(std::string_view media_range) {
  auto pos = media_range.find("q=");
  if (pos == std::string_view::npos) return 1.0;
  std::string q(media_range.substr(pos + 2));
  return std::strtod(q.c_str(), nullptr);
}

void AppendLabels(const std::vector<Label>& labels, std::string* out) {
  if (labels.empty()) return;
  out->push_back('{');
  bool first = true;
  for (const auto& l : labels) {
    if (!first) out->push_back(',');
    first = false;
    out->append(l.name);
    out->append("=\"");
    AppendEscapedLabelValue(l.value, out);
    out->push_back('"');
  }
  out->push_back('}');
}

void AppendTimestamp(int64_t ms, TextFormat format, std::string* out) {
  out->push_back(' ');
  char buf[32];
  if (format == TextFormat::kPrometheus004) {
    auto r = std::to_chars(buf, buf + sizeof buf, ms);
    out->append(buf, r.ptr);
    return;
  }
  // OpenMetrics timestamps are seconds; write them exactly as decimal.
  int64_t secs = ms / 1000;
  int64_t frac = ms % 1000;
  if (frac < 0) {
    frac += 1000;
    secs -= 1;
  }
  auto r = std::to_chars(buf, buf + sizeof buf, secs);
  out->append(buf, r.ptr);
  if (frac != 0) {
    char f[5] = {'.', static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
                 static_cast<char>('0' + frac % 10), 0};
    out->append(f);
  }
}

}  // namespace

std::string_view ContentTypeOf(TextFormat format) {
  return format == TextFormat::kOpenMetrics100
             ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
             : "text/plain; version=0.0.4; charset=utf-8";
}

TextFormat NegotiateTextFormat(std::string_view accept) {
  double best_om = -1, best_text = -1;
  size_t start = 0;
  while (start <= accept.size()) {
    size_t end = accept.find(',', start);
    if (end == std::string_view::npos) end = accept.size();
    std::string_view range = accept.substr(start, end - start);
    while (!range.empty() && range.front() == ' ') range.remove_prefix(1);
    double q = QualityOf(range);
    if (range.starts_with("application/openmetrics-text")) {
      // Only version 1.0.0 (or unversioned) is what we write.
      if (range.find("version=") == std::string_view::npos ||
          range.find("version=1.0.0") != std::string_view::npos) {
        best_om = std::max(best_om, q);
      }
    } else if (range.starts_with("text/plain") || range.starts_with("*/*")) {
      best_text = std::max(best_text, q);
    }
    start = end + 1;
  }
  return best_om > 0 && best_om >= best_text ? TextFormat::kOpenMetrics100
                                             : TextFormat::kPrometheus004;
}

void AppendEscapedLabelValue(std::string_view value, std::string* out) {
  for (char c : value) {
    switch (c) {
      case '\\':
        out->append("\\\\");
        break;
      case '"':
        out->append("\\\"");
        break;
      case '\n':
        out->append("\\n");
        break;
      default:
        out->push_back(c);
    }
  }
}

void AppendEscapedHelp(std::string_view help, TextFormat format, std::string* out) {
  for (char c : help) {
    switch (c) {
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '"':
        if (format == TextFormat::kOpenMetrics100) {
          out->append("\\\"");
        } else {
          out->push_back(c);
        }
        break;
      default:
        out->push_back(c);
    }
  }
}

void AppendSampleValue(double value, std::string* out) {
  if (std::isnan(value)) {
    out->append("NaN");
  } else if (std::isinf(value)) {
    out->append(value > 0 ? "+Inf" : "-Inf");
  } else {
    char buf[32];
    auto r = std::to_chars(buf, buf + sizeof buf, value);
    out->append(buf, r.ptr);
  }
}

void AppendFamilies(const std::vector<MetricFamily>& families, TextFormat format,
                    std::string* out) {
  const bool om = format == TextFormat::kOpenMetrics100;
  for (const auto& f : families) {
    if (f.samples.empty()) continue;
    std::string_view family = f.name;
    MetricType type = f.type;
    if (om) {
      if (type == MetricType::kCounter) {
        if (EndsWith(family, "_total")) {
          family.remove_suffix(6);
        } else {
          type = MetricType::kUnknown;
        }
      } else if (type == MetricType::kInfo) {
        if (EndsWith(family, "_info")) {
          family.remove_suffix(5);
        } else {
          type = MetricType::kGauge;
        }
      }
    } else if (type == MetricType::kInfo || type == MetricType::kStateSet) {
      type = MetricType::kGauge;
    }
    if (!f.help.empty()) {
      out->append("# HELP ");
      out->append(family);
      out->push_back(' ');
      AppendEscapedHelp(f.help, format, out);
      out->push_back('\n');
    }
    out->append("# TYPE ");
    out->append(family);
    out->push_back(' ');
    out->append(type == MetricType::kUnknown && !om ? "untyped" : MetricTypeName(type));
    out->push_back('\n');
    if (om && !f.unit.empty() && EndsWith(family, "_" + f.unit)) {
      out->append("# UNIT ");
      out->append(family);
      out->push_back(' ');
      out->append(f.unit);
      out->push_back('\n');
    }
    for (const auto& s : f.samples) {
      out->append(f.name);
      AppendLabels(s.labels, out);
      out->push_back(' ');
      AppendSampleValue(s.value, out);
      if (s.timestamp_ms) AppendTimestamp(*s.timestamp_ms, format, out);
      out->push_back('\n');
    }
  }
}

void FinishText(TextFormat format, std::string* out) {
  if (format == TextFormat::kOpenMetrics100) out->append("# EOF\n");
}

}  // namespace gpumon::exposition
