// A small JSON reader and string quoting, enough for block metadata files.
//
// Contract: ParseJson accepts RFC 8259 JSON (one value, surrounding
// whitespace allowed) nested at most 64 deep and reports the byte offset of
// the first error. Integers without fraction or exponent are kept exactly as
// int64 (is_int); other numbers are doubles. Object keys keep file order;
// Find returns the first member with a key.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace gpumon::tsdb::block {

struct JsonMember;

struct JsonValue {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool boolean = false;
  bool is_int = false;
  int64_t integer = 0;
  double number = 0;
  std::string string;
  std::vector<JsonValue> array;
  std::vector<JsonMember> object;

  const JsonValue* Find(std::string_view key) const;
};

struct JsonMember {
  std::string key;
  JsonValue value;
};

Result<JsonValue> ParseJson(std::string_view text);

// `s` as a JSON string literal, quotes included.
std::string JsonQuote(std::string_view s);

}  // namespace gpumon::tsdb::block
