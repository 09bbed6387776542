// A small command-line flag parser: "--name value" and "--name=value".
// Unknown flags and missing values are errors naming the flag.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"

namespace gpumon::cli {

class Flags {
 public:
  // `known` maps flag name (without dashes) to whether it takes a value.
  static Result<Flags> Parse(const std::vector<std::string>& args,
                             const std::map<std::string, bool>& known);

  // The last value given (a flag may be repeated).
  std::optional<std::string> Get(const std::string& name) const;
  // Every value given, in order.
  std::vector<std::string> GetAll(const std::string& name) const;
  bool Has(const std::string& name) const { return values_.count(name) > 0; }
  Result<long> GetInt(const std::string& name, long fallback, long min, long max) const;

 private:
  std::map<std::string, std::string> values_;
  std::map<std::string, std::vector<std::string>> all_;
};

}  // namespace gpumon::cli
