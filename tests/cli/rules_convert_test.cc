// gpumon rules convert: template rewriting, the YAML writer, rule-file and
// unit-test-file conversion on tests/rules/testdata/convert/, and the drift
// check of the rule pack's generated DCGM variant (rules/dcgm/).
#include "cli/rules_convert.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/commands.h"
#include "cli/template_rewrite.h"
#include "cli/yaml_doc.h"
#include "gpu/catalog.h"
#include "promql/parser.h"
#include "promql/promqltest/at_variants.h"

namespace gpumon::cli {
namespace {

namespace fs = std::filesystem;

const std::string kTestdata = std::string(GPUMON_SOURCE_DIR) + "/tests/rules/testdata/convert";

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Template(const std::string& t) {
  static const DcgmRuleConverter converter;  // its map rejects native names without equivalent
  auto r = RewriteTemplate(t, converter.map());
  return r.ok() ? *r : "ERROR: " + r.status().message();
}

TEST(TemplateRewriteTest, RenamesLabelsInActions) {
  EXPECT_EQ(Template("GPU {{ $labels.gpu }} on {{ $labels.hostname }} ({{ .Labels.uuid }})"),
            "GPU {{ $labels.gpu }} on {{ $labels.Hostname }} ({{ .Labels.UUID }})");
  EXPECT_EQ(Template("{{ index $labels \"model\" }} {{- $labels.hostname | toUpper -}}"),
            "{{ index $labels \"modelName\" }} {{- $labels.Hostname | toUpper -}}");
  EXPECT_EQ(Template("{{ range query \"up\" }}{{ . | label \"hostname\" }}{{ end }}"),
            "{{ range query \"up\" }}{{ . | label \"Hostname\" }}{{ end }}");
  // Text outside actions: plain renames of metric names only; hostname is
  // prose there.
  EXPECT_EQ(Template("hostname: gpu_temperature_celsius, not gpu_utilization_ratio"),
            "hostname: DCGM_FI_DEV_GPU_TEMP, not gpu_utilization_ratio");
  EXPECT_EQ(Template("{{/* $labels.hostname */}}x"), "{{/* $labels.hostname */}}x");
}

TEST(TemplateRewriteTest, RewritesQueries) {
  EXPECT_EQ(Template("{{ query \"gpu_utilization_ratio{hostname='a'}\" | first | value }}"),
            "{{ query \"(DCGM_FI_DEV_GPU_UTIL{Hostname='a'} / 100)\" | first | value }}");
  EXPECT_EQ(Template("{{ with printf \"gpu_memory_max_operating_temperature_celsius{hostname='%s',"
                     "gpu='%s'}\" $labels.hostname $labels.gpu | query }}{{ . | first | value "
                     "}}{{ end }}"),
            "{{ with printf \"DCGM_FI_DEV_MEM_MAX_OP_TEMP{Hostname='%s',gpu='%s'}\" "
            "$labels.Hostname $labels.gpu | query }}{{ . | first | value }}{{ end }}");
  EXPECT_EQ(Template("{{ query (printf `gpu_temperature_celsius{gpu=\"%d\"} %% 2` 3) }}"),
            "{{ query (printf `DCGM_FI_DEV_GPU_TEMP{gpu=\"%d\"} %% 2` 3) }}");
  // printf without query is not a query.
  EXPECT_EQ(Template("{{ printf \"%.1f gpu_lost\" $value }}"),
            "{{ printf \"%.1f gpu_lost\" $value }}");
}

TEST(TemplateRewriteTest, FailsOnWhatItCannotTranslate) {
  EXPECT_NE(Template("{{ query \"gpu_lost == 1\" }}").find("gpu_lost"), std::string::npos);
  EXPECT_EQ(Template("{{ query \"gpu_lost == 1\" }}").rfind("ERROR", 0), 0u);
  EXPECT_EQ(Template("{{ $labels.mig_uuid }}").rfind("ERROR", 0), 0u);
  EXPECT_EQ(Template("{{ query \"sum(\" }}").rfind("ERROR", 0), 0u);
  EXPECT_EQ(Template("{{ $labels.gpu").rfind("ERROR", 0), 0u);
}

TEST(YamlDocTest, WrittenStringsReadBackTheSame) {
  const std::vector<std::string> values = {
      "plain text",
      "5m",
      "1",
      "true",
      "",
      "-leading dash",
      "{{ $labels.gpu }} is hot",
      "key: value # not a comment",
      "quotes \" and ' and \\ backslash",
      "tab\tand control \x01",
      "line one\nline two",
      "line one\nline two\n",
      "ends with two\n\n",
      "  leading spaces\nsecond",
      "°C and ünïcödé",
      "GPU {{ $labels.gpu }} on {{ $labels.Hostname }} is climbing steadily and, at its current "
      "rate, reaches the limit of {{ with printf \"x{a='%s'}\" $labels.a | query }}{{ end }} in "
      "about {{ $value | humanizeDuration }}",
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-0\",modelName=\"NVIDIA H200\",Hostname=\"n1\","
      "job=\"gpu\",x=\"long enough to need more than a line\"}",
      "(\n    a\n  or\n    b\n)",
  };
  YamlNode root;
  root.kind = YamlNode::Kind::kMap;
  YamlNode seq;
  seq.kind = YamlNode::Kind::kSeq;
  for (const auto& v : values) {
    YamlNode item;
    item.kind = YamlNode::Kind::kMap;
    item.map.push_back({"value", YamlNode::Scalar(v)});
    seq.seq.push_back(item);
    seq.seq.push_back(YamlNode::Comment("a comment between items"));
  }
  root.map.push_back({"items", seq});
  root.map.push_back({"empty", YamlNode{YamlNode::Kind::kSeq, "", false, {}, {}}});
  std::string text = WriteYaml(root, {"header line"});
  ASSERT_EQ(text.rfind("# header line\n", 0), 0u) << text;
  YAML::Node back = YAML::Load(text);
  ASSERT_TRUE(back["items"].IsSequence()) << text;
  ASSERT_EQ(back["items"].size(), values.size()) << text;
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(back["items"][i]["value"].as<std::string>(), values[i]) << text;
    // Strings YAML would read as numbers, booleans or null are quoted.
    if (values[i] == "1" || values[i] == "true" || values[i].empty()) {
      EXPECT_NE(back["items"][i]["value"].Tag(), "?") << values[i];
    }
  }
  EXPECT_TRUE(back["empty"].IsSequence());
  EXPECT_EQ(back["empty"].size(), 0u);
}

// Every selector's metric name in a query.
std::vector<std::string> MetricNames(const std::string& query) {
  std::vector<std::string> out;
  promql::ParseResult p = promql::Parse(query);
  EXPECT_TRUE(p.ok()) << query;
  if (!p.ok()) return out;
  promql::promqltest::ForEachVectorSelector(
      *p.expr, [&](const promql::VectorSelector& vs) { out.push_back(vs.name); });
  return out;
}

bool IsNativeName(const std::string& name) {
  for (const auto& def : gpu::Catalog()) {
    if (!def.name.empty() && def.name == name) return true;
  }
  return false;
}

TEST(RulesConvertTest, ConvertsTheSampleRuleFile) {
  std::string path = kTestdata + "/sample.rules.yml";
  DcgmRuleConverter c;
  auto out = c.ConvertRuleFiles({{path, Read(path), "../sample.rules.yml"}});
  ASSERT_TRUE(out.ok()) << out.status().message();
  ASSERT_EQ(out->size(), 1u);
  const std::string& text = (*out)[0];
  EXPECT_EQ(
      text.rfind("# generated by gpumon rules convert from ../sample.rules.yml; do not edit\n", 0),
      0u);
  YAML::Node native = YAML::LoadFile(path);
  YAML::Node dcgm = YAML::Load(text);
  ASSERT_EQ(dcgm["groups"].size(), native["groups"].size());
  std::vector<std::string> kept;
  for (size_t g = 0; g < dcgm["groups"].size(); ++g) {
    YAML::Node ng = native["groups"][g], dg = dcgm["groups"][g];
    EXPECT_EQ(dg["name"].as<std::string>(), ng["name"].as<std::string>());
    EXPECT_EQ(dg["interval"].IsDefined(), ng["interval"].IsDefined());
    // The kept rules are the native ones in order, with their fields.
    size_t n = 0;
    for (const auto& rule : dg["rules"]) {
      std::string name =
          rule["alert"] ? rule["alert"].as<std::string>() : rule["record"].as<std::string>();
      kept.push_back(name);
      while (n < ng["rules"].size() &&
             (ng["rules"][n]["alert"] ? ng["rules"][n]["alert"] : ng["rules"][n]["record"])
                     .as<std::string>() != name) {
        ++n;
      }
      ASSERT_LT(n, ng["rules"].size()) << name << " out of order";
      YAML::Node nr = ng["rules"][n];
      EXPECT_EQ(rule["for"].IsDefined(), nr["for"].IsDefined()) << name;
      if (nr["for"]) {
        EXPECT_EQ(rule["for"].as<std::string>(), nr["for"].as<std::string>());
      }
      if (nr["labels"]) {
        EXPECT_EQ(rule["labels"].size(), nr["labels"].size()) << name;
      }
      if (nr["annotations"]) {
        EXPECT_EQ(rule["annotations"].size(), nr["annotations"].size()) << name;
        for (const auto& a : rule["annotations"]) {
          std::string v = a.second.as<std::string>();
          EXPECT_EQ(v.find("$labels.hostname"), std::string::npos) << v;
          EXPECT_EQ(v.find("$labels.uuid"), std::string::npos) << v;
        }
      }
      for (const auto& m : MetricNames(rule["expr"].as<std::string>())) {
        EXPECT_FALSE(IsNativeName(m)) << name << " references " << m;
      }
      ++n;
    }
  }
  EXPECT_EQ(kept, (std::vector<std::string>{"gpu:utilization:avg5m", "gpu:memory_used:ratio",
                                            "SampleGpuBusy", "SampleGpuSlowdownActive",
                                            "SampleGpuUncorrectableEcc", "SampleGpuPowerCapped",
                                            "SampleExporterDown"}));
  // Each rule left out is named, with the reason, in the output and in dropped().
  ASSERT_EQ(c.dropped().size(), 4u) << ::testing::PrintToString(c.dropped());
  EXPECT_NE(c.dropped()[0].find("alert \"SampleGpuThermalSlowdown\": max_over_time("),
            std::string::npos);
  EXPECT_NE(c.dropped()[1].find("record \"gpu:lost:count\": gpu_lost has no DCGM equivalent"),
            std::string::npos);
  EXPECT_NE(c.dropped()[2].find("alert \"SampleGpuLost\": uses gpu:lost:count"), std::string::npos);
  EXPECT_NE(c.dropped()[3].find("alert \"SampleGpuXid\": gpu_xid_errors_total"), std::string::npos);
  EXPECT_NE(text.find("# alert SampleGpuLost not converted: uses gpu:lost:count"),
            std::string::npos);
  EXPECT_NE(text.find("$labels.Hostname"), std::string::npos);
  EXPECT_NE(text.find("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"), std::string::npos);
}

TEST(RulesConvertTest, DependenciesAcrossFilesAndUnknownNames) {
  const std::string a =
      "groups:\n- name: a\n  rules:\n  - record: gpu:lost:sum\n    expr: sum(gpu_lost)\n"
      "  - record: gpu:temp:max\n    expr: max by (hostname) (gpu_temperature_celsius)\n";
  const std::string b =
      "groups:\n- name: b\n  rules:\n  - alert: Lost\n    expr: gpu:lost:sum > 0\n"
      "  - alert: Hot\n    expr: gpu:temp:max > 90\n"
      "  - alert: Typo\n    expr: gpu_temprature_celsius > 90\n";
  DcgmRuleConverter c;
  auto out = c.ConvertRuleFiles({{"a.rules.yml", a, "a"}, {"b.rules.yml", b, "b"}});
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_NE((*out)[0].find("max by (Hostname) (DCGM_FI_DEV_GPU_TEMP)"), std::string::npos);
  EXPECT_NE((*out)[1].find("expr: gpu:temp:max > 90"), std::string::npos) << (*out)[1];
  ASSERT_EQ(c.dropped().size(), 3u) << ::testing::PrintToString(c.dropped());
  EXPECT_NE(c.dropped()[1].find("b.rules.yml: group \"b\": alert \"Lost\": uses gpu:lost:sum"),
            std::string::npos);
  EXPECT_NE(c.dropped()[2].find("gpu_temprature_celsius is not in the metric catalog"),
            std::string::npos);
}

TEST(RulesConvertTest, RejectsInvalidInput) {
  DcgmRuleConverter c;
  auto bad_expr = c.ConvertRuleFiles(
      {{"x.rules.yml", "groups:\n- name: x\n  rules:\n  - alert: A\n    expr: sum(\n", "x"}});
  ASSERT_FALSE(bad_expr.ok());
  EXPECT_NE(bad_expr.status().message().find("x.rules.yml:"), std::string::npos);
  auto unknown_field =
      c.ConvertRuleFiles({{"y.rules.yml", "groups:\n- name: y\n  rulez: []\n", "y"}});
  EXPECT_FALSE(unknown_field.ok());
}

TEST(RulesConvertTest, ConvertsTheSampleTests) {
  std::string path = kTestdata + "/tests/sample.test.yml";
  DcgmRuleConverter c;
  auto out = c.ConvertTestFile({path, Read(path), "../../tests/sample.test.yml"});
  ASSERT_TRUE(out.ok()) << out.status().message();
  YAML::Node t = YAML::Load(*out);
  YAML::Node native = YAML::LoadFile(path);
  EXPECT_EQ(t["rule_files"][0].as<std::string>(), native["rule_files"][0].as<std::string>());
  // The lost-GPU test only tests rules left out.
  ASSERT_EQ(t["tests"].size(), native["tests"].size() - 1);
  YAML::Node busy = t["tests"][0];
  EXPECT_EQ(busy["input_series"][0]["series"].as<std::string>(),
            "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-0\",modelName=\"NVIDIA H200\","
            "Hostname=\"n1\",job=\"gpu\"}");
  EXPECT_EQ(busy["input_series"][0]["values"].as<std::string>(), "90x20");
  EXPECT_EQ(busy["input_series"][1]["values"].as<std::string>(), "20+1x20");
  EXPECT_EQ(busy["input_series"][2]["values"].as<std::string>(), "71680x20");  // MiB
  EXPECT_EQ(busy["alert_rule_test"][0]["exp_alerts"][0]["exp_labels"]["Hostname"].as<std::string>(),
            "n1");
  EXPECT_FALSE(busy["alert_rule_test"][0]["exp_alerts"][0]["exp_labels"]["hostname"]);
  // Three reason series of GPU 2 become one mask: sw_power_cap (4) always,
  // sw_thermal_slowdown (32) from the fifth sample to the 15th.
  YAML::Node thermal = t["tests"][1];
  ASSERT_EQ(thermal["input_series"].size(), 2u);
  EXPECT_EQ(thermal["input_series"][0]["series"].as<std::string>(),
            "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS{gpu=\"2\",UUID=\"GPU-2\",Hostname=\"n1\","
            "job=\"gpu\"}");
  EXPECT_EQ(thermal["input_series"][0]["values"].as<std::string>(), "4x4 36x10 4x5");
  // The tests of the alert left out are gone; the others stay.
  ASSERT_EQ(thermal["alert_rule_test"].size(), 2u);
  EXPECT_EQ(thermal["alert_rule_test"][0]["alertname"].as<std::string>(),
            "SampleGpuSlowdownActive");
  YAML::Node ecc = t["tests"][2];
  EXPECT_EQ(ecc["input_series"][2]["series"].as<std::string>(),
            "DCGM_FI_DEV_POWER_VIOLATION{gpu=\"3\",UUID=\"GPU-3\",Hostname=\"n2\",job=\"gpu\"}");
  EXPECT_EQ(ecc["input_series"][2]["values"].as<std::string>(), "0+50000000x15");  // µs
  EXPECT_NE(out->find("# test \"lost GPUs and XIDs\" left out"), std::string::npos);
}

// rules/dcgm/ is generated from rules/ by `gpumon rules convert --names dcgm
// rules/ rules/dcgm/`; this fails when they differ (regenerate with that
// command).
TEST(RulesConvertTest, RulePackDcgmVariantIsUpToDate) {
  fs::path rules = fs::path(GPUMON_SOURCE_DIR) / "rules";
  bool any = false;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(rules, ec)) {
    std::string n = e.path().filename().string();
    any = any || (n.size() > 10 && n.compare(n.size() - 10, 10, ".rules.yml") == 0);
  }
  if (!any) GTEST_SKIP() << "no rule pack in " << rules;
  int rc =
      RunRulesConvert({"--names", "dcgm", "--check", rules.string(), (rules / "dcgm").string()});
  EXPECT_EQ(rc, 0) << "rules/dcgm/ is out of date: run `gpumon rules convert --names dcgm rules/ "
                      "rules/dcgm/`";
  // No generated rule selects a native metric.
  size_t rules_seen = 0;
  for (const auto& e : fs::directory_iterator(rules / "dcgm", ec)) {
    if (e.path().extension() != ".yml") continue;
    YAML::Node doc = YAML::LoadFile(e.path().string());
    for (const auto& g : doc["groups"]) {
      for (const auto& r : g["rules"]) {
        ++rules_seen;
        for (const auto& m : MetricNames(r["expr"].as<std::string>())) {
          EXPECT_FALSE(IsNativeName(m)) << e.path() << ": a rule references " << m;
        }
      }
    }
  }
  EXPECT_GT(rules_seen, 0u);
}

}  // namespace
}  // namespace gpumon::cli
