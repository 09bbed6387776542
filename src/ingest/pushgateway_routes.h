// The Pushgateway-compatible push receiver: PUT, POST and DELETE on
// /metrics/job/<job>{/<label>/<value>} (docs/formats/push.md).
//
// Contract (Pushgateway's API, github.com/prometheus/pushgateway):
// - PUT replaces the group's metrics (PushMode::kReplace), POST replaces the
//   pushed families only (kMerge); both answer 200 with an empty body on
//   success. An empty body is valid: PUT then leaves the group without
//   metrics, POST changes nothing; both update push_time_seconds.
// - DELETE removes the group and answers 202 (also when there was none).
// - Errors answer text/plain with the reason: 400 for a bad path, a body
//   that does not parse, a sample with a timestamp, and anything the store
//   rejects (limits, grouping-label conflicts, inconsistent types); 413 for
//   a body over max_body_bytes (the HTTP server answers it, JSON) or a gzip
//   body inflating past max_decoded_bytes; 415 for protobuf bodies or an
//   unknown Content-Encoding.
// - The resolver (may be null) is asked ForPeer(remote_address) on each
//   PUT/POST; its placement is stored with the group.
#pragma once

#include <cstddef>

#include "http/router.h"
#include "ingest/job_gpus.h"
#include "ingest/push_store.h"

namespace gpumon::ingest {

struct PushgatewayOptions {
  size_t max_body_bytes = 4 << 20;      // as sent
  size_t max_decoded_bytes = 16 << 20;  // after gzip
};

void RegisterPushgatewayRoutes(http::Router& router, PushStore& store, JobGpuResolver* resolver,
                               PushgatewayOptions options);

}  // namespace gpumon::ingest
