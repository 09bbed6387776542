// Pushgateway pushes: path + body through the path parser, the body decoder
// and a PushStore that lives across inputs (so merges, replaces and
// consistency checks meet earlier pushes), then renders the store.
//
// Input: byte 0 picks the request (bit 0: POST instead of PUT, bit 1:
// OpenMetrics Content-Type, bit 2: DELETE); then the raw path up to the first
// newline; the rest is the body.
// Invariants: a parsed grouping round-trips through GroupingPath; the
// store's text 0.0.4 rendering always parses again.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "exposition/parser.h"
#include "ingest/push_store.h"
#include "ingest/pushgateway_body.h"
#include "ingest/pushgateway_path.h"

using namespace gpumon;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static ingest::PushStore* store = [] {
    ingest::PushLimits limits;
    limits.max_series_per_group = 200;
    limits.max_series_total = 2000;
    limits.max_groups = 50;
    limits.max_labels_per_series = 16;
    auto* s = new ingest::PushStore(limits);
    s->ReserveNamePrefixes({"gpu_"}, {});
    return s;
  }();
  if (size < 1) return 0;
  const uint8_t mode = data[0];
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  size_t nl = rest.find('\n');
  std::string_view path = rest.substr(0, nl);
  std::string_view body = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);

  auto grouping = ingest::ParseGroupingPath(path);
  if (!grouping.ok()) return 0;
  auto again = ingest::ParseGroupingPath(ingest::GroupingPath(*grouping));
  if (!again.ok() || !(*again == *grouping)) abort();

  if (mode & 4) {
    store->Delete(*grouping);
  } else {
    const char* type =
        (mode & 2) ? "application/openmetrics-text; version=1.0.0" : "text/plain; version=0.0.4";
    auto decoded = ingest::DecodePushBody(type, "", body, 1 << 20);
    if (decoded.status == 200) {
      ingest::JobPlacement placement;
      if (mode & 8) placement.gpus = {{static_cast<unsigned>(mode >> 4), "GPU-fuzz"}};
      (void)store->Push(*grouping, std::move(decoded.families),
                        (mode & 1) ? ingest::PushMode::kMerge : ingest::PushMode::kReplace,
                        std::move(placement));
    }
  }
  ingest::GpuLabelNames names;
  names.hostname = "fuzz-host";
  std::string text;
  store->AppendText(names, exposition::Format::kText004, &text);
  auto parsed = exposition::ParseToFamilies(text, exposition::Format::kText004);
  if (!parsed.ok()) {
    fprintf(stderr, "rendering does not parse: %s\n%s\n", parsed.status().message().c_str(),
            text.c_str());
    abort();
  }
  std::string om;
  store->AppendText(names, exposition::Format::kOpenMetrics1, &om);
  return 0;
}
