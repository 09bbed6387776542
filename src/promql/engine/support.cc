// Shared helpers of the evaluator: error raising, the query context's
// deadline and sample accounting, label-set indexing and output assembly.
#include <algorithm>

#include "promql/engine/evaluator.h"
#include "promql/parser/quote.h"

namespace gpumon::promql::engine_internal {

void Fail(ErrorType type, std::string message) { throw EvalError{type, std::move(message)}; }

void QueryContext::CheckInterrupt(const char* stage) {
  if (cancel != nullptr && cancel->cancelled()) {
    Fail(ErrorType::kCanceled, std::string("query was canceled in ") + stage);
  }
  // >=: a zero timeout fails deterministically.
  if (std::chrono::steady_clock::now() >= deadline) {
    Fail(ErrorType::kTimeout, std::string("query timed out in ") + stage);
  }
}

void QueryContext::SetSamples(int64_t n) {
  NotePeak();
  current_samples = n;
  if (current_samples > opts.max_samples) FailTooManySamples();
  NotePeak();
}

void QueryContext::FailTooManySamples() {
  NotePeak();
  FailExec("query processing would load too many samples into memory in query execution");
}

int LabelsIndex::FindOrInsert(const Labels& l, bool* inserted) {
  const uint64_t h = l.Hash();
  auto [it, fresh] = head_.try_emplace(h, static_cast<int>(keys_.size()));
  if (!fresh) {
    int i = it->second;
    while (true) {
      if (keys_[i] == l) {
        if (inserted) *inserted = false;
        return i;
      }
      if (next_[i] < 0) break;
      i = next_[i];
    }
    next_[i] = static_cast<int>(keys_.size());
  }
  keys_.push_back(l);
  next_.push_back(-1);
  if (inserted) *inserted = true;
  return static_cast<int>(keys_.size()) - 1;
}

int LabelsIndex::Find(const Labels& l) const {
  auto it = head_.find(l.Hash());
  if (it == head_.end()) return -1;
  for (int i = it->second; i >= 0; i = next_[i]) {
    if (keys_[i] == l) return i;
  }
  return -1;
}

int SeriesCollector::IndexOf(const Labels& metric) {
  bool inserted = false;
  const int i = index_.FindOrInsert(metric, &inserted);
  if (inserted) {
    out_.push_back(Series{metric, {}});
    last_t_.push_back(INT64_MIN);
  }
  return i;
}

void SeriesCollector::AddAt(int i, int64_t t, double f) {
  if (last_t_[i] == t) FailExec("vector cannot contain metrics with the same labelset");
  ctx_.AddSample();
  last_t_[i] = t;
  auto& pts = out_[i].points;
  if (pts.empty()) pts.reserve(ReserveFor(num_steps_));
  pts.push_back(FPoint{t, f});
}

Matrix SeriesCollector::Take() {
  std::erase_if(out_, [](const Series& s) { return s.points.empty(); });
  return std::move(out_);
}

Labels DropMetricName(const Labels& l) {
  if (!l.Has(kMetricName)) return l;
  std::vector<Label> items;
  items.reserve(l.size());
  for (const auto& x : l) {
    if (x.name != kMetricName) items.push_back(x);
  }
  return Labels::FromSorted(std::move(items));
}

Labels MatchLabels(const Labels& l, bool on, const std::vector<std::string>& names) {
  std::vector<Label> items;
  for (const auto& x : l) {
    const bool listed = std::find(names.begin(), names.end(), x.name) != names.end();
    if (on ? listed : (!listed && x.name != kMetricName)) items.push_back(x);
  }
  return Labels::FromSorted(std::move(items));
}

bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return false;
    }
    i += n;
  }
  return true;
}

std::string GoQuote(std::string_view s) { return ::gpumon::promql::internal::GoQuote(s); }

std::string LabelsString(const Labels& l) {
  std::string out = "{";
  bool first = true;
  for (const auto& x : l) {
    if (!first) out += ", ";
    first = false;
    out += x.name;
    out += "=";
    out += GoQuote(x.value);
  }
  out += "}";
  return out;
}

int64_t TotalPoints(const Matrix& m) {
  int64_t n = 0;
  for (const auto& s : m) n += static_cast<int64_t>(s.points.size());
  return n;
}

Matrix MergeSameLabelset(Matrix m) {
  if (m.size() <= 1) return m;
  LabelsIndex idx;
  Matrix out;
  out.reserve(m.size());
  for (auto& s : m) {
    bool inserted = false;
    const int i = idx.FindOrInsert(s.metric, &inserted);
    if (inserted) {
      out.push_back(std::move(s));
      continue;
    }
    // Merge when the two series never have a point at the same time.
    auto& dst = out[i].points;
    std::vector<FPoint> merged;
    merged.reserve(dst.size() + s.points.size());
    size_t a = 0, b = 0;
    while (a < dst.size() || b < s.points.size()) {
      if (b == s.points.size() || (a < dst.size() && dst[a].t < s.points[b].t)) {
        merged.push_back(dst[a++]);
      } else if (a == dst.size() || s.points[b].t < dst[a].t) {
        merged.push_back(s.points[b++]);
      } else {
        FailExec("vector cannot contain metrics with the same labelset");
      }
    }
    dst = std::move(merged);
  }
  return out;
}

}  // namespace gpumon::promql::engine_internal
