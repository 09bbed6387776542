// Headers: the header fields of one HTTP message, in arrival order, with
// case-insensitive name lookup (RFC 9110 5.1).
//
// Contract: Add() appends (repeats kept, as they arrived); Set() replaces
// every field of that name with one; Get() returns the first value of a
// name or "" when absent; Count() says how many fields have the name (the
// decoder uses it to reject repeated framing fields). Names keep the case
// they were given; values are stored as given (the decoder trims optional
// whitespace before they get here).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpumon::http {

bool EqualsIgnoreCase(std::string_view a, std::string_view b);

class Headers {
 public:
  using Field = std::pair<std::string, std::string>;

  void Add(std::string name, std::string value);
  void Set(std::string name, std::string value);
  void Remove(std::string_view name);
  std::string Get(std::string_view name) const;
  bool Has(std::string_view name) const { return Count(name) > 0; }
  size_t Count(std::string_view name) const;
  const std::vector<Field>& fields() const { return fields_; }
  size_t size() const { return fields_.size(); }
  bool empty() const { return fields_.empty(); }

 private:
  std::vector<Field> fields_;
};

}  // namespace gpumon::http
