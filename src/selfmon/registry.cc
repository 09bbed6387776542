#include "selfmon/registry.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "exposition/metric_family.h"
#include "exposition/text_writer.h"

namespace gpumon::selfmon {
namespace {

bool ValidMetricName(std::string_view s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

bool ValidLabelName(std::string_view s) {
  if (s.empty() || s.starts_with("__")) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

std::vector<exposition::Label> LabelPairs(const std::vector<std::string>& names,
                                          const std::vector<std::string>& values) {
  std::vector<exposition::Label> out;
  out.reserve(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    out.push_back({names[i], i < values.size() ? values[i] : std::string()});
  }
  return out;
}

void AppendSeries(std::string_view name, const std::vector<exposition::Label>& labels,
                  const exposition::Label* extra, double value, std::string* out) {
  out->append(name);
  if (!labels.empty() || extra) {
    out->push_back('{');
    bool first = true;
    auto add = [&](const exposition::Label& l) {
      if (!first) out->push_back(',');
      first = false;
      out->append(l.name);
      out->append("=\"");
      exposition::AppendEscapedLabelValue(l.value, out);
      out->push_back('"');
    };
    for (const auto& l : labels) add(l);
    if (extra) add(*extra);
    out->push_back('}');
  }
  out->push_back(' ');
  exposition::AppendSampleValue(value, out);
  out->push_back('\n');
}

}  // namespace

Histogram::Histogram(const std::vector<double>* bounds)
    : bounds_(bounds), counts_(new std::atomic<uint64_t>[bounds->size() + 1]) {
  for (size_t i = 0; i <= bounds_->size(); ++i) counts_[i].store(0, std::memory_order_relaxed);
}

void Histogram::Observe(double v) {
  // le is inclusive: v lands in the first bucket whose bound is >= v. NaN
  // counts in +Inf only, as Prometheus's client does.
  size_t i = std::lower_bound(bounds_->begin(), bounds_->end(), v) - bounds_->begin();
  if (std::isnan(v)) i = bounds_->size();
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(v, std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::Read() const {
  Snapshot s;
  s.cumulative.resize(bounds_->size() + 1);
  uint64_t total = 0;
  for (size_t i = 0; i <= bounds_->size(); ++i) {
    total += counts_[i].load(std::memory_order_relaxed);
    s.cumulative[i] = total;
  }
  s.count = total;
  s.sum = sum_.load(std::memory_order_relaxed);
  return s;
}

std::vector<double> ExponentialBuckets(double start, double factor, int count) {
  std::vector<double> out;
  double b = start;
  for (int i = 0; i < count; ++i, b *= factor) out.push_back(b);
  return out;
}

std::vector<double> DefaultBuckets() { return {.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}; }

enum class Kind { kCounter, kGauge, kHistogram, kCounterFunc, kGaugeFunc };

struct Registry::Entry {
  Kind kind;
  std::string name;
  std::string help;
  std::vector<std::string> label_names;
  std::vector<double> bounds;  // histograms; the children point at it
  std::unique_ptr<CounterFamily> counters;
  std::unique_ptr<GaugeFamily> gauges;
  std::unique_ptr<HistogramFamily> histograms;
  CallbackFn fn;
};

Registry::Registry() = default;
Registry::~Registry() = default;

Status Registry::Add(std::unique_ptr<Entry> e) {
  const std::string what = "metric family \"" + e->name + "\"";
  if (!ValidMetricName(e->name)) return Status::Error(what + ": invalid metric name");
  if (e->help.empty()) return Status::Error(what + ": HELP text is required");
  const bool counter = e->kind == Kind::kCounter || e->kind == Kind::kCounterFunc;
  if (counter && !e->name.ends_with("_total")) {
    return Status::Error(what + ": counter names must end in \"_total\"");
  }
  std::set<std::string_view> seen;
  for (const auto& l : e->label_names) {
    if (!ValidLabelName(l)) return Status::Error(what + ": invalid label name \"" + l + "\"");
    if (!seen.insert(l).second) return Status::Error(what + ": duplicate label name \"" + l + "\"");
    if (e->kind == Kind::kHistogram && l == "le") {
      return Status::Error(what + ": label name \"le\" is reserved for histogram buckets");
    }
  }
  if (e->kind == Kind::kHistogram) {
    if (e->bounds.empty()) return Status::Error(what + ": a histogram needs bucket bounds");
    for (size_t i = 0; i < e->bounds.size(); ++i) {
      if (!std::isfinite(e->bounds[i])) {
        return Status::Error(what + ": bucket bounds must be finite (+Inf is implicit)");
      }
      if (i > 0 && !(e->bounds[i] > e->bounds[i - 1])) {
        return Status::Error(what + ": bucket bounds must be strictly increasing");
      }
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (families_.count(e->name)) return Status::Error(what + " is already registered");
  families_[e->name] = std::move(e);
  return Status::Ok();
}

Result<CounterFamily*> Registry::AddCounter(std::string name, std::string help,
                                            std::vector<std::string> label_names) {
  auto e = std::make_unique<Entry>();
  e->kind = Kind::kCounter;
  e->name = std::move(name);
  e->help = std::move(help);
  e->label_names = std::move(label_names);
  e->counters.reset(new CounterFamily(e->label_names.size()));
  CounterFamily* f = e->counters.get();
  if (Status s = Add(std::move(e)); !s.ok()) return s;
  return f;
}

Result<GaugeFamily*> Registry::AddGauge(std::string name, std::string help,
                                        std::vector<std::string> label_names) {
  auto e = std::make_unique<Entry>();
  e->kind = Kind::kGauge;
  e->name = std::move(name);
  e->help = std::move(help);
  e->label_names = std::move(label_names);
  e->gauges.reset(new GaugeFamily(e->label_names.size()));
  GaugeFamily* f = e->gauges.get();
  if (Status s = Add(std::move(e)); !s.ok()) return s;
  return f;
}

Result<HistogramFamily*> Registry::AddHistogram(std::string name, std::string help,
                                                std::vector<std::string> label_names,
                                                std::vector<double> bounds) {
  auto e = std::make_unique<Entry>();
  e->kind = Kind::kHistogram;
  e->name = std::move(name);
  e->help = std::move(help);
  e->label_names = std::move(label_names);
  e->bounds = std::move(bounds);
  const std::vector<double>* b = &e->bounds;
  e->histograms.reset(new HistogramFamily(e->label_names.size(), b));
  HistogramFamily* f = e->histograms.get();
  if (Status s = Add(std::move(e)); !s.ok()) return s;
  return f;
}

Status Registry::AddCounterFunc(std::string name, std::string help,
                                std::vector<std::string> label_names, CallbackFn fn) {
  auto e = std::make_unique<Entry>();
  e->kind = Kind::kCounterFunc;
  e->name = std::move(name);
  e->help = std::move(help);
  e->label_names = std::move(label_names);
  e->fn = std::move(fn);
  return Add(std::move(e));
}

Status Registry::AddGaugeFunc(std::string name, std::string help,
                              std::vector<std::string> label_names, CallbackFn fn) {
  auto e = std::make_unique<Entry>();
  e->kind = Kind::kGaugeFunc;
  e->name = std::move(name);
  e->help = std::move(help);
  e->label_names = std::move(label_names);
  e->fn = std::move(fn);
  return Add(std::move(e));
}

Status Registry::AddCounterFunc(std::string name, std::string help, std::function<double()> fn) {
  return AddCounterFunc(std::move(name), std::move(help), {},
                        [fn = std::move(fn)](std::vector<CallbackSample>* out) {
                          out->push_back({{}, fn()});
                        });
}

Status Registry::AddGaugeFunc(std::string name, std::string help, std::function<double()> fn) {
  return AddGaugeFunc(std::move(name), std::move(help), {},
                      [fn = std::move(fn)](std::vector<CallbackSample>* out) {
                        out->push_back({{}, fn()});
                      });
}

void Registry::AddPreCollectHook(std::function<void()> hook) {
  std::lock_guard<std::mutex> lock(mu_);
  hooks_.push_back(std::move(hook));
}

void Registry::Render(exposition::Format format, std::string* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& hook : hooks_) hook();
  for (const auto& [name, e] : families_) {
    if (e->kind == Kind::kHistogram) {
      // Snapshot the children first, so that a family without any is
      // left out entirely.
      std::vector<std::pair<std::vector<std::string>, Histogram::Snapshot>> children;
      {
        std::lock_guard<std::mutex> fl(e->histograms->mu_);
        for (const auto& [values, h] : e->histograms->children_) {
          children.emplace_back(values, h->Read());
        }
      }
      if (children.empty()) continue;
      out->append("# HELP ");
      out->append(e->name);
      out->push_back(' ');
      exposition::AppendEscapedHelp(e->help, format, out);
      out->append("\n# TYPE ");
      out->append(e->name);
      out->append(" histogram\n");
      if (format == exposition::Format::kOpenMetrics1 && e->name.ends_with("_seconds")) {
        out->append("# UNIT " + e->name + " seconds\n");
      }
      const std::string bucket = e->name + "_bucket";
      const std::string sum = e->name + "_sum";
      const std::string count = e->name + "_count";
      for (const auto& [values, snap] : children) {
        auto labels = LabelPairs(e->label_names, values);
        for (size_t i = 0; i < snap.cumulative.size(); ++i) {
          exposition::Label le{"le", ""};
          if (i < e->bounds.size()) {
            exposition::AppendSampleValue(e->bounds[i], &le.value);
          } else {
            le.value = "+Inf";
          }
          AppendSeries(bucket, labels, &le, static_cast<double>(snap.cumulative[i]), out);
        }
        AppendSeries(sum, labels, nullptr, snap.sum, out);
        AppendSeries(count, labels, nullptr, static_cast<double>(snap.count), out);
      }
      continue;
    }
    exposition::MetricFamily mf;
    mf.name = e->name;
    mf.help = e->help;
    const bool counter = e->kind == Kind::kCounter || e->kind == Kind::kCounterFunc;
    mf.type = counter ? exposition::MetricType::kCounter : exposition::MetricType::kGauge;
    if (e->name.ends_with("_seconds") || e->name.ends_with("_seconds_total")) {
      mf.unit = "seconds";
    } else if (e->name.ends_with("_bytes") || e->name.ends_with("_bytes_total")) {
      mf.unit = "bytes";
    }
    auto add = [&](const std::vector<std::string>& values, double v) {
      mf.samples.push_back({LabelPairs(e->label_names, values), v, std::nullopt});
    };
    if (e->kind == Kind::kCounter) {
      std::lock_guard<std::mutex> fl(e->counters->mu_);
      for (const auto& [values, c] : e->counters->children_) add(values, c->Value());
    } else if (e->kind == Kind::kGauge) {
      std::lock_guard<std::mutex> fl(e->gauges->mu_);
      for (const auto& [values, g] : e->gauges->children_) add(values, g->Value());
    } else {
      std::vector<CallbackSample> samples;
      e->fn(&samples);
      // Sorted by label values like the other families; duplicates keep
      // the first (stable sort).
      for (auto& s : samples) s.label_values.resize(e->label_names.size());
      std::stable_sort(samples.begin(), samples.end(),
                       [](const CallbackSample& a, const CallbackSample& b) {
                         return a.label_values < b.label_values;
                       });
      for (size_t i = 0; i < samples.size(); ++i) {
        if (i > 0 && samples[i].label_values == samples[i - 1].label_values) continue;
        add(samples[i].label_values, samples[i].value);
      }
    }
    exposition::AppendFamilies({mf}, format, out);
  }
  exposition::FinishText(format, out);
}

std::string Registry::Render(exposition::Format format) const {
  std::string out;
  Render(format, &out);
  return out;
}

}  // namespace gpumon::selfmon
