#include "exposition/text_writer.h"

#include <charconv>
#include <cmath>

namespace gpumon::exposition {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
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

void AppendTimestamp(int64_t ms, Format format, std::string* out) {
  out->push_back(' ');
  char buf[32];
  if (format == Format::kText004) {
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

void AppendEscapedHelp(std::string_view help, Format format, std::string* out) {
  for (char c : help) {
    switch (c) {
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '"':
        if (format == Format::kOpenMetrics1) {
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

void AppendFamilies(const std::vector<MetricFamily>& families, Format format, std::string* out) {
  const bool om = format == Format::kOpenMetrics1;
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

void FinishText(Format format, std::string* out) {
  if (format == Format::kOpenMetrics1) out->append("# EOF\n");
}

}  // namespace gpumon::exposition
