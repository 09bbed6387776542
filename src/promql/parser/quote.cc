// Go-compatible quoting and unquoting (strconv.Quote/Unquote semantics).

#include "promql/parser/quote.h"

#include <cstdio>

namespace gpumon::promql::internal {

uint32_t DecodeRune(std::string_view s, size_t pos, int* width) {
  const auto b0 = static_cast<unsigned char>(s[pos]);
  *width = 1;
  if (b0 < 0x80) return b0;
  int n = 0;
  uint32_t r = 0;
  uint32_t min = 0;
  if ((b0 & 0xE0) == 0xC0) {
    n = 2;
    r = b0 & 0x1F;
    min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    n = 3;
    r = b0 & 0x0F;
    min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    n = 4;
    r = b0 & 0x07;
    min = 0x10000;
  } else {
    return kRuneError;
  }
  if (pos + n > s.size()) return kRuneError;
  for (int i = 1; i < n; ++i) {
    const auto b = static_cast<unsigned char>(s[pos + i]);
    if ((b & 0xC0) != 0x80) return kRuneError;
    r = (r << 6) | (b & 0x3F);
  }
  if (r < min || r > 0x10FFFF || (r >= 0xD800 && r < 0xE000)) return kRuneError;
  *width = n;
  return r;
}

void AppendRune(std::string& out, uint32_t r) {
  if (r < 0x80) {
    out.push_back(static_cast<char>(r));
  } else if (r < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (r >> 6)));
    out.push_back(static_cast<char>(0x80 | (r & 0x3F)));
  } else if (r < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (r >> 12)));
    out.push_back(static_cast<char>(0x80 | ((r >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (r & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (r >> 18)));
    out.push_back(static_cast<char>(0x80 | ((r >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((r >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (r & 0x3F)));
  }
}

namespace {

// An approximation of unicode.IsPrint: controls, C1 controls, surrogates
// and the few format characters Go flags are not printable.
bool IsPrint(uint32_t r) {
  if (r < 0x20 || r == 0x7F) return false;
  if (r >= 0x80 && r < 0xA0) return false;
  if (r == 0xAD) return false;
  if (r >= 0x200B && r <= 0x200F) return false;
  if (r >= 0x2028 && r <= 0x202E) return false;
  if (r >= 0x2060 && r <= 0x206F) return false;
  if (r == 0xFEFF || r == 0xFFFE || r == 0xFFFF) return false;
  if (r >= 0xD800 && r < 0xE000) return false;
  if (r >= 0xE000 && r <= 0xF8FF) return false;  // private use
  return r <= 0x10FFFF;
}

void AppendEscapedRune(std::string& out, uint32_t r, int width, std::string_view raw, char quote) {
  char buf[16];
  if (r == static_cast<uint32_t>(quote) || r == '\\') {
    out.push_back('\\');
    out.push_back(static_cast<char>(r));
    return;
  }
  if (r == kRuneError && width == 1) {
    std::snprintf(buf, sizeof(buf), "\\x%02x", static_cast<unsigned char>(raw[0]));
    out += buf;
    return;
  }
  if (IsPrint(r)) {
    out.append(raw.substr(0, width));
    return;
  }
  switch (r) {
    case '\a':
      out += "\\a";
      return;
    case '\b':
      out += "\\b";
      return;
    case '\f':
      out += "\\f";
      return;
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
    case '\v':
      out += "\\v";
      return;
    default:
      break;
  }
  if (r < 0x20 || r == 0x7F) {
    std::snprintf(buf, sizeof(buf), "\\x%02x", r);
  } else if (r < 0x10000) {
    std::snprintf(buf, sizeof(buf), "\\u%04x", r);
  } else {
    std::snprintf(buf, sizeof(buf), "\\U%08x", r);
  }
  out += buf;
}

int HexVal(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 16;
}

}  // namespace

std::string GoQuote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back('"');
  for (size_t i = 0; i < s.size();) {
    int w = 1;
    const uint32_t r = DecodeRune(s, i, &w);
    AppendEscapedRune(out, r, w, s.substr(i), '"');
    i += w;
  }
  out.push_back('"');
  return out;
}

std::string GoQuoteRune(uint32_t r) {
  std::string raw;
  if (r > 0x10FFFF || (r >= 0xD800 && r < 0xE000)) r = kRuneError;
  AppendRune(raw, r);
  std::string out = "'";
  AppendEscapedRune(out, r, static_cast<int>(raw.size()), raw, '\'');
  out.push_back('\'');
  return out;
}

std::string GoRuneDescription(uint32_t r) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "U+%04X", r);
  std::string out = buf;
  if (IsPrint(r)) {
    out += " '";
    AppendRune(out, r);
    out += "'";
  }
  return out;
}

bool Unquote(std::string_view q, std::string* out, std::string* error) {
  out->clear();
  if (q.size() < 2 || q.front() != q.back()) {
    *error = "invalid syntax";
    return false;
  }
  const char quote = q.front();
  std::string_view body = q.substr(1, q.size() - 2);
  if (quote == '`') {
    if (body.find('`') != std::string_view::npos) {
      *error = "invalid syntax";
      return false;
    }
    out->assign(body);
    return true;
  }
  if (quote != '"' && quote != '\'') {
    *error = "invalid syntax";
    return false;
  }
  out->reserve(body.size());
  for (size_t i = 0; i < body.size();) {
    const char c = body[i];
    if (c == quote || c == '\n') {
      *error = "invalid syntax";
      return false;
    }
    if (c != '\\') {
      out->push_back(c);
      ++i;
      continue;
    }
    if (i + 1 >= body.size()) {
      *error = "invalid syntax";
      return false;
    }
    const char e = body[i + 1];
    i += 2;
    switch (e) {
      case 'a':
        out->push_back('\a');
        continue;
      case 'b':
        out->push_back('\b');
        continue;
      case 'f':
        out->push_back('\f');
        continue;
      case 'n':
        out->push_back('\n');
        continue;
      case 'r':
        out->push_back('\r');
        continue;
      case 't':
        out->push_back('\t');
        continue;
      case 'v':
        out->push_back('\v');
        continue;
      case '\\':
        out->push_back('\\');
        continue;
      case '\'':
      case '"':
        if (e != quote) {
          *error = "invalid syntax";
          return false;
        }
        out->push_back(e);
        continue;
      default:
        break;
    }
    int digits = 0;
    int base = 16;
    if (e >= '0' && e <= '7') {
      digits = 3;
      base = 8;
      --i;  // the first digit is part of the value
    } else if (e == 'x') {
      digits = 2;
    } else if (e == 'u') {
      digits = 4;
    } else if (e == 'U') {
      digits = 8;
    } else {
      *error = "invalid syntax";
      return false;
    }
    if (i + digits > body.size()) {
      *error = "invalid syntax";
      return false;
    }
    uint32_t v = 0;
    for (int k = 0; k < digits; ++k) {
      const int d = HexVal(body[i + k]);
      if (d >= base) {
        *error = "invalid syntax";
        return false;
      }
      v = v * base + d;
    }
    i += digits;
    if (e == 'x' || base == 8) {
      if (v > 255) {
        *error = "invalid syntax";
        return false;
      }
      out->push_back(static_cast<char>(v));
    } else {
      if (v > 0x10FFFF || (v >= 0xD800 && v < 0xE000)) {
        *error = "invalid syntax";
        return false;
      }
      AppendRune(*out, v);
    }
  }
  return true;
}

}  // namespace gpumon::promql::internal
