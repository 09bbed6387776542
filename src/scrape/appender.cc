#include "scrape/appender.h"

namespace gpumon::scrape {
namespace {

class HeadAdapter : public Appender {
 public:
  explicit HeadAdapter(std::unique_ptr<tsdb::head::HeadAppender> app) : app_(std::move(app)) {}
  Status Append(const Labels& labels, int64_t t_ms, double v) override {
    auto r = app_->Append(0, labels, t_ms, v);
    return r.ok() ? Status::Ok() : r.status();
  }
  Result<uint64_t> AppendRef(uint64_t ref, const Labels& labels, int64_t t_ms, double v) override {
    return app_->Append(ref, labels, t_ms, v);
  }
  void Prefetch(uint64_t ref) override { app_->Prefetch(ref); }
  Status Commit() override { return app_->Commit(); }
  void Rollback() override { app_->Rollback(); }

 private:
  std::unique_ptr<tsdb::head::HeadAppender> app_;
};

}  // namespace

AppenderFactory HeadAppenderFactory(
    std::function<std::unique_ptr<tsdb::head::HeadAppender>()> make) {
  return [make = std::move(make)]() -> std::unique_ptr<Appender> {
    return std::make_unique<HeadAdapter>(make());
  };
}

}  // namespace gpumon::scrape
