#include "scrape/http_fetch.h"

#include <httplib.h>
#include <netdb.h>
#include <openssl/x509.h>
#include <sys/socket.h>

#include <chrono>
#include <fstream>
#include <sstream>

namespace gpumon::scrape {
namespace {

// Reason phrases for the statuses scrapes commonly meet (Go's wording).
std::string StatusText(int status) {
  switch (status) {
    case 301:
      return "Moved Permanently";
    case 302:
      return "Found";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return "";
  }
}

// A secret file's content with surrounding whitespace removed, as
// Prometheus reads password_file and credentials_file.
Result<std::string> ReadSecretFile(const std::string& path, const char* field) {
  std::ifstream in(path);
  if (!in) return Status::Error(std::string("unable to read ") + field + " " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  const char* ws = " \t\r\n\v\f";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return std::string();
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

// The first address `host` resolves to, numerically (cpp-httplib's
// host-to-address map takes only numeric addresses).
Result<std::string> ResolveNumeric(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || res == nullptr) {
    return Status::Error("cannot resolve host " + host);
  }
  char buf[NI_MAXHOST];
  const int rc =
      getnameinfo(res->ai_addr, res->ai_addrlen, buf, sizeof buf, nullptr, 0, NI_NUMERICHOST);
  freeaddrinfo(res);
  if (rc != 0) return Status::Error("cannot resolve host " + host);
  return std::string(buf);
}

struct ParsedUrl {
  std::string scheme;     // "http" or "https"
  std::string authority;  // host[:port] as written, for the Host header
  std::string host;       // without brackets
  int port = 0;
  std::string path;  // with query; "/" when empty
};

Result<ParsedUrl> ParseUrl(const std::string& url) {
  ParsedUrl out;
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return Status::Error("invalid URL \"" + url + "\"");
  out.scheme = url.substr(0, scheme_end);
  const size_t path_start = url.find('/', scheme_end + 3);
  out.authority =
      url.substr(scheme_end + 3,
                 path_start == std::string::npos ? std::string::npos : path_start - scheme_end - 3);
  out.path = path_start == std::string::npos ? "/" : url.substr(path_start);
  std::string port_text;
  if (!out.authority.empty() && out.authority[0] == '[') {
    const size_t close = out.authority.find(']');
    if (close == std::string::npos) return Status::Error("invalid URL \"" + url + "\"");
    out.host = out.authority.substr(1, close - 1);
    if (close + 1 < out.authority.size() && out.authority[close + 1] == ':') {
      port_text = out.authority.substr(close + 2);
    }
  } else {
    const size_t colon = out.authority.rfind(':');
    out.host = out.authority.substr(0, colon);
    if (colon != std::string::npos) port_text = out.authority.substr(colon + 1);
  }
  out.port = out.scheme == "https" ? 443 : 80;
  if (!port_text.empty()) {
    char* end = nullptr;
    const long port = std::strtol(port_text.c_str(), &end, 10);  // NOLINT(runtime/int)
    if (*end != '\0' || port <= 0 || port > 65535) {
      return Status::Error("invalid URL \"" + url + "\": bad port");
    }
    out.port = static_cast<int>(port);
  }
  if (out.host.empty()) return Status::Error("invalid URL \"" + url + "\": no host");
  return out;
}

}  // namespace

Result<FetchResult> HttpFetch(const std::string& url, int64_t timeout_ms, uint64_t body_limit) {
  return HttpFetchWith(url, timeout_ms, body_limit, HttpClientConfig{});
}

Fetcher HttpFetcherFor(HttpClientConfig http) {
  return [http = std::move(http)](const std::string& url, int64_t timeout_ms, uint64_t limit) {
    return HttpFetchWith(url, timeout_ms, limit, http);
  };
}

Result<FetchResult> HttpFetchWith(const std::string& url, int64_t timeout_ms, uint64_t body_limit,
                                  const HttpClientConfig& http) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  auto parsed = ParseUrl(url);
  if (!parsed.ok()) return parsed.status();
  const ParsedUrl& u = *parsed;
  if (u.scheme != "http" && u.scheme != "https") {
    return Status::Error("cannot scrape \"" + url + "\": unsupported URL scheme");
  }
  const bool https = u.scheme == "https";
  // With server_name the client connects to the URL's host but verifies
  // (and sends as SNI) server_name: cpp-httplib uses its host for both, so
  // it gets server_name and a map from that name to the real address.
  const bool rename = https && !http.tls_server_name.empty() && http.tls_server_name != u.host;
  std::string client_host = rename ? http.tls_server_name : u.host;
  if (client_host.find(':') != std::string::npos) client_host = "[" + client_host + "]";
  const std::string origin = u.scheme + "://" + client_host + ":" + std::to_string(u.port);
  const bool client_cert = https && !http.tls_cert_file.empty();
  httplib::Client client = client_cert
                               ? httplib::Client(origin, http.tls_cert_file, http.tls_key_file)
                               : httplib::Client(origin);
  if (!client.is_valid()) {
    if (client_cert) {
      return Status::Error("cannot load client certificate " + http.tls_cert_file + " / key " +
                           http.tls_key_file);
    }
    return Status::Error("cannot scrape \"" + url + "\": unsupported URL");
  }
  if (https) {
    if (!http.tls_ca_file.empty()) client.set_ca_cert_path(http.tls_ca_file);
    client.enable_server_certificate_verification(!http.tls_insecure_skip_verify);
    if (rename) {
      auto addr = ResolveNumeric(u.host);
      if (!addr.ok()) return Status::Error("Get \"" + url + "\": " + addr.status().message());
      client.set_hostname_addr_map({{http.tls_server_name, *addr}});
    }
  }
  const time_t sec = timeout_ms / 1000;
  const time_t usec = (timeout_ms % 1000) * 1000;
  client.set_connection_timeout(sec, usec);
  client.set_read_timeout(sec, usec);
  client.set_write_timeout(sec, usec);
  client.set_decompress(true);
  char timeout_s[32];
  std::snprintf(timeout_s, sizeof timeout_s, "%g", static_cast<double>(timeout_ms) / 1000.0);
  httplib::Headers headers = {
      {"Accept",
       "application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.4,*/*;q=0.1"},
      {"Accept-Encoding", "gzip"},
      {"User-Agent", "gpumon-scrape"},
      {"X-Prometheus-Scrape-Timeout-Seconds", timeout_s},
  };
  if (rename) headers.emplace("Host", u.authority);
  if (http.has_basic_auth()) {
    std::string password = http.basic_auth_password;
    if (!http.basic_auth_password_file.empty()) {
      auto p = ReadSecretFile(http.basic_auth_password_file, "basic auth password file");
      if (!p.ok()) return p.status();
      password = *p;
    }
    client.set_basic_auth(http.basic_auth_username, password);
  }
  if (http.has_authorization()) {
    std::string credentials = http.authorization_credentials;
    if (!http.authorization_credentials_file.empty()) {
      auto c =
          ReadSecretFile(http.authorization_credentials_file, "authorization credentials file");
      if (!c.ok()) return c.status();
      credentials = *c;
    }
    const std::string type = http.authorization_type.empty() ? "Bearer" : http.authorization_type;
    headers.emplace("Authorization", type + " " + credentials);
  }
  FetchResult out;
  bool too_big = false;
  bool late = false;
  auto res = client.Get(u.path, headers, [&](const char* data, size_t n) {
    if (std::chrono::steady_clock::now() > deadline) {
      late = true;
      return false;
    }
    if (body_limit > 0 && out.body.size() + n > body_limit) {
      too_big = true;
      return false;
    }
    out.body.append(data, n);
    return true;
  });
  if (too_big) {
    return Status::Error("body size limit exceeded (limit: " + std::to_string(body_limit) +
                         " bytes)");
  }
  if (late || std::chrono::steady_clock::now() > deadline) {
    return Status::Error("Get \"" + url + "\": context deadline exceeded");
  }
  if (!res) {
    std::string why = httplib::to_string(res.error());
    if (res.error() == httplib::Error::SSLServerVerification) {
      const long v = client.get_openssl_verify_result();  // NOLINT(runtime/int)
      why = v != X509_V_OK
                ? "tls: failed to verify certificate: " +
                      std::string(X509_verify_cert_error_string(v))
                : "tls: certificate is not valid for " + (rename ? http.tls_server_name : u.host);
    }
    return Status::Error("Get \"" + url + "\": " + why);
  }
  if (res->status != 200) {
    return Status::Error("server returned HTTP status " + std::to_string(res->status) + " " +
                         StatusText(res->status));
  }
  out.content_type = res->get_header_value("Content-Type");
  return out;
}

}  // namespace gpumon::scrape
