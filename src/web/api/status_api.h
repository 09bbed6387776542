// The status endpoints of the HTTP API: /api/v1/status/buildinfo,
// /runtimeinfo, /config, /flags and /tsdb.
//
// Contract:
// - buildinfo: Prometheus's fields; "version" is the Prometheus API
//   version served (clients such as Grafana gate features on it), the
//   gpumon version is in "revision".
// - runtimeinfo: start time, working directory, host name, server time,
//   retention; the Go-runtime fields Prometheus adds are not reported.
// - config: {"yaml": <the server's configuration, as given>}; flags: the
//   command-line flags with their effective values.
// - tsdb: limit (default 10, 1..10000); headStats from the backend's head,
//   the cardinality lists over the head's time range (all stored data
//   when the head is empty, e.g. after an import).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "web/api/backend.h"
#include "web/api/params.h"
#include "web/api/response.h"

namespace gpumon::web::api {

struct ServerInfo {
  std::string version;   // the Prometheus API version claimed
  std::string revision;  // gpumon's version
  std::string branch;
  std::string build_user;
  std::string build_date;
  std::string go_version;  // empty: not Go
  int64_t start_time_ms = 0;
  std::string cwd;
  std::string hostname;
  std::string storage_retention;  // e.g. "15d"
  std::map<std::string, std::string> flags;
  std::string config_yaml;
};

class StatusApi {
 public:
  using Clock = std::function<int64_t()>;
  StatusApi(ApiBackend& backend, ServerInfo info, Clock now)
      : backend_(backend), info_(std::move(info)), now_(std::move(now)) {}

  ApiResponse BuildInfo(const Params& p);
  ApiResponse RuntimeInfo(const Params& p);
  ApiResponse Config(const Params& p);
  ApiResponse Flags(const Params& p);
  ApiResponse Tsdb(const Params& p);

 private:
  ApiBackend& backend_;
  const ServerInfo info_;
  Clock now_;
};

}  // namespace gpumon::web::api
