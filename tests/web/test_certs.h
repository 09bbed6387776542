// Test PKI: a CA, a server certificate for 127.0.0.1/localhost and a client
// certificate, generated with OpenSSL into a directory, plus a second
// self-signed client certificate the CA did not sign.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

namespace gpumon::web::testing {

// A fresh directory under the system temp dir, removed afterwards.
class TempDir {
 public:
  TempDir();
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }
  // Writes `content` to path()/name and returns the full path.
  std::string Write(const std::string& name, const std::string& content) const {
    const std::string full = path_ + "/" + name;
    std::ofstream(full) << content;
    return full;
  }

 private:
  std::string path_;
};

struct TestCerts {
  std::string dir;
  std::string ca_cert;      // PEM paths
  std::string server_cert;  // CN/SAN localhost, 127.0.0.1
  std::string server_key;
  std::string client_cert;  // signed by the CA
  std::string client_key;
  std::string rogue_cert;  // self-signed
  std::string rogue_key;
};

// Writes the files into `dir` (which must exist). Aborts the test on
// failure via the returned bool.
bool MakeTestCerts(const std::string& dir, TestCerts* out);

// The full path of an executable on $PATH; "" when there is none.
std::string FindOnPath(const std::string& name);

// A bcrypt hash of `password` with a fresh "$2b$" salt of cost 4 (the
// lowest, to keep tests quick).
std::string BcryptHash(const std::string& password);

}  // namespace gpumon::web::testing
