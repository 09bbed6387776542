// `gpumon tsdb import`, `gpumon tsdb inspect` and `gpumon tsdb dump`:
// offline tools for a TSDB data directory (bulk import of OpenMetrics
// history; what is stored; every stored sample as text).
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <chrono>
#include <cinttypes>
#include <climits>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/tsdb_import.h"
#include "tsdb/block/block.h"
#include "tsdb/db/merge_querier.h"
#include "tsdb/matcher.h"
#include "tsdb/sample.h"

namespace gpumon::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kTsdbUsage =
    "usage: gpumon tsdb <verb> [flags]\n\n"
    "verbs:\n"
    "  import   --data DIR FILE   import OpenMetrics text (timestamps in seconds, as\n"
    "                             promtool tsdb create-blocks-from openmetrics reads)\n"
    "                             into persistent blocks\n"
    "  inspect  --data DIR [--json] [--top N]\n"
    "                             print blocks, series, samples, bytes per sample and\n"
    "                             the top label cardinalities\n"
    "  dump     --data DIR [--match SELECTOR] [--min-time MS] [--max-time MS]\n"
    "                             print every sample of the blocks as\n"
    "                             `name{labels} value timestamp_seconds`; SELECTOR is\n"
    "                             a metric name and/or {label=\"value\",...} (equality\n"
    "                             only); values round-trip bit-exactly (shortest\n"
    "                             form; StaleNaN for the stale marker, NaN:0x<bits>\n"
    "                             for other non-canonical NaNs)\n";

// Splits "--flag value" pairs (for flags in `with_value`) from positional
// arguments, which Flags does not accept.
void SplitArgs(const std::vector<std::string>& args, const std::set<std::string>& with_value,
               std::vector<std::string>* flags, std::vector<std::string>* positional) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.rfind("--", 0) != 0) {
      positional->push_back(a);
      continue;
    }
    flags->push_back(a);
    if (a.find('=') == std::string::npos && with_value.count(a.substr(2)) && i + 1 < args.size()) {
      flags->push_back(args[++i]);
    }
  }
}

std::string Rfc3339(int64_t ms) {
  time_t secs = static_cast<time_t>(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
  int64_t frac = ms - static_cast<int64_t>(secs) * 1000;
  struct tm tm;
  gmtime_r(&secs, &tm);
  char buf[64];
  size_t n = strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  if (frac != 0) n += snprintf(buf + n, sizeof buf - n, ".%03" PRId64, frac);
  snprintf(buf + n, sizeof buf - n, "Z");
  return buf;
}

std::string Duration(int64_t ms) {
  int64_t s = ms / 1000;
  char buf[64];
  if (s % 3600 == 0) {
    snprintf(buf, sizeof buf, "%" PRId64 "h", s / 3600);
  } else if (s % 60 == 0) {
    snprintf(buf, sizeof buf, "%" PRId64 "m", s / 60);
  } else {
    snprintf(buf, sizeof buf, "%" PRId64 "s", s);
  }
  return buf;
}

std::string Resolution(int64_t ms) {
  if (ms == 0) return "raw";
  return Duration(ms);
}

std::string Fixed(double v, int digits) {
  char buf[64];
  snprintf(buf, sizeof buf, "%.*f", digits, std::isfinite(v) ? v : 0.0);
  return buf;
}

// ---------------------------------------------------------------- import

class ProgressBar {
 public:
  explicit ProgressBar(bool enabled) : enabled_(enabled) {}
  void Update(uint64_t done, uint64_t total, uint64_t samples) {
    if (!enabled_) return;
    auto now = std::chrono::steady_clock::now();
    if (drawn_ && done < total && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    drawn_ = true;
    double frac = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
    double secs = std::chrono::duration<double>(now - start_).count();
    constexpr int kWidth = 30;
    int filled = static_cast<int>(frac * kWidth);
    std::string bar(static_cast<size_t>(filled), '#');
    bar.append(static_cast<size_t>(kWidth - filled), ' ');
    fprintf(stderr, "\r[%s] %5.1f%%  %" PRIu64 " samples  %.2fM samples/s ", bar.c_str(),
            frac * 100, samples, secs > 0 ? static_cast<double>(samples) / secs / 1e6 : 0.0);
    fflush(stderr);
  }
  void Done() {
    if (enabled_ && drawn_) fprintf(stderr, "\n");
  }

 private:
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_;
};

int RunImport(const std::vector<std::string>& args) {
  std::vector<std::string> flag_args, positional;
  SplitArgs(args, {"data"}, &flag_args, &positional);
  auto flags = Flags::Parse(flag_args, {{"data", true}, {"help", false}});
  if (!flags.ok()) {
    std::cerr << "gpumon tsdb import: " << flags.status().message() << "\n\n" << kTsdbUsage;
    return 2;
  }
  if (flags->Has("help")) {
    std::cout << kTsdbUsage;
    return 0;
  }
  if (!flags->Get("data") || positional.size() != 1) {
    std::cerr << "gpumon tsdb import: needs --data DIR and one input FILE\n\n" << kTsdbUsage;
    return 2;
  }
  ProgressBar bar(isatty(STDERR_FILENO) == 1);
  ImportOptions options;
  options.progress = [&](uint64_t done, uint64_t total, uint64_t samples) {
    bar.Update(done, total, samples);
  };
  auto stats = ImportOpenMetricsFile(positional[0], *flags->Get("data"), options);
  bar.Done();
  if (!stats.ok()) {
    std::cerr << "gpumon tsdb import: " << stats.status().message() << "\n";
    return 1;
  }
  double per = stats->samples ? static_cast<double>(stats->bytes) / stats->samples : 0;
  fprintf(stderr,
          "imported %" PRIu64 " series, %" PRIu64 " samples into %" PRIu64 " blocks, %" PRIu64
          " bytes (%.3f bytes/sample) in %.2f s (%.2fM samples/s)\n",
          stats->series, stats->samples, stats->blocks, stats->bytes, per, stats->seconds,
          stats->seconds > 0 ? static_cast<double>(stats->samples) / stats->seconds / 1e6 : 0.0);
  return 0;
}

// ---------------------------------------------------------------- inspect

struct BlockRow {
  tsdb::block::BlockMeta meta;
  uint64_t bytes = 0;
};

struct Counted {
  std::string name;
  uint64_t count = 0;
};

struct Inspection {
  std::vector<BlockRow> blocks;
  uint64_t series = 0;  // distinct, raw blocks
  uint64_t samples = 0;
  uint64_t chunks = 0;
  uint64_t bytes = 0;  // raw blocks
  uint64_t downsampled_samples = 0;
  uint64_t downsampled_bytes = 0;
  bool has_wal = false;
  uint64_t wal_segments = 0;
  uint64_t wal_bytes = 0;
  std::vector<Counted> values_by_label_name;
  std::vector<Counted> series_by_metric_name;
  std::vector<Counted> series_by_label_pair;
};

template <typename Map>
std::vector<Counted> Top(const Map& m, size_t n) {
  std::vector<Counted> out;
  out.reserve(m.size());
  for (const auto& [k, v] : m) out.push_back({k, v});
  std::sort(out.begin(), out.end(), [](const Counted& a, const Counted& b) {
    return a.count != b.count ? a.count > b.count : a.name < b.name;
  });
  if (out.size() > n) out.resize(n);
  return out;
}

// Reads every block's index; series are counted once across blocks, so the
// cardinalities are those of the whole directory (raw tier).
Result<Inspection> Inspect(const std::string& dir, size_t top) {
  if (!fs::is_directory(dir)) return Status::Error(dir + " is not a directory");
  auto dirs = tsdb::block::ListBlockDirs(dir);
  if (!dirs.ok()) return dirs.status();
  Inspection in;
  std::unordered_set<uint64_t> seen;
  std::unordered_map<std::string, std::unordered_set<std::string>> values;
  std::unordered_map<std::string, uint64_t> by_metric, by_pair;
  Labels labels;
  std::vector<tsdb::index::ChunkMeta> chunks;
  for (const auto& d : *dirs) {
    auto b = tsdb::block::Block::Open(d);
    if (!b.ok()) return b.status();
    BlockRow row{(*b)->meta(), (*b)->SizeBytes()};
    in.blocks.push_back(row);
    if (row.meta.downsample_resolution_ms != 0) {
      in.downsampled_samples += row.meta.stats.num_samples;
      in.downsampled_bytes += row.bytes;
      continue;
    }
    in.samples += row.meta.stats.num_samples;
    in.chunks += row.meta.stats.num_chunks;
    in.bytes += row.bytes;
    const auto& index = (*b)->index();
    auto all = index.AllPostings();
    if (!all.ok()) return all.status();
    for (uint64_t id : *all) {
      if (Status s = index.ReadSeries(id, &labels, &chunks); !s.ok()) return s;
      if (!seen.insert(labels.Hash()).second) continue;
      by_metric[std::string(labels.Get("__name__"))]++;
      for (const auto& l : labels) {
        values[l.name].insert(l.value);
        by_pair[l.name + "=" + l.value]++;
      }
    }
  }
  std::sort(in.blocks.begin(), in.blocks.end(), [](const BlockRow& a, const BlockRow& b) {
    if (a.meta.downsample_resolution_ms != b.meta.downsample_resolution_ms) {
      return a.meta.downsample_resolution_ms < b.meta.downsample_resolution_ms;
    }
    return a.meta.min_time < b.meta.min_time;
  });
  in.series = seen.size();
  std::unordered_map<std::string, uint64_t> value_counts;
  for (const auto& [k, v] : values) value_counts[k] = v.size();
  in.values_by_label_name = Top(value_counts, top);
  in.series_by_metric_name = Top(by_metric, top);
  in.series_by_label_pair = Top(by_pair, top);

  fs::path wal = fs::path(dir) / "wal";
  std::error_code ec;
  if (fs::is_directory(wal, ec)) {
    in.has_wal = true;
    for (const auto& e : fs::recursive_directory_iterator(wal, ec)) {
      if (!e.is_regular_file()) continue;
      in.wal_bytes += e.file_size();
      if (e.path().parent_path() == wal) ++in.wal_segments;
    }
  }
  return in;
}

void PrintCounted(const char* title, const std::vector<Counted>& list) {
  if (list.empty()) return;
  std::printf("\n%s:\n", title);
  for (const auto& c : list) std::printf("  %10" PRIu64 "  %s\n", c.count, c.name.c_str());
}

void PrintText(const Inspection& in) {
  std::printf("%-26s  %-24s  %-24s  %8s  %9s  %12s  %9s  %12s  %8s  %5s  %5s\n", "BLOCK ID",
              "MIN TIME", "MAX TIME", "DURATION", "SERIES", "SAMPLES", "CHUNKS", "BYTES",
              "B/SAMPLE", "RES", "LEVEL");
  for (const auto& r : in.blocks) {
    const auto& m = r.meta;
    double per = m.stats.num_samples ? static_cast<double>(r.bytes) / m.stats.num_samples : 0;
    std::printf("%-26s  %-24s  %-24s  %8s  %9" PRIu64 "  %12" PRIu64 "  %9" PRIu64 "  %12" PRIu64
                "  %8s  %5s  %5d\n",
                m.id.c_str(), Rfc3339(m.min_time).c_str(), Rfc3339(m.max_time).c_str(),
                Duration(m.max_time - m.min_time).c_str(), m.stats.num_series, m.stats.num_samples,
                m.stats.num_chunks, r.bytes, Fixed(per, 3).c_str(),
                Resolution(m.downsample_resolution_ms).c_str(), m.compaction_level);
  }
  double per = in.samples ? static_cast<double>(in.bytes) / in.samples : 0;
  std::printf("\ntotal (raw): %zu blocks, %" PRIu64 " series, %" PRIu64 " samples, %" PRIu64
              " chunks, %" PRIu64 " bytes, %s bytes/sample\n",
              static_cast<size_t>(std::count_if(
                  in.blocks.begin(), in.blocks.end(),
                  [](const BlockRow& r) { return r.meta.downsample_resolution_ms == 0; })),
              in.series, in.samples, in.chunks, in.bytes, Fixed(per, 3).c_str());
  if (in.downsampled_bytes > 0) {
    std::printf("downsampled: %" PRIu64 " samples, %" PRIu64 " bytes\n", in.downsampled_samples,
                in.downsampled_bytes);
  }
  if (in.has_wal) {
    std::printf("wal: %" PRIu64 " segments, %" PRIu64 " bytes (not replayed)\n", in.wal_segments,
                in.wal_bytes);
  }
  PrintCounted("label names by distinct values", in.values_by_label_name);
  PrintCounted("metric names by series", in.series_by_metric_name);
  PrintCounted("label pairs by series", in.series_by_label_pair);
}

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

void JsonStr(JsonWriter& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

// Bytes per sample with 4 decimals, as the text report prints it.
void JsonFixed(JsonWriter& w, double v) {
  const std::string text = Fixed(v, 4);
  w.RawValue(text.data(), text.size(), rapidjson::kNumberType);
}

void JsonCounted(JsonWriter& w, const char* key, const std::vector<Counted>& list) {
  w.Key(key);
  w.StartArray();
  for (const auto& c : list) {
    w.StartObject();
    w.Key("name");
    JsonStr(w, c.name);
    w.Key("count");
    w.Uint64(c.count);
    w.EndObject();
  }
  w.EndArray();
}

std::string ToJson(const Inspection& in) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  w.Key("blocks");
  w.StartArray();
  for (const auto& b : in.blocks) {
    const auto& m = b.meta;
    const double per = m.stats.num_samples ? static_cast<double>(b.bytes) / m.stats.num_samples : 0;
    w.StartObject();
    w.Key("id");
    JsonStr(w, m.id);
    w.Key("min_time");
    w.Int64(m.min_time);
    w.Key("max_time");
    w.Int64(m.max_time);
    w.Key("min_time_rfc3339");
    JsonStr(w, Rfc3339(m.min_time));
    w.Key("max_time_rfc3339");
    JsonStr(w, Rfc3339(m.max_time));
    w.Key("duration_ms");
    w.Int64(m.max_time - m.min_time);
    w.Key("series");
    w.Uint64(m.stats.num_series);
    w.Key("samples");
    w.Uint64(m.stats.num_samples);
    w.Key("chunks");
    w.Uint64(m.stats.num_chunks);
    w.Key("bytes");
    w.Uint64(b.bytes);
    w.Key("bytes_per_sample");
    JsonFixed(w, per);
    w.Key("resolution");
    JsonStr(w, Resolution(m.downsample_resolution_ms));
    w.Key("compaction_level");
    w.Int64(m.compaction_level);
    w.EndObject();
  }
  w.EndArray();
  const double per = in.samples ? static_cast<double>(in.bytes) / in.samples : 0;
  w.Key("series");
  w.Uint64(in.series);
  w.Key("samples");
  w.Uint64(in.samples);
  w.Key("chunks");
  w.Uint64(in.chunks);
  w.Key("bytes");
  w.Uint64(in.bytes);
  w.Key("bytes_per_sample");
  JsonFixed(w, per);
  w.Key("downsampled_samples");
  w.Uint64(in.downsampled_samples);
  w.Key("downsampled_bytes");
  w.Uint64(in.downsampled_bytes);
  w.Key("wal");
  if (in.has_wal) {
    w.StartObject();
    w.Key("segments");
    w.Uint64(in.wal_segments);
    w.Key("bytes");
    w.Uint64(in.wal_bytes);
    w.EndObject();
  } else {
    w.Null();
  }
  JsonCounted(w, "label_values_by_name", in.values_by_label_name);
  JsonCounted(w, "series_by_metric_name", in.series_by_metric_name);
  JsonCounted(w, "series_by_label_pair", in.series_by_label_pair);
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

int RunInspect(const std::vector<std::string>& args) {
  auto flags =
      Flags::Parse(args, {{"data", true}, {"json", false}, {"top", true}, {"help", false}});
  if (!flags.ok()) {
    std::cerr << "gpumon tsdb inspect: " << flags.status().message() << "\n\n" << kTsdbUsage;
    return 2;
  }
  if (flags->Has("help")) {
    std::cout << kTsdbUsage;
    return 0;
  }
  auto top = flags->GetInt("top", 10, 0, 1000000);
  if (!top.ok() || !flags->Get("data")) {
    std::cerr << "gpumon tsdb inspect: " << (top.ok() ? "needs --data DIR" : top.status().message())
              << "\n";
    return 2;
  }
  auto in = Inspect(*flags->Get("data"), static_cast<size_t>(*top));
  if (!in.ok()) {
    std::cerr << "gpumon tsdb inspect: " << in.status().message() << "\n";
    return 1;
  }
  if (flags->Has("json")) {
    std::cout << ToJson(*in) << "\n";
  } else {
    PrintText(*in);
  }
  return 0;
}

// ---------------------------------------------------------------- dump

// Parses `name`, `name{a="b",...}` or `{a="b",...}` into equality matchers.
Result<std::vector<tsdb::Matcher>> ParseSelector(std::string_view sel) {
  std::vector<tsdb::Matcher> out;
  auto add = [&](std::string name, std::string value) -> Status {
    auto m = tsdb::Matcher::Make(tsdb::MatchType::kEqual, std::move(name), std::move(value));
    if (!m.ok()) return m.status();
    out.push_back(std::move(m).value());
    return Status::Ok();
  };
  auto bad = [&](const std::string& why) {
    return Status::Error("--match \"" + std::string(sel) + "\": " + why);
  };
  auto is_name_char = [](char c, bool first) {
    return c == '_' || c == ':' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (!first && c >= '0' && c <= '9');
  };
  size_t i = 0;
  while (i < sel.size() && is_name_char(sel[i], i == 0)) ++i;
  if (i > 0) {
    if (Status st = add("__name__", std::string(sel.substr(0, i))); !st.ok()) return st;
  }
  if (i == sel.size()) {
    if (out.empty()) return bad("empty selector");
    return out;
  }
  if (sel[i] != '{' || sel.back() != '}') return bad("expected name{label=\"value\",...}");
  ++i;
  const size_t end = sel.size() - 1;
  while (i < end) {
    size_t start = i;
    while (i < end && is_name_char(sel[i], i == start)) ++i;
    if (i == start) return bad("expected a label name at offset " + std::to_string(start));
    std::string name(sel.substr(start, i - start));
    if (i >= end || sel[i] != '=') return bad("only equality matchers (label=\"value\")");
    ++i;
    if (i >= end || sel[i] != '"') return bad("label values must be double-quoted");
    ++i;
    std::string value;
    for (;; ++i) {
      if (i >= end) return bad("unterminated label value");
      char c = sel[i];
      if (c == '"') break;
      if (c == '\\' && i + 1 < end) {
        c = sel[++i];
        if (c == 'n') c = '\n';
      }
      value += c;
    }
    ++i;  // the closing quote
    if (Status st = add(std::move(name), std::move(value)); !st.ok()) return st;
    if (i < end) {
      if (sel[i] != ',') return bad("expected ',' at offset " + std::to_string(i));
      ++i;
    }
  }
  if (out.empty()) return bad("empty selector");
  return out;
}

// OpenMetrics label-value escaping.
void AppendEscaped(std::string_view v, std::string* out) {
  for (char c : v) {
    if (c == '\\') {
      *out += "\\\\";
    } else if (c == '"') {
      *out += "\\\"";
    } else if (c == '\n') {
      *out += "\\n";
    } else {
      *out += c;
    }
  }
}

// `name{a="b"}` (the name outside the braces, no braces without labels).
std::string SeriesPrefix(const Labels& labels) {
  std::string out(labels.Get("__name__"));
  bool open = false;
  for (const Label& l : labels) {
    if (l.name == "__name__") continue;
    out += open ? "," : "{";
    open = true;
    out += l.name;
    out += "=\"";
    AppendEscaped(l.value, &out);
    out += '"';
  }
  if (open) out += '}';
  return out;
}

// The shortest text that parses back to the same bits. Text formats have
// one NaN; the stale marker and other payloads get their own spellings.
void AppendValue(double v, std::string* out) {
  constexpr uint64_t kCanonicalNaN = 0x7ff8000000000000ULL;
  const uint64_t bits = std::bit_cast<uint64_t>(v);
  if (std::isnan(v)) {
    if (bits == kCanonicalNaN) {
      *out += "NaN";
    } else if (bits == tsdb::kStaleNaNBits) {
      *out += "StaleNaN";
    } else {
      char buf[32];
      snprintf(buf, sizeof buf, "NaN:0x%016" PRIx64, bits);
      *out += buf;
    }
    return;
  }
  if (std::isinf(v)) {
    *out += v > 0 ? "+Inf" : "-Inf";
    return;
  }
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out->append(buf, r.ptr);
}

// Milliseconds as exact decimal seconds ("12", "12.5", "-0.001").
void AppendSeconds(int64_t ms, std::string* out) {
  const uint64_t a = ms < 0 ? 0 - static_cast<uint64_t>(ms) : static_cast<uint64_t>(ms);
  char buf[32];
  int n =
      snprintf(buf, sizeof buf, "%s%" PRIu64 ".%03" PRIu64, ms < 0 ? "-" : "", a / 1000, a % 1000);
  while (buf[n - 1] == '0') --n;
  if (buf[n - 1] == '.') --n;
  out->append(buf, static_cast<size_t>(n));
}

// Writes every sample of the raw blocks in [mint, maxt] matching the
// matchers, series in label order. The WAL is not replayed (read-only, like
// inspect). Returns the number of samples.
Result<uint64_t> Dump(const std::string& dir, std::span<const tsdb::Matcher> matchers, int64_t mint,
                      int64_t maxt, FILE* out) {
  if (!fs::is_directory(dir)) return Status::Error(dir + " is not a directory");
  auto dirs = tsdb::block::ListBlockDirs(dir);
  if (!dirs.ok()) return dirs.status();
  std::vector<std::shared_ptr<tsdb::block::Block>> blocks;
  for (const auto& d : *dirs) {
    auto b = tsdb::block::Block::Open(d);
    if (!b.ok()) return b.status();
    const auto& m = (*b)->meta();
    // Downsampled tiers hold aggregates, not the stored samples.
    if (m.downsample_resolution_ms != 0 || m.max_time <= mint || m.min_time > maxt) continue;
    blocks.push_back(std::move(b).value());
  }
  std::sort(blocks.begin(), blocks.end(),
            [](const auto& a, const auto& b) { return a->meta().min_time < b->meta().min_time; });
  std::vector<std::unique_ptr<tsdb::Querier>> queriers;
  for (const auto& b : blocks) queriers.push_back(b->NewQuerier(mint, maxt));
  tsdb::db::MergeQuerier q(std::move(queriers));
  std::vector<tsdb::Matcher> all;
  if (matchers.empty()) {
    auto m = tsdb::Matcher::Make(tsdb::MatchType::kRegexMatch, "__name__", ".*");
    if (!m.ok()) return m.status();
    all.push_back(std::move(m).value());
    matchers = all;
  }
  uint64_t n = 0;
  std::string buf;
  auto set = q.Select(matchers);
  while (set->Next()) {
    const std::string prefix = SeriesPrefix(set->labels());
    auto it = set->Iterator();
    while (it->Next()) {
      const tsdb::Sample s = it->At();
      buf += prefix;
      buf += ' ';
      AppendValue(s.v, &buf);
      buf += ' ';
      AppendSeconds(s.t, &buf);
      buf += '\n';
      ++n;
      if (buf.size() >= (1 << 16)) {
        if (fwrite(buf.data(), 1, buf.size(), out) != buf.size()) {
          return Status::Error("writing the dump failed");
        }
        buf.clear();
      }
    }
    if (!it->status().ok()) {
      return it->status().WithContext("reading " + set->labels().ToString());
    }
  }
  if (!set->status().ok()) return set->status();
  if (fwrite(buf.data(), 1, buf.size(), out) != buf.size() || fflush(out) != 0) {
    return Status::Error("writing the dump failed");
  }
  return n;
}

int RunDump(const std::vector<std::string>& args) {
  auto flags = Flags::Parse(
      args,
      {{"data", true}, {"match", true}, {"min-time", true}, {"max-time", true}, {"help", false}});
  if (!flags.ok()) {
    std::cerr << "gpumon tsdb dump: " << flags.status().message() << "\n\n" << kTsdbUsage;
    return 2;
  }
  if (flags->Has("help")) {
    std::cout << kTsdbUsage;
    return 0;
  }
  auto mint = flags->GetInt("min-time", LONG_MIN, LONG_MIN, LONG_MAX);
  auto maxt = flags->GetInt("max-time", LONG_MAX, LONG_MIN, LONG_MAX);
  if (!mint.ok() || !maxt.ok() || !flags->Get("data")) {
    std::cerr << "gpumon tsdb dump: "
              << (!mint.ok()   ? mint.status().message()
                  : !maxt.ok() ? maxt.status().message()
                               : "needs --data DIR")
              << "\n";
    return 2;
  }
  std::vector<tsdb::Matcher> matchers;
  if (auto sel = flags->Get("match")) {
    auto parsed = ParseSelector(*sel);
    if (!parsed.ok()) {
      std::cerr << "gpumon tsdb dump: " << parsed.status().message() << "\n";
      return 2;
    }
    matchers = std::move(parsed).value();
  }
  auto n = Dump(*flags->Get("data"), matchers, *mint, *maxt, stdout);
  if (!n.ok()) {
    std::cerr << "gpumon tsdb dump: " << n.status().message() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

int RunTsdb(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::cerr << kTsdbUsage;
    return 2;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "import") return RunImport(rest);
  if (args[0] == "inspect") return RunInspect(rest);
  if (args[0] == "dump") return RunDump(rest);
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kTsdbUsage;
    return 0;
  }
  std::cerr << "gpumon tsdb: unknown verb \"" << args[0] << "\"\n\n" << kTsdbUsage;
  return 2;
}

}  // namespace gpumon::cli
