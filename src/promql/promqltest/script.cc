#include "promql/promqltest/script.h"

#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <utility>

#include "promql/promqltest/duration.h"

namespace gpumon::promql::promqltest {

namespace {

// The command grammar, as Prometheus's promqltest matches it.
const RE2& LoadRe() {
  static const RE2 re(R"(load(?:_(with_nhcb))?\s+(.+?))");
  return re;
}
const RE2& EvalInstantRe() {
  static const RE2 re(R"(eval(?:_(fail|warn|ordered|info))?\s+instant\s+(?:at\s+(.+?))?\s+(.+))");
  return re;
}
const RE2& EvalRangeRe() {
  static const RE2 re(
      R"(eval(?:_(fail|warn|info))?\s+range\s+from\s+(.+)\s+to\s+(.+)\s+step\s+(.+?)\s+(.+))");
  return re;
}
const RE2& ExpectRe() {
  static const RE2 re(
      R"(expect\s+(ordered|fail|warn|no_warn|info|no_info)(?:\s+(regex|msg):(.+))?)");
  return re;
}
const RE2& ExpectRangeRe() {
  static const RE2 re(R"(expect range vector\s+from\s+(.+)\s+to\s+(.+)\s+step\s+(.+))");
  return re;
}

constexpr std::string_view kExpectRangePrefix = "expect range vector";
constexpr std::string_view kExpectStringPrefix = "expect string";

std::string_view Trim(std::string_view s) {
  auto space = [](char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
  };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

std::vector<std::string> ScriptLines(std::string_view text) {
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view l = Trim(text.substr(pos, nl - pos));
    if (!l.empty() && l[0] == '#') l = {};
    lines.emplace_back(l);
    pos = nl + 1;
  }
  return lines;
}

// Go's strconv.Unquote for "..." and `...` literals.
Result<std::string> Unquote(std::string_view s) {
  auto bad = Status::Error(
      "expected string literal not valid - check that the string is correctly quoted");
  if (s.size() < 2) return bad;
  char q = s.front();
  if (q != s.back() || (q != '"' && q != '`' && q != '\'')) return bad;
  std::string_view body = s.substr(1, s.size() - 2);
  if (q == '`') {
    if (body.find('`') != std::string_view::npos) return bad;
    std::string out;
    for (char c : body) {
      if (c != '\r') out.push_back(c);
    }
    return out;
  }
  std::string out;
  auto append_utf8 = [&](uint32_t cp) {
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  };
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c == q || c == '\n') return bad;
    if (c != '\\') {
      out.push_back(c);
      continue;
    }
    if (++i >= body.size()) return bad;
    char e = body[i];
    switch (e) {
      case 'a':
        out.push_back('\a');
        break;
      case 'b':
        out.push_back('\b');
        break;
      case 'f':
        out.push_back('\f');
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'v':
        out.push_back('\v');
        break;
      case '\\':
        out.push_back('\\');
        break;
      case '"':
      case '\'':
        if (e != q) return bad;
        out.push_back(e);
        break;
      case 'x':
      case 'u':
      case 'U': {
        size_t n = e == 'x' ? 2 : (e == 'u' ? 4 : 8);
        uint32_t v = 0;
        for (size_t k = 1; k <= n; ++k) {
          if (i + k >= body.size()) return bad;
          int h = hex(body[i + k]);
          if (h < 0) return bad;
          v = v * 16 + static_cast<uint32_t>(h);
        }
        i += n;
        if (e == 'x') {
          out.push_back(static_cast<char>(v));
        } else {
          if (v > 0x10FFFF) return bad;
          append_utf8(v);
        }
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          uint32_t v = 0;
          for (size_t k = 0; k < 3; ++k) {
            if (i + k >= body.size() || body[i + k] < '0' || body[i + k] > '7') return bad;
            v = v * 8 + static_cast<uint32_t>(body[i + k] - '0');
          }
          if (v > 255) return bad;
          i += 2;
          out.push_back(static_cast<char>(v));
          break;
        }
        return bad;
    }
  }
  return out;
}

Result<SeriesSpec> ParseSeriesLine(std::string_view line, int line_no) {
  Result<SeriesLineParts> parts = SplitSeriesLine(line);
  if (!parts.ok()) return parts.status();
  Result<SeriesValues> vals = ExpandSeriesValues(parts->values);
  if (!vals.ok()) return vals.status();
  SeriesSpec spec;
  spec.line = line_no;
  spec.metric = std::string(parts->metric);
  spec.values = std::move(vals->values);
  spec.histogram = vals->histogram;
  return spec;
}

// A start-timestamp line: the series part ends in "@st" right before the
// first space.
bool IsStartTimestampLine(std::string_view line) {
  size_t sp = line.find_first_of(" \t");
  if (sp == std::string_view::npos) return false;
  std::string_view head = line.substr(0, sp);
  return head.size() >= 3 && head.substr(head.size() - 3) == "@st";
}

class Parser {
 public:
  Parser(std::string_view text, std::string file) : lines_(ScriptLines(text)) {
    script_.file = std::move(file);
  }

  Script Run() {
    for (i_ = 0; i_ < lines_.size(); ++i_) {
      const std::string& l = lines_[i_];
      if (l.empty()) continue;
      std::string first = l.substr(0, l.find_first_of(" \t"));
      std::transform(first.begin(), first.end(), first.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      size_t start = i_;
      Status st;
      if (first == "clear") {
        script_.commands.push_back(ClearCommand{static_cast<int>(i_ + 1)});
      } else if (first.rfind("load", 0) == 0) {
        st = ParseLoad();
      } else if (first.rfind("eval", 0) == 0) {
        st = ParseEval();
      } else {
        st = Status::Error("invalid command \"" + l + "\"");
      }
      if (!st.ok()) {
        script_.commands.push_back(
            ErrorCommand{static_cast<int>(err_line_ ? err_line_ : start + 1), st.message()});
        err_line_ = 0;
        // Resume after the broken block.
        while (i_ + 1 < lines_.size() && !lines_[i_ + 1].empty()) ++i_;
      }
    }
    return std::move(script_);
  }

 private:
  Status Fail(size_t line_index, std::string msg) {
    err_line_ = line_index + 1;
    return Status::Error(std::move(msg));
  }

  Status ParseLoad() {
    std::string with_nhcb, interval;
    if (!RE2::FullMatch(lines_[i_], LoadRe(), &with_nhcb, &interval)) {
      return Fail(i_, "invalid load command. (load[_with_nhcb] <step:duration>)");
    }
    Result<int64_t> gap = ParseScriptDuration(interval);
    if (!gap.ok()) {
      return Fail(i_, "invalid step definition \"" + interval + "\": " + gap.status().message());
    }
    LoadCommand cmd;
    cmd.line = static_cast<int>(i_ + 1);
    cmd.interval_ms = *gap;
    cmd.with_nhcb = with_nhcb == "with_nhcb";
    while (i_ + 1 < lines_.size() && !lines_[i_ + 1].empty()) {
      ++i_;
      if (IsStartTimestampLine(lines_[i_])) continue;
      Result<SeriesSpec> spec = ParseSeriesLine(lines_[i_], static_cast<int>(i_ + 1));
      if (!spec.ok()) return Fail(i_, spec.status().message());
      cmd.series.push_back(std::move(spec.value()));
    }
    script_.commands.push_back(std::move(cmd));
    return Status::Ok();
  }

  Status ParseEval() {
    const std::string header = lines_[i_];
    std::string mod, at, query, from, to, step;
    EvalCommand cmd;
    cmd.line = static_cast<int>(i_ + 1);
    if (RE2::FullMatch(header, EvalInstantRe(), &mod, &at, &query)) {
      Result<int64_t> t = ParseScriptDuration(at);
      if (!t.ok()) {
        return Fail(i_, "invalid timestamp definition \"" + at + "\": " + t.status().message());
      }
      cmd.eval_ms = cmd.start_ms = *t;
    } else if (RE2::FullMatch(header, EvalRangeRe(), &mod, &from, &to, &step, &query)) {
      cmd.is_range = true;
      Status st = ParseRange(from, to, step, cmd);
      if (!st.ok()) return Fail(i_, st.message());
    } else {
      return Fail(i_,
                  "invalid evaluation command. Must be either 'eval[_fail|_warn|_ordered] instant "
                  "[at <offset:duration>] <query>' or 'eval[_fail|_warn] range from <from> to "
                  "<to> step <step> <query>'");
    }
    cmd.query = query;
    cmd.ordered = mod == "ordered";
    cmd.fail = mod == "fail";
    cmd.warn = mod == "warn";
    cmd.info = mod == "info";

    while (i_ + 1 < lines_.size() && !lines_[i_ + 1].empty()) {
      ++i_;
      const std::string& l = lines_[i_];
      if (cmd.fail && l.rfind("expected_fail_message", 0) == 0) {
        cmd.expected_fail_message = std::string(Trim(std::string_view(l).substr(21)));
        break;
      }
      if (cmd.fail && l.rfind("expected_fail_regexp", 0) == 0) {
        std::string pattern(Trim(std::string_view(l).substr(20)));
        RE2 re(pattern, RE2::Quiet);
        if (!re.ok()) {
          return Fail(i_,
                      "invalid regexp '" + pattern + "' for expected_fail_regexp: " + re.error());
        }
        cmd.expected_fail_regexp = pattern;
        break;
      }
      if (l.rfind(kExpectRangePrefix, 0) == 0) {
        if (!RE2::FullMatch(l, ExpectRangeRe(), &from, &to, &step)) {
          return Fail(i_, "invalid range vector definition \"" + l + "\"");
        }
        Status st = ParseRange(from, to, step, cmd);
        if (!st.ok()) return Fail(i_, st.message());
        cmd.expect_range_vector = true;
        cmd.eval_ms = cmd.end_ms;
        cmd.exclude_from_range_query = true;
        continue;
      }
      if (l.rfind(kExpectStringPrefix, 0) == 0) {
        std::string_view rest = std::string_view(l).substr(kExpectStringPrefix.size());
        if (rest.empty() || rest[0] != ' ' || rest.size() == 1) {
          return Fail(i_,
                      "expected string literal not valid - a quoted string literal is required");
        }
        Result<std::string> s = Unquote(rest.substr(1));
        if (!s.ok()) return Fail(i_, s.status().message());
        cmd.expected_string = *s;
        cmd.exclude_from_range_query = true;
        continue;
      }
      if (l.substr(0, l.find(' ')) == "expect") {
        Status st = ParseExpect(l, cmd);
        if (!st.ok()) return Fail(i_, st.message());
        continue;
      }
      if (std::optional<double> f = ParseScriptNumber(l)) {
        cmd.expected_scalar = *f;
        break;
      }
      Result<SeriesSpec> spec = ParseSeriesLine(l, static_cast<int>(i_ + 1));
      if (!spec.ok()) return Fail(i_, spec.status().message());
      if (spec->values.size() > 1 && !cmd.is_range && !cmd.expect_range_vector) {
        return Fail(i_,
                    "expecting multiple values in instant evaluation not allowed. consider using "
                    "'expect range vector' directive to enable a range vector result for an "
                    "instant query");
      }
      cmd.expected_scalar.reset();
      cmd.expected.push_back(std::move(spec.value()));
    }
    script_.commands.push_back(std::move(cmd));
    return Status::Ok();
  }

  static Status ParseRange(const std::string& from, const std::string& to, const std::string& step,
                           EvalCommand& cmd) {
    Result<int64_t> f = ParseScriptDuration(from);
    if (!f.ok())
      return Status::Error("invalid start timestamp definition \"" + from +
                           "\": " + f.status().message());
    Result<int64_t> t = ParseScriptDuration(to);
    if (!t.ok())
      return Status::Error("invalid end timestamp definition \"" + to +
                           "\": " + t.status().message());
    if (*t < *f) {
      return Status::Error("invalid test definition, end timestamp (" + to +
                           ") is before start timestamp (" + from + ")");
    }
    Result<int64_t> s = ParseScriptDuration(step);
    if (!s.ok())
      return Status::Error("invalid step definition \"" + step + "\": " + s.status().message());
    cmd.start_ms = *f;
    cmd.end_ms = *t;
    cmd.step_ms = *s;
    return Status::Ok();
  }

  static Status ParseExpect(const std::string& line, EvalCommand& cmd) {
    std::string type, kind, text;
    if (!RE2::FullMatch(Trim(line), ExpectRe(), &type, &kind, &text)) {
      return Status::Error(
          "invalid expect statement, must match `expect <type> <match_type>: <string>` format");
    }
    Expectation e;
    static const std::pair<const char*, ExpectType> kTypes[] = {
        {"ordered", ExpectType::kOrdered}, {"fail", ExpectType::kFail},
        {"warn", ExpectType::kWarn},       {"no_warn", ExpectType::kNoWarn},
        {"info", ExpectType::kInfo},       {"no_info", ExpectType::kNoInfo},
    };
    for (const auto& [name, t] : kTypes) {
      if (type == name) e.type = t;
    }
    if (kind == "msg") {
      e.match = Expectation::Match::kMessage;
      e.text = std::string(Trim(text));
    } else if (kind == "regex") {
      e.match = Expectation::Match::kRegex;
      e.text = std::string(Trim(text));
      RE2 re(e.text, RE2::Quiet);
      if (!re.ok()) return Status::Error("invalid regex " + e.text + " for " + type);
    }
    cmd.expects.push_back(e);
    auto count = [&](ExpectType t) {
      return std::count_if(cmd.expects.begin(), cmd.expects.end(),
                           [&](const Expectation& x) { return x.type == t; });
    };
    if (count(ExpectType::kInfo) > 0 && count(ExpectType::kNoInfo) > 0) {
      return Status::Error("invalid expect lines, info and no_info cannot be used together");
    }
    if (count(ExpectType::kWarn) > 0 && count(ExpectType::kNoWarn) > 0) {
      return Status::Error("invalid expect lines, warn and no_warn cannot be used together");
    }
    if (count(ExpectType::kFail) > 1) {
      return Status::Error("invalid expect lines, multiple expect fail lines are not allowed");
    }
    return Status::Ok();
  }

  std::vector<std::string> lines_;
  size_t i_ = 0;
  size_t err_line_ = 0;  // 1-based line of the last error, 0: the command's
  Script script_;
};

}  // namespace

const char* ExpectTypeName(ExpectType t) {
  switch (t) {
    case ExpectType::kOrdered:
      return "ordered";
    case ExpectType::kFail:
      return "fail";
    case ExpectType::kWarn:
      return "warn";
    case ExpectType::kNoWarn:
      return "no_warn";
    case ExpectType::kInfo:
      return "info";
    case ExpectType::kNoInfo:
      return "no_info";
  }
  return "?";
}

bool EvalCommand::Has(ExpectType t) const {
  return std::any_of(expects.begin(), expects.end(),
                     [&](const Expectation& e) { return e.type == t; });
}
bool EvalCommand::IsOrdered() const { return ordered || Has(ExpectType::kOrdered); }
bool EvalCommand::IsFail() const { return fail || Has(ExpectType::kFail); }
bool EvalCommand::ExpectsHistogram() const {
  return std::any_of(expected.begin(), expected.end(),
                     [](const SeriesSpec& s) { return s.histogram; });
}

Script ParseScript(std::string_view text, std::string file) {
  return Parser(text, std::move(file)).Run();
}

}  // namespace gpumon::promql::promqltest
