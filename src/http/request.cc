#include "http/request.h"

#include <functional>

namespace gpumon::http {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Calls `fn(name, value)` for every well-formed pair of `encoded`, in order,
// until fn returns false. Returns false when a pair was malformed. As in Go
// (since 1.17), a pair containing ';' is malformed rather than a separator.
bool ForEachPair(std::string_view encoded,
                 const std::function<bool(std::string&, std::string&)>& fn) {
  bool all_ok = true;
  std::string name;
  std::string value;
  while (!encoded.empty()) {
    const size_t amp = encoded.find('&');
    std::string_view piece = encoded.substr(0, amp);
    encoded = amp == std::string_view::npos ? std::string_view() : encoded.substr(amp + 1);
    if (piece.empty()) continue;
    if (piece.find(';') != std::string_view::npos) {
      all_ok = false;
      continue;
    }
    const size_t eq = piece.find('=');
    const std::string_view raw_name = piece.substr(0, eq);
    const std::string_view raw_value =
        eq == std::string_view::npos ? std::string_view() : piece.substr(eq + 1);
    if (!PercentDecode(raw_name, true, &name) || !PercentDecode(raw_value, true, &value)) {
      all_ok = false;
      continue;
    }
    if (!fn(name, value)) break;
  }
  return all_ok;
}

bool IsFormBody(const HttpRequest& req) {
  // Go's ParseForm reads the body only for these methods.
  if (req.method != "POST" && req.method != "PUT" && req.method != "PATCH") return false;
  const std::string content_type = req.headers.Get("Content-Type");
  std::string_view type = content_type;
  type = type.substr(0, type.find(';'));
  while (!type.empty() && (type.back() == ' ' || type.back() == '\t')) type.remove_suffix(1);
  while (!type.empty() && (type.front() == ' ' || type.front() == '\t')) type.remove_prefix(1);
  return EqualsIgnoreCase(type, "application/x-www-form-urlencoded");
}

// Visits the values of `name`: form body first, then the URL query.
void ForEachValue(const HttpRequest& req, std::string_view name,
                  const std::function<bool(std::string&)>& fn) {
  bool stop = false;
  auto visit = [&](std::string& n, std::string& v) {
    if (n != name) return true;
    stop = !fn(v);
    return !stop;
  };
  if (IsFormBody(req)) ForEachPair(req.body, visit);
  if (!stop) ForEachPair(req.query, visit);
}

}  // namespace

bool PercentDecode(std::string_view in, bool plus_is_space, std::string* out) {
  out->clear();
  out->reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size()) return false;
      const int hi = HexValue(in[i + 1]);
      const int lo = HexValue(in[i + 2]);
      if (hi < 0 || lo < 0) return false;
      out->push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out->push_back(' ');
    } else {
      out->push_back(c);
    }
  }
  return true;
}

bool ParseFormPairs(std::string_view encoded,
                    std::vector<std::pair<std::string, std::string>>* out) {
  return ForEachPair(encoded, [out](std::string& n, std::string& v) {
    out->emplace_back(std::move(n), std::move(v));
    return true;
  });
}

std::string HttpRequest::Param(std::string_view name) const {
  std::string result;
  ForEachValue(*this, name, [&](std::string& v) {
    result = std::move(v);
    return false;
  });
  return result;
}

bool HttpRequest::HasParam(std::string_view name) const {
  bool found = false;
  ForEachValue(*this, name, [&](std::string&) {
    found = true;
    return false;
  });
  return found;
}

std::vector<std::string> HttpRequest::ParamValues(std::string_view name) const {
  std::vector<std::string> values;
  ForEachValue(*this, name, [&](std::string& v) {
    values.push_back(std::move(v));
    return true;
  });
  return values;
}

}  // namespace gpumon::http
