#include "notifier/alertmanager_client.h"

#include <httplib.h>

#include <fstream>
#include <sstream>

namespace gpumon::notifier {
namespace {

Result<std::string> ReadSecretFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::Error("cannot read \"" + path + "\"");
  std::stringstream buf;
  buf << in.rdbuf();
  std::string s = buf.str();
  const char* ws = " \t\r\n";
  s.erase(0, s.find_first_not_of(ws));
  const size_t end = s.find_last_not_of(ws);
  s.erase(end == std::string::npos ? 0 : end + 1);
  return s;
}

// httplib's error names are terse ("Connection"); say what failed.
std::string Describe(httplib::Error e) {
  switch (e) {
    case httplib::Error::Connection:
      return "cannot connect";
    case httplib::Error::ConnectionTimeout:
      return "connect timed out";
    case httplib::Error::Read:
      return "reading the response failed or timed out";
    case httplib::Error::Write:
      return "writing the request failed or timed out";
    case httplib::Error::SSLConnection:
      return "TLS handshake failed";
    case httplib::Error::SSLServerVerification:
      return "server certificate verification failed";
    default:
      return httplib::to_string(e);
  }
}

}  // namespace

Status PostAlerts(const std::string& url, const scrape::HttpClientConfig& http, int64_t timeout_ms,
                  const std::string& body) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return Status::Error("invalid URL \"" + url + "\"");
  const size_t path_start = url.find('/', scheme_end + 3);
  const std::string origin = path_start == std::string::npos ? url : url.substr(0, path_start);
  const std::string path = path_start == std::string::npos ? "/" : url.substr(path_start);

  const bool client_cert = !http.tls_cert_file.empty() && !http.tls_key_file.empty();
  httplib::Client client = client_cert
                               ? httplib::Client(origin, http.tls_cert_file, http.tls_key_file)
                               : httplib::Client(origin);
  if (!client.is_valid()) return Status::Error("cannot post to \"" + url + "\": unusable URL");
  const time_t sec = static_cast<time_t>(timeout_ms / 1000);
  const time_t usec = static_cast<time_t>((timeout_ms % 1000) * 1000);
  client.set_connection_timeout(sec, usec);
  client.set_read_timeout(sec, usec);
  client.set_write_timeout(sec, usec);
  client.set_follow_location(http.follow_redirects);
  client.set_keep_alive(false);
  if (url.starts_with("https://")) {
    if (!http.tls_ca_file.empty()) client.set_ca_cert_path(http.tls_ca_file.c_str());
    client.enable_server_certificate_verification(!http.tls_insecure_skip_verify);
  }
  httplib::Headers headers = {{"User-Agent", "gpumon"}};
  if (http.has_basic_auth()) {
    std::string password = http.basic_auth_password;
    if (!http.basic_auth_password_file.empty()) {
      auto p = ReadSecretFile(http.basic_auth_password_file);
      if (!p.ok()) return Status::Error("basic_auth password_file: " + p.status().message());
      password = *p;
    }
    client.set_basic_auth(http.basic_auth_username.c_str(), password.c_str());
  } else if (http.has_authorization()) {
    std::string credentials = http.authorization_credentials;
    if (!http.authorization_credentials_file.empty()) {
      auto c = ReadSecretFile(http.authorization_credentials_file);
      if (!c.ok()) return Status::Error("authorization credentials_file: " + c.status().message());
      credentials = *c;
    }
    const std::string type = http.authorization_type.empty() ? "Bearer" : http.authorization_type;
    headers.emplace("Authorization", type + " " + credentials);
  }
  auto res = client.Post(path, headers, body, "application/json");
  if (!res) {
    return Status::Error("error sending alerts to \"" + url + "\": " + Describe(res.error()));
  }
  if (res->status / 100 != 2) {
    std::string detail = res->body.substr(0, 256);
    while (!detail.empty() && (detail.back() == '\n' || detail.back() == ' ')) detail.pop_back();
    return Status::Error("bad response status " + std::to_string(res->status) + " from \"" + url +
                         "\"" + (detail.empty() ? "" : ": " + detail));
  }
  return Status::Ok();
}

}  // namespace gpumon::notifier
