// Test doubles for scrape tests: an appender recording committed samples.
#pragma once

#include <cmath>
#include <memory>
#include <mutex>
#include <vector>

#include "scrape/appender.h"
#include "tsdb/sample.h"

namespace gpumon::scrape::testing {

struct Recorded {
  Labels labels;
  int64_t t;
  double v;
};

// Shared store of committed samples; each appender buffers until Commit.
class Store {
 public:
  AppenderFactory Factory() {
    return [this]() -> std::unique_ptr<Appender> { return std::make_unique<App>(this); };
  }
  std::vector<Recorded> All() {
    std::lock_guard<std::mutex> lock(mu_);
    return samples_;
  }
  // Samples of the series whose ToString() equals `series`.
  std::vector<Recorded> Of(const std::string& series) {
    std::vector<Recorded> out;
    for (auto& r : All()) {
      if (r.labels.ToString() == series) out.push_back(r);
    }
    return out;
  }
  int commits() {
    std::lock_guard<std::mutex> lock(mu_);
    return commits_;
  }

 private:
  class App : public Appender {
   public:
    explicit App(Store* s) : s_(s) {}
    Status Append(const Labels& l, int64_t t, double v) override {
      buf_.push_back({l, t, v});
      return Status::Ok();
    }
    Status Commit() override {
      std::lock_guard<std::mutex> lock(s_->mu_);
      s_->samples_.insert(s_->samples_.end(), buf_.begin(), buf_.end());
      ++s_->commits_;
      buf_.clear();
      return Status::Ok();
    }
    void Rollback() override { buf_.clear(); }

   private:
    Store* s_;
    std::vector<Recorded> buf_;
  };
  std::mutex mu_;
  std::vector<Recorded> samples_;
  int commits_ = 0;
};

}  // namespace gpumon::scrape::testing
