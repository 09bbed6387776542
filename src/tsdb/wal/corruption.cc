#include "tsdb/wal/corruption.h"

namespace gpumon::tsdb::wal {

std::string Corruption::ToString() const {
  return "wal corruption in " + path + " at offset " + std::to_string(offset) + ": " + reason;
}

std::string TornTail::ToString() const {
  return "wal torn tail in " + path + " at offset " + std::to_string(offset) + " (" +
         std::to_string(dropped_bytes) + " bytes dropped): " + reason;
}

}  // namespace gpumon::tsdb::wal
