// Shell-style path patterns (*, ?, [...]) expanded against the file system,
// as Go's filepath.Glob does for Prometheus's rule_files and file_sd_configs.
//
// Contract: GlobPaths returns the existing paths that match `pattern`,
// sorted; a pattern without wildcards gives itself only if that path
// exists. Folders that cannot be read are skipped; no match gives an empty
// list, never an error.
#pragma once

#include <string>
#include <vector>

namespace gpumon {

std::vector<std::string> GlobPaths(const std::string& pattern);

}  // namespace gpumon
