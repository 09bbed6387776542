#include "http/headers.h"

#include <algorithm>

namespace gpumon::http {
namespace {

char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

}  // namespace

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (Lower(a[i]) != Lower(b[i])) return false;
  }
  return true;
}

void Headers::Add(std::string name, std::string value) {
  fields_.emplace_back(std::move(name), std::move(value));
}

void Headers::Set(std::string name, std::string value) {
  // Replace the first field of that name in place (keeps its position in
  // the output), drop the others.
  auto it = std::find_if(fields_.begin(), fields_.end(),
                         [&](const Field& f) { return EqualsIgnoreCase(f.first, name); });
  if (it == fields_.end()) {
    fields_.emplace_back(std::move(name), std::move(value));
    return;
  }
  it->first = std::move(name);
  it->second = std::move(value);
  const size_t keep = static_cast<size_t>(it - fields_.begin());
  size_t out = keep + 1;
  for (size_t i = keep + 1; i < fields_.size(); ++i) {
    if (EqualsIgnoreCase(fields_[i].first, fields_[keep].first)) continue;
    if (out != i) fields_[out] = std::move(fields_[i]);
    ++out;
  }
  fields_.resize(out);
}

void Headers::Remove(std::string_view name) {
  std::erase_if(fields_, [&](const Field& f) { return EqualsIgnoreCase(f.first, name); });
}

std::string Headers::Get(std::string_view name) const {
  for (const Field& f : fields_) {
    if (EqualsIgnoreCase(f.first, name)) return f.second;
  }
  return "";
}

size_t Headers::Count(std::string_view name) const {
  return static_cast<size_t>(std::count_if(fields_.begin(), fields_.end(), [&](const Field& f) {
    return EqualsIgnoreCase(f.first, name);
  }));
}

}  // namespace gpumon::http
