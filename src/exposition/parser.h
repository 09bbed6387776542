// Streaming parser for the Prometheus text exposition format 0.0.4 and
// OpenMetrics 1.0 text format, as served on /metrics by scrape targets.
//
// Contract:
// - Input is untrusted (it comes off the network). The parser never reads
//   outside the given buffer, never throws, terminates in time linear in the
//   input (n log n for pathological label sets), and holds at most
//   O(max_line_length) memory of its own. Every malformed input yields a
//   Status whose message starts with "line L, column C: " (1-based, columns
//   in bytes) and says what was expected and what was found.
// - Parser::Next() yields one Entry per sample or metadata line; comments and
//   (in 0.0.4) blank lines are skipped. Strings in an Entry are views into
//   the input, or into the parser's scratch memory when unescaping was
//   needed; they stay valid until the next call to Next(). The input buffer
//   must outlive the parser.
// - The end of the exposition is reported as an Entry of kind kEof: at the
//   end of the input for 0.0.4, at the mandatory "# EOF" line for
//   OpenMetrics (nothing may follow it but one optional newline). Once an
//   error or kEof is returned, every later call returns it again.
// - See docs/formats/exposition.md for the exact grammar accepted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "exposition/format.h"
#include "exposition/metric_family.h"

namespace gpumon::exposition {

struct LabelView {
  std::string_view name;
  std::string_view value;  // unescaped
};

enum class EntryKind { kSample, kHelp, kType, kUnit, kEof };

struct ExemplarView {
  std::span<const LabelView> labels;
  double value = 0;
  std::optional<int64_t> timestamp_ms;
};

struct Entry {
  EntryKind kind = EntryKind::kEof;
  size_t line = 0;  // 1-based line the entry came from (0 for 0.0.4's kEof)

  // kSample: the sample name; kHelp/kType/kUnit: the metric family name.
  std::string_view name;

  // kSample only.
  // The name and label set exactly as written (identifies the series for
  // a scraper that caches what it has seen; a view into the input).
  std::string_view series;
  std::span<const LabelView> labels;  // in input order, no duplicates
  double value = 0;
  std::optional<int64_t> timestamp_ms;   // OpenMetrics seconds are converted
  std::optional<ExemplarView> exemplar;  // OpenMetrics only

  std::string_view text;                   // kHelp: unescaped help; kUnit: the unit
  MetricType type = MetricType::kUnknown;  // kType ("untyped" maps to kUnknown)
};

struct ParserOptions {
  // Longest accepted line in bytes, excluding its newline.
  size_t max_line_length = size_t{1} << 20;
};

class Parser {
 public:
  Parser(std::string_view input, Format format, ParserOptions options = {});

  // Fills `entry` with the next entry, or returns the parse error.
  Status Next(Entry& entry);

 private:
  struct Cursor;

  Status Fail(size_t column, std::string message);
  Status Expected(const Cursor& c, std::string_view what);
  Status ParseTextComment(Cursor& c, Entry& entry, bool& produced);
  Status ParseOpenMetricsComment(Cursor& c, Entry& entry);
  Status ParseMetadata(Cursor& c, EntryKind kind, Entry& entry);
  Status ParseSample(Cursor& c, Entry& entry);
  Status ParseLabelSet(Cursor& c, std::vector<LabelView>& out, bool is_exemplar);
  Status ParseLabelValue(Cursor& c, std::string_view& value);
  Status CheckDuplicateLabels(const Cursor& c, const std::vector<LabelView>& labels);
  Status ParseOpenMetricsTimestamp(Cursor& c, std::optional<int64_t>& out);
  Status ParseExemplar(Cursor& c, Entry& entry);
  Status TrackFamilyMetadata(const Cursor& c, std::string_view name, EntryKind kind);
  Status TrackFamilySample(const Cursor& c, std::string_view name);
  std::string_view Unescape(std::string_view raw, bool allow_quote);

  std::string_view input_;
  Format format_;
  ParserOptions options_;
  size_t pos_ = 0;        // start of the next unread line
  size_t next_line_ = 1;  // number of that line
  size_t line_ = 0;       // number of the line being parsed
  bool done_ = false;
  Status error_;

  // Reused across entries so that the hot path does not allocate.
  std::vector<LabelView> labels_;
  std::vector<LabelView> exemplar_labels_;
  std::vector<std::string_view> sorted_names_;
  std::string scratch_;  // unescaped strings; capacity >= current line

  // OpenMetrics metric family being read, to validate sample names.
  struct Family {
    std::string_view name;
    MetricType type = MetricType::kUnknown;
    bool has_type = false;
    bool has_help = false;
    bool has_unit = false;
    bool has_samples = false;
  };
  std::optional<Family> family_;
};

// Copies a label view list into owned labels.
std::vector<Label> ToLabels(std::span<const LabelView> labels);

// Parses a whole exposition and groups its samples into families, in order
// of first appearance. Samples sharing a name form one MetricFamily named
// like the sample (counters keep "_total", info metrics "_info"); histogram
// and summary components (_bucket, _sum, _count, _created, ...) therefore
// become one family per component name, each with the declared type, help
// and unit. Samples without metadata get MetricType::kUnknown. Metadata
// without samples yields an empty family. Meant for tests and tooling; the
// scrape path uses Parser directly.
Result<std::vector<MetricFamily>> ParseToFamilies(std::string_view input, Format format,
                                                  ParserOptions options = {});

}  // namespace gpumon::exposition
