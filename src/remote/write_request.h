// The Prometheus remote-write 1.0 wire format: a prometheus.WriteRequest
// protobuf message, snappy block-compressed, sent as the body of an HTTP
// POST with Content-Type application/x-protobuf, Content-Encoding snappy
// and X-Prometheus-Remote-Write-Version 0.1.0. See
// docs/formats/remote-write.md.
//
// Contract:
// - EncodeWriteRequest writes each series' labels (sorted by name, as the
//   spec requires) and samples in the order given; the body decodes back
//   to exactly the same series (values bit-exact, stale NaN included).
// - DecodeWriteRequest accepts any body a conforming sender produces:
//   unknown fields are skipped, metadata and exemplars are ignored,
//   native histograms are rejected. It never crashes on hostile input and
//   each error says what is wrong ("snappy: corrupt input", "timeseries[3]:
//   label name \"\" is empty", "timeseries[0]: labels not sorted", ...).
//   A series without __name__ is accepted, as Prometheus does.
// - Decode reads the protobuf wire format directly (one copy per label
//   string, no intermediate message) and accepts exactly the bodies
//   libprotobuf parses; labels with an empty value are dropped (absent).
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/labels.h"
#include "common/status.h"
#include "tsdb/sample.h"

namespace gpumon::remote {

struct TimeSeries {
  Labels labels;
  std::vector<tsdb::Sample> samples;
};

// Snappy-compressed protobuf body.
std::string EncodeWriteRequest(std::span<const TimeSeries> series);

Result<std::vector<TimeSeries>> DecodeWriteRequest(std::string_view body);

// Called for each series of a request in wire order; `series` is only
// valid during the call. A non-OK status stops the walk and is returned.
using SeriesVisitor = std::function<Status(size_t index, const TimeSeries& series)>;

// The streaming form of DecodeWriteRequest over the protobuf message itself
// (already decompressed): each series is validated and handed to `visit`
// as soon as it is read, so memory stays at one series whatever the
// request holds (e.g. the same series repeated many times). Errors are
// DecodeWriteRequest's; series visited before an error have been visited.
Status ForEachSeries(std::string_view message, const SeriesVisitor& visit);

}  // namespace gpumon::remote
