#include "common/status.h"

namespace gpumon {

Status Status::WithContext(const std::string& context) const {
  if (ok()) return *this;
  return Status::Error(context + ": " + message_);
}

}  // namespace gpumon
