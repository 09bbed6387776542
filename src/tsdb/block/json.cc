#include "tsdb/block/json.h"

#include <cstdlib>
#include <limits>

namespace gpumon::tsdb::block {
namespace {

constexpr int kMaxDepth = 64;

class Parser {
 public:
  explicit Parser(std::string_view t) : t_(t) {}

  Status Parse(JsonValue* out) {
    Status s = Value(out, 0);
    if (!s.ok()) return s;
    SkipSpace();
    if (p_ != t_.size()) return Error("trailing characters");
    return Status::Ok();
  }

 private:
  Status Error(const std::string& what) const {
    return Status::Error("JSON at offset " + std::to_string(p_) + ": " + what);
  }
  void SkipSpace() {
    while (p_ < t_.size() &&
           (t_[p_] == ' ' || t_[p_] == '\t' || t_[p_] == '\n' || t_[p_] == '\r')) {
      ++p_;
    }
  }
  bool Literal(std::string_view word) {
    if (t_.substr(p_, word.size()) != word) return false;
    p_ += word.size();
    return true;
  }

  Status Value(JsonValue* out, int depth) {
    if (depth > kMaxDepth) return Error("nested too deeply");
    SkipSpace();
    if (p_ >= t_.size()) return Error("unexpected end");
    char c = t_[p_];
    if (c == '{') return Object(out, depth);
    if (c == '[') return Array(out, depth);
    if (c == '"') {
      out->type = JsonValue::Type::kString;
      return String(&out->string);
    }
    if (c == '-' || (c >= '0' && c <= '9')) return Number(out);
    if (Literal("true")) {
      out->type = JsonValue::Type::kBool;
      out->boolean = true;
      return Status::Ok();
    }
    if (Literal("false")) {
      out->type = JsonValue::Type::kBool;
      return Status::Ok();
    }
    if (Literal("null")) return Status::Ok();
    return Error("unexpected character");
  }

  Status Object(JsonValue* out, int depth) {
    out->type = JsonValue::Type::kObject;
    ++p_;
    SkipSpace();
    if (p_ < t_.size() && t_[p_] == '}') {
      ++p_;
      return Status::Ok();
    }
    while (true) {
      SkipSpace();
      if (p_ >= t_.size() || t_[p_] != '"') return Error("expected a member name");
      std::string key;
      Status s = String(&key);
      if (!s.ok()) return s;
      SkipSpace();
      if (p_ >= t_.size() || t_[p_] != ':') return Error("expected ':'");
      ++p_;
      JsonValue v;
      s = Value(&v, depth + 1);
      if (!s.ok()) return s;
      out->object.push_back({std::move(key), std::move(v)});
      SkipSpace();
      if (p_ < t_.size() && t_[p_] == ',') {
        ++p_;
        continue;
      }
      if (p_ < t_.size() && t_[p_] == '}') {
        ++p_;
        return Status::Ok();
      }
      return Error("expected ',' or '}'");
    }
  }

  Status Array(JsonValue* out, int depth) {
    out->type = JsonValue::Type::kArray;
    ++p_;
    SkipSpace();
    if (p_ < t_.size() && t_[p_] == ']') {
      ++p_;
      return Status::Ok();
    }
    while (true) {
      JsonValue v;
      Status s = Value(&v, depth + 1);
      if (!s.ok()) return s;
      out->array.push_back(std::move(v));
      SkipSpace();
      if (p_ < t_.size() && t_[p_] == ',') {
        ++p_;
        continue;
      }
      if (p_ < t_.size() && t_[p_] == ']') {
        ++p_;
        return Status::Ok();
      }
      return Error("expected ',' or ']'");
    }
  }

  static void PutUtf8(std::string* out, uint32_t cp) {
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  bool Hex4(uint32_t* v) {
    if (t_.size() - p_ < 4) return false;
    *v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = t_[p_++];
      *v <<= 4;
      if (c >= '0' && c <= '9') {
        *v |= static_cast<uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        *v |= static_cast<uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        *v |= static_cast<uint32_t>(c - 'A' + 10);
      } else {
        return false;
      }
    }
    return true;
  }

  Status String(std::string* out) {
    ++p_;  // opening quote
    while (p_ < t_.size()) {
      char c = t_[p_++];
      if (c == '"') return Status::Ok();
      if (static_cast<unsigned char>(c) < 0x20) return Error("control character in string");
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (p_ >= t_.size()) break;
      char e = t_[p_++];
      switch (e) {
        case '"':
          out->push_back('"');
          break;
        case '\\':
          out->push_back('\\');
          break;
        case '/':
          out->push_back('/');
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'u': {
          uint32_t cp;
          if (!Hex4(&cp)) return Error("bad \\u escape");
          if (cp >= 0xD800 && cp < 0xDC00) {
            uint32_t lo;
            if (!Literal("\\u") || !Hex4(&lo) || lo < 0xDC00 || lo >= 0xE000) {
              return Error("unpaired surrogate");
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp < 0xE000) {
            return Error("unpaired surrogate");
          }
          PutUtf8(out, cp);
          break;
        }
        default:
          return Error("bad escape");
      }
    }
    return Error("unterminated string");
  }

  Status Number(JsonValue* out) {
    size_t start = p_;
    bool neg = false;
    if (t_[p_] == '-') {
      neg = true;
      ++p_;
    }
    if (p_ >= t_.size() || t_[p_] < '0' || t_[p_] > '9') return Error("bad number");
    if (t_[p_] == '0' && p_ + 1 < t_.size() && t_[p_ + 1] >= '0' && t_[p_ + 1] <= '9') {
      return Error("leading zero");
    }
    uint64_t mag = 0;
    bool overflow = false;
    while (p_ < t_.size() && t_[p_] >= '0' && t_[p_] <= '9') {
      uint64_t d = static_cast<uint64_t>(t_[p_] - '0');
      if (mag > (std::numeric_limits<uint64_t>::max() - d) / 10) overflow = true;
      mag = mag * 10 + d;
      ++p_;
    }
    bool is_int = true;
    if (p_ < t_.size() && t_[p_] == '.') {
      is_int = false;
      ++p_;
      if (p_ >= t_.size() || t_[p_] < '0' || t_[p_] > '9') return Error("bad fraction");
      while (p_ < t_.size() && t_[p_] >= '0' && t_[p_] <= '9') ++p_;
    }
    if (p_ < t_.size() && (t_[p_] == 'e' || t_[p_] == 'E')) {
      is_int = false;
      ++p_;
      if (p_ < t_.size() && (t_[p_] == '+' || t_[p_] == '-')) ++p_;
      if (p_ >= t_.size() || t_[p_] < '0' || t_[p_] > '9') return Error("bad exponent");
      while (p_ < t_.size() && t_[p_] >= '0' && t_[p_] <= '9') ++p_;
    }
    out->type = JsonValue::Type::kNumber;
    std::string text(t_.substr(start, p_ - start));
    out->number = std::strtod(text.c_str(), nullptr);
    const uint64_t limit = neg ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
    if (is_int && !overflow && mag <= limit) {
      out->is_int = true;
      out->integer = neg ? static_cast<int64_t>(0 - mag) : static_cast<int64_t>(mag);
    }
    return Status::Ok();
  }

  std::string_view t_;
  size_t p_ = 0;
};

}  // namespace

const JsonValue* JsonValue::Find(std::string_view key) const {
  for (const JsonMember& m : object) {
    if (m.key == key) return &m.value;
  }
  return nullptr;
}

Result<JsonValue> ParseJson(std::string_view text) {
  JsonValue v;
  Status s = Parser(text).Parse(&v);
  if (!s.ok()) return s;
  return v;
}

std::string JsonQuote(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (u < 0x20) {
      out += "\\u00";
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 15]);
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
  return out;
}

}  // namespace gpumon::tsdb::block
