// Registry: the server's own metrics (counters, gauges, histograms) and
// their rendering in the Prometheus exposition formats, for /metrics and
// for the server's scrape of itself.
//
// Contract:
// - A family has a name, a HELP text and fixed label names, given when it
//   is added. Adding checks them: metric names match
//   [a-zA-Z_:][a-zA-Z0-9_:]*, label names [a-zA-Z_][a-zA-Z0-9_]* and do not
//   start with "__", HELP is not empty, counter names end in "_total",
//   histograms do not use the label "le" and have finite, strictly
//   increasing bucket bounds (+Inf is implicit). A second family of the same
//   name is an error. Errors are values; nothing is added on error.
// - Instruments (Counter, Gauge, Histogram) are lock-free to update and live
//   as long as the registry; Family::With() finds or creates the child for
//   a tuple of label values (positional; missing values are empty, extra
//   values are ignored, so a mistake never takes the server down). Cache
//   the returned reference on hot paths: With() takes a lock.
// - Callback families compute their samples at render time, for values
//   owned by other modules. Pre-collect hooks run once per render, before
//   any callback, so one expensive read (a Stats() call) can feed several
//   families. Hooks and callbacks run under the render lock, one render at
//   a time; they must not call back into the registry.
// - Render writes families sorted by name, children sorted by label
//   values; a family without samples is left out. Histograms are written
//   with cumulative _bucket series (le last), _sum and _count, where _count
//   always equals the +Inf bucket. A callback returning a label tuple twice
//   keeps the first.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "exposition/format.h"

namespace gpumon::selfmon {

class Counter {
 public:
  // Negative increments are ignored: a counter only goes up.
  void Inc(double v = 1) {
    if (v > 0) value_.fetch_add(v, std::memory_order_relaxed);
  }
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

class Gauge {
 public:
  void Set(double v) { value_.store(v, std::memory_order_relaxed); }
  void Add(double v) { value_.fetch_add(v, std::memory_order_relaxed); }
  void Inc() { Add(1); }
  void Dec() { Add(-1); }
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

class Histogram {
 public:
  // `bounds`: finite, strictly increasing upper bounds (checked by the
  // registry); must outlive the histogram.
  explicit Histogram(const std::vector<double>* bounds);
  void Observe(double v);

  struct Snapshot {
    std::vector<uint64_t> cumulative;  // per bound, then +Inf
    double sum = 0;
    uint64_t count = 0;  // == cumulative.back()
  };
  Snapshot Read() const;

 private:
  const std::vector<double>* bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;  // bounds_->size() + 1
  std::atomic<double> sum_{0};
};

// Bucket bounds: `count` bounds start, start*factor, ...
std::vector<double> ExponentialBuckets(double start, double factor, int count);
// Prometheus client default: .005 .01 .025 .05 .1 .25 .5 1 2.5 5 10.
std::vector<double> DefaultBuckets();

// A family of instruments of one kind, one per tuple of label values.
template <typename T>
class Family {
 public:
  T& With(std::initializer_list<std::string_view> values) {
    return Child(std::vector<std::string_view>(values));
  }
  T& With(const std::vector<std::string>& values) {
    return Child(std::vector<std::string_view>(values.begin(), values.end()));
  }
  // The child without label values (for families without labels).
  T& Get() { return Child({}); }

 private:
  friend class Registry;
  template <typename... Args>
  Family(size_t arity, Args... args)
      : arity_(arity), make_([=] { return std::make_unique<T>(args...); }) {}
  T& Child(std::vector<std::string_view> values) {
    std::vector<std::string> key(arity_);
    for (size_t i = 0; i < arity_ && i < values.size(); ++i) key[i] = std::string(values[i]);
    std::lock_guard<std::mutex> lock(mu_);
    auto& slot = children_[std::move(key)];
    if (!slot) slot = make_();
    return *slot;
  }

  const size_t arity_;
  std::function<std::unique_ptr<T>()> make_;
  mutable std::mutex mu_;
  std::map<std::vector<std::string>, std::unique_ptr<T>> children_;
};

using CounterFamily = Family<Counter>;
using GaugeFamily = Family<Gauge>;
using HistogramFamily = Family<Histogram>;

// One sample of a callback family.
struct CallbackSample {
  std::vector<std::string> label_values;  // positional, as the family's label names
  double value = 0;
};
using CallbackFn = std::function<void(std::vector<CallbackSample>* out)>;

class Registry {
 public:
  Registry();
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  Result<CounterFamily*> AddCounter(std::string name, std::string help,
                                    std::vector<std::string> label_names = {});
  Result<GaugeFamily*> AddGauge(std::string name, std::string help,
                                std::vector<std::string> label_names = {});
  Result<HistogramFamily*> AddHistogram(std::string name, std::string help,
                                        std::vector<std::string> label_names,
                                        std::vector<double> bounds);

  // Families whose samples `fn` produces at render time.
  Status AddCounterFunc(std::string name, std::string help, std::vector<std::string> label_names,
                        CallbackFn fn);
  Status AddGaugeFunc(std::string name, std::string help, std::vector<std::string> label_names,
                      CallbackFn fn);
  // Shorthands for one unlabelled value.
  Status AddCounterFunc(std::string name, std::string help, std::function<double()> fn);
  Status AddGaugeFunc(std::string name, std::string help, std::function<double()> fn);

  // Runs before the callbacks of every render.
  void AddPreCollectHook(std::function<void()> hook);

  // Appends the exposition of every family (and OpenMetrics' "# EOF").
  void Render(exposition::Format format, std::string* out) const;
  std::string Render(exposition::Format format = exposition::Format::kText004) const;

 private:
  struct Entry;
  Status Add(std::unique_ptr<Entry> entry);

  mutable std::mutex mu_;  // families_, hooks_; held for a whole render
  std::map<std::string, std::unique_ptr<Entry>> families_;
  std::vector<std::function<void()>> hooks_;
};

}  // namespace gpumon::selfmon
