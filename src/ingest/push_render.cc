// Text rendering of pushed families and the store's self-metrics.
#include <string>
#include <vector>

#include "exposition/text_writer.h"
#include "ingest/push_store.h"

namespace gpumon::ingest {
namespace {

using exposition::Format;
using exposition::MetricFamily;
using exposition::MetricType;

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

void AppendLabels(const std::vector<Label>& labels, std::string* out) {
  if (labels.empty()) return;
  out->push_back('{');
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i) out->push_back(',');
    out->append(labels[i].name);
    out->append("=\"");
    exposition::AppendEscapedLabelValue(labels[i].value, out);
    out->push_back('"');
  }
  out->push_back('}');
}

}  // namespace

void AppendStoredFamiliesText(const std::vector<PushStore::StoredFamily>& families, Format format,
                              std::string* out) {
  const bool om = format == Format::kOpenMetrics1;
  for (const auto& f : families) {
    if (f.series == 0 && f.components.empty()) continue;
    std::string_view name = f.name;
    MetricType type = f.type;
    if (om) {
      if (type == MetricType::kCounter) {
        if (EndsWith(name, "_total")) {
          name.remove_suffix(6);
        } else {
          type = MetricType::kUnknown;
        }
      } else if (type == MetricType::kInfo) {
        if (EndsWith(name, "_info")) {
          name.remove_suffix(5);
        } else {
          type = MetricType::kGauge;
        }
      }
    } else if (type == MetricType::kInfo || type == MetricType::kStateSet ||
               type == MetricType::kGaugeHistogram) {
      // Text 0.0.4 knows none of these; gauge histograms become untyped
      // there, as Prometheus' own OpenMetrics-to-text conversion does.
      type = type == MetricType::kGaugeHistogram ? MetricType::kUnknown : MetricType::kGauge;
    }
    if (!f.help.empty()) {
      out->append("# HELP ");
      out->append(name);
      out->push_back(' ');
      exposition::AppendEscapedHelp(f.help, format, out);
      out->push_back('\n');
    }
    out->append("# TYPE ");
    out->append(name);
    out->push_back(' ');
    out->append(type == MetricType::kUnknown && !om ? "untyped" : exposition::MetricTypeName(type));
    out->push_back('\n');
    if (om && !f.unit.empty() && EndsWith(name, "_" + f.unit)) {
      out->append("# UNIT ");
      out->append(name);
      out->push_back(' ');
      out->append(f.unit);
      out->push_back('\n');
    }
    // Text 0.0.4 has no _created samples: they go out as their own gauge
    // family after the others, as Prometheus client libraries write them.
    auto is_created = [&](const MetricFamily& c) {
      return !om && c.name != f.name && EndsWith(c.name, "_created") &&
             (f.type == MetricType::kCounter || f.type == MetricType::kHistogram ||
              f.type == MetricType::kSummary || f.type == MetricType::kGaugeHistogram);
    };
    auto write_samples = [&](const MetricFamily& c) {
      for (const auto& s : c.samples) {
        out->append(c.name);
        AppendLabels(s.labels, out);
        out->push_back(' ');
        exposition::AppendSampleValue(s.value, out);
        out->push_back('\n');
      }
    };
    bool created = false;
    for (const auto& c : f.components) {
      if (is_created(c)) {
        created = true;
      } else {
        write_samples(c);
      }
    }
    if (!created) continue;
    bool header = false;
    for (const auto& c : f.components) {
      if (!is_created(c)) continue;
      if (!header) {
        out->append("# TYPE ");
        out->append(c.name);
        out->append(" gauge\n");
        header = true;
      }
      write_samples(c);
    }
  }
}

void AppendPushStoreMetrics(const PushStoreStats& stats, std::vector<MetricFamily>* out) {
  out->push_back(MetricFamily{"gpumon_push_groups",
                              MetricType::kGauge,
                              "Groups of job metrics pushed to this agent and held.",
                              "",
                              {{{}, static_cast<double>(stats.groups), {}}}});
  out->push_back(MetricFamily{"gpumon_push_series",
                              MetricType::kGauge,
                              "Pushed series held by this agent.",
                              "",
                              {{{}, static_cast<double>(stats.series), {}}}});
  out->push_back(
      MetricFamily{"gpumon_pushes_total",
                   MetricType::kCounter,
                   "Pushes received (Pushgateway and OTLP), by result.",
                   "",
                   {{{{"result", "accepted"}}, static_cast<double>(stats.pushes_accepted), {}},
                    {{{"result", "rejected"}}, static_cast<double>(stats.pushes_rejected), {}}}});
  out->push_back(MetricFamily{"gpumon_push_groups_expired_total",
                              MetricType::kCounter,
                              "Pushed groups removed after no push for the configured expiry.",
                              "",
                              {{{}, static_cast<double>(stats.groups_expired), {}}}});
}

}  // namespace gpumon::ingest
