#include "scrape/http_fetch.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/x509.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "http/response.h"

namespace gpumon::scrape {
namespace {

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

// Loopback hosts: gzip there only costs CPU on both ends.
bool IsLoopback(const std::string& host) {
  if (host == "localhost" || host == "::1") return true;
  in_addr a{};
  return inet_pton(AF_INET, host.c_str(), &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

// What one fetch of a URL needs, derived from the URL and the job's
// client settings.
struct Plan {
  ParsedUrl u;
  bool https = false;
  // With server_name the client connects to the URL's host but verifies
  // (and sends as SNI) server_name: cpp-httplib uses its host for both, so
  // it gets server_name and a map from that name to the real address.
  bool rename = false;
  std::string origin;  // what the client is built for
  // The connection's identity: the URL's own scheme, host and port (with
  // server_name, origins of different hosts look alike).
  std::string key;
};

Result<Plan> MakePlan(const std::string& url, const HttpClientConfig& http) {
  Plan p;
  auto parsed = ParseUrl(url);
  if (!parsed.ok()) return parsed.status();
  p.u = std::move(*parsed);
  if (p.u.scheme != "http" && p.u.scheme != "https") {
    return Status::Error("cannot scrape \"" + url + "\": unsupported URL scheme");
  }
  p.https = p.u.scheme == "https";
  p.rename = p.https && !http.tls_server_name.empty() && http.tls_server_name != p.u.host;
  std::string client_host = p.rename ? http.tls_server_name : p.u.host;
  if (client_host.find(':') != std::string::npos) client_host = "[" + client_host + "]";
  p.origin = p.u.scheme + "://" + client_host + ":" + std::to_string(p.u.port);
  p.key = p.u.scheme + "://[" + p.u.host + "]:" + std::to_string(p.u.port);
  return p;
}

Result<std::unique_ptr<httplib::Client>> MakeClient(const Plan& p, const std::string& url,
                                                    const HttpClientConfig& http, bool keep_alive) {
  const bool client_cert = p.https && !http.tls_cert_file.empty();
  auto client = client_cert ? std::make_unique<httplib::Client>(p.origin, http.tls_cert_file,
                                                                http.tls_key_file)
                            : std::make_unique<httplib::Client>(p.origin);
  if (!client->is_valid()) {
    if (client_cert) {
      return Status::Error("cannot load client certificate " + http.tls_cert_file + " / key " +
                           http.tls_key_file);
    }
    return Status::Error("cannot scrape \"" + url + "\": unsupported URL");
  }
  if (p.https) {
    if (!http.tls_ca_file.empty()) client->set_ca_cert_path(http.tls_ca_file);
    client->enable_server_certificate_verification(!http.tls_insecure_skip_verify);
    if (p.rename) {
      auto addr = ResolveNumeric(p.u.host);
      if (!addr.ok()) return Status::Error("Get \"" + url + "\": " + addr.status().message());
      client->set_hostname_addr_map({{http.tls_server_name, *addr}});
    }
  }
  client->set_keep_alive(keep_alive);
  client->set_decompress(true);
  // Request headers and body leave in separate writes; without this, a
  // kept-alive connection would wait on Nagle's algorithm.
  client->set_tcp_nodelay(true);
  return client;
}

// One request on `client`. `retryable` is set when the request failed on
// the transport before any response byte was delivered.
Result<FetchResult> Exchange(httplib::Client& client, const Plan& p, const std::string& url,
                             int64_t timeout_ms, uint64_t body_limit, const HttpClientConfig& http,
                             Compression compression, bool* retryable) {
  *retryable = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  const time_t sec = timeout_ms / 1000;
  const time_t usec = (timeout_ms % 1000) * 1000;
  client.set_connection_timeout(sec, usec);
  client.set_read_timeout(sec, usec);
  client.set_write_timeout(sec, usec);
  char timeout_s[32];
  std::snprintf(timeout_s, sizeof timeout_s, "%g", static_cast<double>(timeout_ms) / 1000.0);
  httplib::Headers headers = {
      {"Accept",
       "application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.4,*/*;q=0.1"},
      {"Accept-Encoding", compression == Compression::kIdentity ||
                                  (compression == Compression::kAuto && IsLoopback(p.u.host))
                              ? "identity"
                              : "gzip"},
      {"User-Agent", "gpumon-scrape"},
      {"X-Prometheus-Scrape-Timeout-Seconds", timeout_s},
  };
  if (p.rename) headers.emplace("Host", p.u.authority);
  if (http.has_basic_auth()) {
    std::string password = http.basic_auth_password;
    if (!http.basic_auth_password_file.empty()) {
      auto pw = ReadSecretFile(http.basic_auth_password_file, "basic auth password file");
      if (!pw.ok()) return pw.status();
      password = *pw;
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
  bool received = false;
  auto res = client.Get(p.u.path, headers, [&](const char* data, size_t n) {
    received = true;
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
    *retryable =
        !received && (res.error() == httplib::Error::Read || res.error() == httplib::Error::Write);
    std::string why = httplib::to_string(res.error());
    if (res.error() == httplib::Error::SSLServerVerification) {
      const long v = client.get_openssl_verify_result();  // NOLINT(runtime/int)
      why = v != X509_V_OK ? "tls: failed to verify certificate: " +
                                 std::string(X509_verify_cert_error_string(v))
                           : "tls: certificate is not valid for " +
                                 (p.rename ? http.tls_server_name : p.u.host);
    }
    return Status::Error("Get \"" + url + "\": " + why);
  }
  if (res->status != 200) {
    return Status::Error("server returned HTTP status " + std::to_string(res->status) + " " +
                         std::string(http::ReasonPhrase(res->status)));
  }
  out.content_type = res->get_header_value("Content-Type");
  return out;
}

// Identity of a file the client loads once (CA, certificate, key), to
// notice rotation.
struct FileStamp {
  int64_t mtime_ns = 0;
  int64_t size = -1;
  uint64_t inode = 0;
  bool operator==(const FileStamp&) const = default;
};

FileStamp Stamp(const std::string& path) {
  FileStamp s;
  struct stat st {};
  if (path.empty() || stat(path.c_str(), &st) != 0) return s;
  s.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  s.size = st.st_size;
  s.inode = st.st_ino;
  return s;
}

}  // namespace

Result<FetchResult> HttpFetch(const std::string& url, int64_t timeout_ms, uint64_t body_limit) {
  return HttpFetchWith(url, timeout_ms, body_limit, HttpClientConfig{});
}

Result<FetchResult> HttpFetchWith(const std::string& url, int64_t timeout_ms, uint64_t body_limit,
                                  const HttpClientConfig& http) {
  auto plan = MakePlan(url, http);
  if (!plan.ok()) return plan.status();
  auto client = MakeClient(*plan, url, http, /*keep_alive=*/false);
  if (!client.ok()) return client.status();
  bool retryable = false;
  return Exchange(**client, *plan, url, timeout_ms, body_limit, http, Compression::kAuto,
                  &retryable);
}

struct KeepAliveFetcher::Impl {
  // One origin's connection. Its mutex serializes the fetches that use it.
  struct Slot {
    std::mutex mu;
    std::unique_ptr<httplib::Client> client;
    FileStamp files[3];  // ca, cert, key when the client was built
    int64_t last_used_s = 0;
  };

  HttpClientConfig http;
  Compression compression = Compression::kAuto;
  std::mutex mu;  // guards slots and next_sweep_s
  std::unordered_map<std::string, std::shared_ptr<Slot>> slots;
  int64_t next_sweep_s = 0;

  static int64_t NowS() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  std::shared_ptr<Slot> SlotFor(const std::string& origin) {
    const int64_t now = NowS();
    std::lock_guard<std::mutex> lock(mu);
    if (now >= next_sweep_s) {
      // Targets come and go; their connections should not outlive them.
      std::erase_if(slots, [now](const auto& kv) {
        return kv.second.use_count() == 1 && kv.second->last_used_s + 600 < now;
      });
      next_sweep_s = now + 60;
    }
    auto& slot = slots[origin];
    if (!slot) slot = std::make_shared<Slot>();
    slot->last_used_s = now;
    return slot;
  }
};

KeepAliveFetcher::KeepAliveFetcher(HttpClientConfig http, Compression compression)
    : impl_(std::make_unique<Impl>()) {
  impl_->http = std::move(http);
  impl_->compression = compression;
}

KeepAliveFetcher::~KeepAliveFetcher() = default;

Result<FetchResult> KeepAliveFetcher::Fetch(const std::string& url, int64_t timeout_ms,
                                            uint64_t body_limit) {
  const HttpClientConfig& http = impl_->http;
  auto plan = MakePlan(url, http);
  if (!plan.ok()) return plan.status();
  const auto start = std::chrono::steady_clock::now();
  std::shared_ptr<Impl::Slot> slot = impl_->SlotFor(plan->key);
  std::lock_guard<std::mutex> lock(slot->mu);
  FileStamp files[3];
  if (plan->https) {
    files[0] = Stamp(http.tls_ca_file);
    files[1] = Stamp(http.tls_cert_file);
    files[2] = Stamp(http.tls_key_file);
  }
  if (slot->client && !std::equal(files, files + 3, slot->files)) slot->client.reset();
  for (int attempt = 0;; ++attempt) {
    if (!slot->client) {
      auto client = MakeClient(*plan, url, http, /*keep_alive=*/true);
      if (!client.ok()) return client.status();
      slot->client = std::move(*client);
      std::copy(files, files + 3, slot->files);
    }
    const bool reused = slot->client->is_socket_open() != 0;
    const int64_t spent = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now() - start)
                              .count();
    bool retryable = false;
    auto res = Exchange(*slot->client, *plan, url, std::max<int64_t>(timeout_ms - spent, 1),
                        body_limit, http, impl_->compression, &retryable);
    if (res.ok() || !retryable || !reused || attempt > 0) {
      // A failed request leaves the connection closed; cpp-httplib dials
      // again next time.
      return res;
    }
  }
}

Fetcher HttpFetcherFor(HttpClientConfig http, Compression compression) {
  auto fetcher = std::make_shared<KeepAliveFetcher>(std::move(http), compression);
  return [fetcher](const std::string& url, int64_t timeout_ms, uint64_t limit) {
    return fetcher->Fetch(url, timeout_ms, limit);
  };
}

}  // namespace gpumon::scrape
