#include "promql/value.h"

#include <algorithm>

namespace gpumon::promql {
namespace {

void AddUnique(std::vector<std::string>& list, std::string msg) {
  if (std::find(list.begin(), list.end(), msg) == list.end()) list.push_back(std::move(msg));
}

}  // namespace

void Annotations::AddWarning(std::string msg) { AddUnique(warnings, std::move(msg)); }
void Annotations::AddInfo(std::string msg) { AddUnique(infos, std::move(msg)); }

void Annotations::Merge(const Annotations& other) {
  for (const auto& w : other.warnings) AddWarning(w);
  for (const auto& i : other.infos) AddInfo(i);
}

}  // namespace gpumon::promql
