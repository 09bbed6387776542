// gpumon promqltest: placeholder until the command lands.
#include <iostream>

#include "cli/commands.h"

namespace gpumon::cli {

int RunPromqlTest(const std::vector<std::string>& /*args*/) {
  std::cerr << "gpumon promqltest: not available in this build\n";
  return 2;
}

}  // namespace gpumon::cli
