// Unit-test files (promtool test rules): the DCGM-named variant
// (rules_convert.h).

#include <yaml-cpp/yaml.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "cli/rules_convert.h"
#include "cli/template_rewrite.h"
#include "cli/yaml_doc.h"
#include "common/path_glob.h"
#include "promql/parser.h"
#include "promql/promqltest/series_values.h"
#include "rules/unit_test_file.h"
#include "tsdb/sample.h"

namespace gpumon::cli {
namespace {

using promql::promqltest::SequenceValue;

struct SeriesLabels {
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;  // in source order, no __name__
};

Result<SeriesLabels> ParseSeries(const std::string& text) {
  promql::ParseResult p = promql::Parse(text);
  const promql::VectorSelector* vs =
      p.ok() ? std::get_if<promql::VectorSelector>(&p.expr->node) : nullptr;
  SeriesLabels out;
  if (!vs) {
    // Not a selector ({} for instance): the series notation, in label order.
    auto labels = promql::ParseMetric(text);
    if (!labels.ok()) return Status::Error("not a series: " + text);
    for (const auto& l : *labels) {
      if (l.name == "__name__") {
        out.name = l.value;
      } else {
        out.labels.push_back({l.name, l.value});
      }
    }
    return out;
  }
  out.name = vs->name;
  for (const auto& m : vs->matchers) {
    if (m.type() != tsdb::MatchType::kEqual) return Status::Error("not a series: " + text);
    if (m.name() == "__name__") {
      out.name = m.value();
    } else {
      out.labels.push_back({m.name(), m.value()});
    }
  }
  return out;
}

std::string QuoteValue(const std::string& v) {
  std::string out = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string SeriesText(const SeriesLabels& s) {
  std::string out = s.name;
  if (s.labels.empty()) return out.empty() ? "{}" : out;
  out += "{";
  for (size_t i = 0; i < s.labels.size(); ++i) {
    if (i) out += ",";
    out += s.labels[i].first + "=" + QuoteValue(s.labels[i].second);
  }
  return out + "}";
}

std::string Number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Inf" : "-Inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

// Scales every number of a series' value notation, keeping its shape.
Result<std::string> ScaleValues(const std::string& values, double scale) {
  if (scale == 1) return values;
  std::istringstream in(values);
  std::string tok, out;
  auto number = [&](std::string_view t) -> Result<double> {
    auto v = promql::promqltest::ParseScriptNumber(t);
    if (!v) return Status::Error("cannot scale the series value \"" + tok + "\"");
    return *v;
  };
  while (in >> tok) {
    if (!out.empty()) out += ' ';
    if (tok[0] == '_' || tok == "stale") {
      out += tok;
      continue;
    }
    if (tok.find("{{") != std::string::npos) {
      return Status::Error("native-histogram series values cannot be scaled");
    }
    size_t x = tok.rfind('x');
    bool expanding = x != std::string::npos && x > 0 && x + 1 < tok.size() &&
                     tok.find_first_not_of("0123456789", x + 1) == std::string::npos;
    std::string head = expanding ? tok.substr(0, x) : tok;
    size_t split = std::string::npos;
    if (expanding) {
      for (size_t i = 1; i < head.size(); ++i) {
        if ((head[i] == '+' || head[i] == '-') && head[i - 1] != 'e' && head[i - 1] != 'E') {
          split = i;
          break;
        }
      }
    }
    auto a = number(head.substr(0, split));
    if (!a.ok()) return a.status();
    out += Number(*a * scale);
    if (split != std::string::npos) {
      auto b = number(head.substr(split + 1));
      if (!b.ok()) return b.status();
      out += head[split];
      out += Number(*b * scale);
    }
    if (expanding) out += tok.substr(x);
  }
  return out;
}

// A value sequence in compact notation (runs of one value as `vxN`).
std::string CompactValues(const std::vector<SequenceValue>& values) {
  std::string out;
  for (size_t i = 0; i < values.size();) {
    size_t j = i + 1;
    auto same = [&](const SequenceValue& a, const SequenceValue& b) {
      if (a.omitted || b.omitted) return a.omitted == b.omitted;
      return std::bit_cast<uint64_t>(a.value) == std::bit_cast<uint64_t>(b.value);
    };
    while (j < values.size() && same(values[i], values[j])) ++j;
    if (!out.empty()) out += ' ';
    size_t n = j - i;
    if (values[i].omitted) {
      out += n == 1 ? "_" : "_x" + std::to_string(n);
    } else if (tsdb::IsStaleNaN(values[i].value)) {
      for (size_t k = 0; k < n; ++k) out += k ? " stale" : "stale";
    } else {
      out += Number(values[i].value);
      if (n > 1) out += "x" + std::to_string(n - 1);
    }
    i = j;
  }
  return out;
}

// Per-bit series (value 0/1) of one GPU merged into one mask series.
struct MaskSeries {
  SeriesLabels labels;
  std::vector<std::pair<uint64_t, std::string>> bits;  // bit, value notation
  size_t position = 0;                                 // index in the output list
};

Result<std::string> MergeMask(const MaskSeries& m) {
  std::vector<std::vector<SequenceValue>> expanded;
  size_t len = 0;
  for (const auto& [bit, text] : m.bits) {
    auto v = promql::promqltest::ExpandSeriesValues(text);
    if (!v.ok()) return v.status();
    if (v->histogram) return Status::Error("native-histogram values cannot form a bit mask");
    len = std::max(len, v->values.size());
    expanded.push_back(std::move(v->values));
  }
  std::vector<SequenceValue> out(len);
  size_t members = 0;
  for (const auto& e : expanded) members += e.empty() ? 0 : 1;
  for (size_t i = 0; i < len; ++i) {
    size_t present = 0, stale = 0;
    double mask = 0;
    for (size_t k = 0; k < expanded.size(); ++k) {
      // A shorter series keeps its last value (what a query sees of it
      // within the lookback window).
      const auto& e = expanded[k];
      if (e.empty()) continue;
      const SequenceValue& sv = i < e.size() ? e[i] : e.back();
      if (sv.omitted) continue;
      ++present;
      double v = sv.value;
      if (tsdb::IsStaleNaN(v)) {
        ++stale;
      } else if (v == 1) {
        mask += static_cast<double>(m.bits[k].first);
      } else if (v != 0) {
        return Status::Error(SeriesText(m.labels) + ": value " + Number(v) +
                             " of a per-reason series is not 0 or 1");
      }
    }
    if (present == 0) {
      out[i].omitted = true;
    } else if (present != members || (stale && stale != present)) {
      return Status::Error(SeriesText(m.labels) +
                           ": the per-reason series have samples at different steps, which one "
                           "mask series cannot hold");
    } else {
      out[i].value = stale ? tsdb::StaleNaN() : mask;
    }
  }
  return CompactValues(out);
}

std::vector<std::string> ResolveRuleFiles(const std::string& test_path, const YamlNode* list) {
  std::vector<std::string> out;
  if (!list || !list->IsSeq()) return out;
  auto dir = std::filesystem::path(test_path).parent_path();
  for (const auto& item : list->seq) {
    if (!item.IsScalar()) continue;
    std::filesystem::path p(item.text);
    std::string pattern = (p.is_absolute() ? p : dir / p).string();
    std::vector<std::string> matched = GlobPaths(pattern);
    if (matched.empty()) {
      out.push_back(pattern);  // reading it reports the error
    } else {
      out.insert(out.end(), matched.begin(), matched.end());
    }
  }
  return out;
}

}  // namespace

Result<std::string> DcgmRuleConverter::ConvertTestFile(const SourceFile& input) {
  auto spec = rules::ParseUnitTestFile(input.text, input.path);
  if (!spec.ok()) return spec.status();
  YamlNode doc;
  try {
    doc = FromYaml(YAML::Load(input.text));
  } catch (const YAML::Exception& e) {
    return Status::Error(input.path + ": invalid YAML: " + e.msg);
  }
  // The rules under test, converted in memory: which alerts and records stay.
  std::vector<SourceFile> rule_files;
  for (const auto& path : ResolveRuleFiles(input.path, doc.Find("rule_files"))) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Status::Error(input.path + ": cannot read rule file " + path);
    std::stringstream ss;
    ss << in.rdbuf();
    rule_files.push_back({path, ss.str(), path});
  }
  DcgmRuleConverter rules;
  std::set<std::string> dropped_alerts;
  auto converted = rules.Convert(rule_files, &dropped_alerts);
  if (!converted.ok()) return converted.status();
  const promql::RewriteMap& map = rules.map();

  auto rename = [&](std::vector<std::pair<std::string, std::string>>* labels) -> Status {
    for (auto& [k, v] : *labels) {
      if (map.unmapped_labels.count(k)) {
        return Status::Error("label \"" + k + "\" has no DCGM equivalent");
      }
      k = promql::RenameLabel(map, k);
    }
    return Status::Ok();
  };
  // The variant of a mapped metric that holds this series, or nullptr.
  auto variant_of = [&](const promql::MetricMapping& mm,
                        const SeriesLabels& s) -> const promql::SelectorVariant* {
    for (const auto& v : mm.variants) {
      bool match = true;
      for (const auto& [l, value] : v.fixed_labels) {
        bool found = false;
        for (const auto& [k, val] : s.labels) found = found || (k == l && val == value);
        match = match && found;
      }
      for (const auto& m : v.matchers) {
        std::string value;
        for (const auto& [k, val] : s.labels) {
          if (promql::RenameLabel(map, k) == m.name()) value = val;
        }
        match = match && m.Matches(value);
      }
      if (match) return &v;
    }
    return nullptr;
  };
  auto without_fixed = [](SeriesLabels s, const promql::SelectorVariant& v) {
    std::erase_if(s.labels, [&](const auto& kv) {
      for (const auto& [l, value] : v.fixed_labels) {
        if (l == kv.first) return true;
      }
      return false;
    });
    return s;
  };

  YamlNode* tests = doc.Find("tests");
  std::string file = input.path;
  if (tests && tests->IsSeq()) {
    std::vector<YamlNode> kept_tests;
    int index = 0;
    for (auto& test : tests->seq) {
      ++index;
      const YamlNode* tname = test.Find("name");
      std::string test_name = tname && !tname->text.empty() ? "test \"" + tname->text + "\""
                                                            : "test " + std::to_string(index);
      if (YamlNode* ext = test.Find("external_labels"); ext && ext->IsMap()) {
        for (auto& [k, v] : ext->map) k = promql::RenameLabel(map, k);
      }
      // input_series
      if (YamlNode* series = test.Find("input_series"); series && series->IsSeq()) {
        std::vector<YamlNode> out;
        std::map<std::string, MaskSeries> masks;
        for (auto& item : series->seq) {
          YamlNode* s = item.Find("series");
          YamlNode* values = item.Find("values");
          if (!s || !s->IsScalar()) {
            out.push_back(item);
            continue;
          }
          auto parsed = ParseSeries(s->text);
          if (!parsed.ok()) return parsed.status().WithContext(file + ": " + test_name);
          SeriesLabels target = *parsed;
          auto it = map.metrics.find(parsed->name);
          if (it == map.metrics.end()) {
            Status known = map.unknown_metric ? map.unknown_metric(parsed->name) : Status::Ok();
            if (!known.ok()) {
              out.push_back(
                  YamlNode::Comment("series " + s->text + " left out: " + known.message()));
              continue;
            }
            Status r = rename(&target.labels);
            if (!r.ok()) return r.WithContext(file + ": " + test_name + ": " + s->text);
            s->SetText(SeriesText(target));
            out.push_back(item);
            continue;
          }
          const promql::SelectorVariant* v = variant_of(it->second, *parsed);
          if (!v) {
            out.push_back(YamlNode::Comment("series " + s->text + " left out: no DCGM series"));
            continue;
          }
          target = without_fixed(*parsed, *v);
          target.name = v->name;
          Status r = rename(&target.labels);
          if (!r.ok()) return r.WithContext(file + ": " + test_name + ": " + s->text);
          std::string value_text = values && values->IsScalar() ? values->text : "";
          if (v->bit) {
            std::string key = SeriesText(target);
            auto [m, fresh] = masks.try_emplace(key);
            if (fresh) {
              m->second.labels = target;
              m->second.position = out.size();
              YamlNode placeholder = item;
              out.push_back(std::move(placeholder));
            }
            m->second.bits.push_back({v->bit, value_text});
            continue;
          }
          s->SetText(SeriesText(target));
          if (values && values->IsScalar()) {
            auto scaled = ScaleValues(values->text, v->scale);
            if (!scaled.ok()) return scaled.status().WithContext(file + ": " + test_name);
            values->SetText(*scaled);
          }
          out.push_back(item);
        }
        for (auto& [key, m] : masks) {
          auto merged = MergeMask(m);
          if (!merged.ok()) return merged.status().WithContext(file + ": " + test_name);
          YamlNode& item = out[m.position];
          if (YamlNode* s = item.Find("series")) s->SetText(key);
          if (YamlNode* values = item.Find("values")) values->SetText(*merged);
        }
        series->seq = std::move(out);
      }
      size_t had = 0, kept = 0;
      // alert_rule_test
      if (YamlNode* alerts = test.Find("alert_rule_test"); alerts && alerts->IsSeq()) {
        std::vector<YamlNode> out;
        for (auto& a : alerts->seq) {
          ++had;
          const YamlNode* name = a.Find("alertname");
          if (name && dropped_alerts.count(name->text)) {
            const YamlNode* at = a.Find("eval_time");
            std::string when = at && at->IsScalar() ? " at " + at->text : "";
            out.push_back(YamlNode::Comment("test of alert " + name->text + when +
                                            " left out: the alert was not converted"));
            continue;
          }
          if (YamlNode* exp = a.Find("exp_alerts"); exp && exp->IsSeq()) {
            for (auto& e : exp->seq) {
              if (YamlNode* labels = e.Find("exp_labels"); labels && labels->IsMap()) {
                for (auto& [k, v] : labels->map) {
                  if (map.unmapped_labels.count(k)) {
                    return Status::Error(file + ": " + test_name + ": label \"" + k +
                                         "\" has no DCGM equivalent");
                  }
                  k = promql::RenameLabel(map, k);
                }
              }
              // Rendered prose names metrics as the converted templates do.
              if (YamlNode* ann = e.Find("exp_annotations"); ann && ann->IsMap()) {
                for (auto& [k, v] : ann->map) {
                  if (v.IsScalar()) v.SetText(RenameMetricsInText(v.text, map));
                }
              }
            }
          }
          ++kept;
          out.push_back(std::move(a));
        }
        alerts->seq = std::move(out);
      }
      // promql_expr_test
      if (YamlNode* exprs = test.Find("promql_expr_test"); exprs && exprs->IsSeq()) {
        std::vector<YamlNode> out;
        for (auto& t : exprs->seq) {
          ++had;
          YamlNode* expr = t.Find("expr");
          if (!expr || !expr->IsScalar()) {
            out.push_back(std::move(t));
            continue;
          }
          auto r = ConvertExpr(map, expr->text);
          Status failed = r.ok() ? Status::Ok() : r.status();
          if (failed.ok()) {
            expr->SetText(*r);
            YamlNode* samples = t.Find("exp_samples");
            for (size_t i = 0; samples && samples->IsSeq() && i < samples->seq.size(); ++i) {
              YamlNode* labels = samples->seq[i].Find("labels");
              if (!labels || !labels->IsScalar() || labels->text.empty()) continue;
              auto s = ParseSeries(labels->text);
              if (!s.ok()) return s.status().WithContext(file + ": " + test_name);
              SeriesLabels target = *s;
              auto it = map.metrics.find(s->name);
              if (it != map.metrics.end()) {
                const promql::SelectorVariant* v = variant_of(it->second, *s);
                if (!v) {
                  failed = Status::Error("no DCGM series for " + labels->text);
                  break;
                }
                // The rewrite keeps the name only where it keeps the values.
                target.name = v->scale == 1 && v->bit == 0 ? v->name : "";
              }
              Status rn = rename(&target.labels);
              if (!rn.ok()) return rn.WithContext(file + ": " + test_name);
              labels->SetText(SeriesText(target));
            }
          }
          if (!failed.ok()) {
            out.push_back(YamlNode::Comment("expression test of " + expr->text +
                                            " left out: " + failed.message()));
            dropped_.push_back(file + ": " + test_name + ": expression test \"" + expr->text +
                               "\": " + failed.message());
            continue;
          }
          ++kept;
          out.push_back(std::move(t));
        }
        exprs->seq = std::move(out);
      }
      if (had > 0 && kept == 0) {
        kept_tests.push_back(YamlNode::Comment(
            test_name + " left out: it tests only rules that were not converted"));
        dropped_.push_back(file + ": " + test_name +
                           ": left out: it tests only rules that were not converted");
        continue;
      }
      kept_tests.push_back(std::move(test));
    }
    tests->seq = std::move(kept_tests);
  }
  return WriteYaml(
      doc, {"generated by gpumon rules convert from " + input.header_name + "; do not edit"});
}

}  // namespace gpumon::cli
