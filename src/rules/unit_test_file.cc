#include "rules/unit_test_file.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <limits>
#include <set>

#include "promql/promqltest/duration.h"
#include "rules/yaml_util.h"

namespace gpumon::rules {

namespace {

// The YAML 1.1 kinds gopkg.in/yaml.v2 resolves a plain scalar to.
enum class Kind { kNull, kBool, kInt, kFloat, kStr };

bool OneOf(const std::string& s, std::initializer_list<const char*> options) {
  for (const char* o : options) {
    if (s == o) return true;
  }
  return false;
}

bool IsPlain(const YAML::Node& n) { return n.Tag() == "?" || n.Tag().empty(); }

std::string WithoutUnderscores(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c != '_') out.push_back(c);
  }
  return out;
}

// strconv.ParseInt(s, 0, 64) / ParseUint: optional sign, 0x / 0o / 0b /
// leading-0 octal prefixes.
bool ParseGoInt(const std::string& s, double* out) {
  size_t i = 0;
  bool neg = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
  if (i >= s.size()) return false;
  int base = 10;
  if (s[i] == '0' && i + 1 < s.size()) {
    char p = static_cast<char>(std::tolower(static_cast<unsigned char>(s[i + 1])));
    if (p == 'x' || p == 'o' || p == 'b') {
      base = p == 'x' ? 16 : (p == 'o' ? 8 : 2);
      i += 2;
    } else {
      base = 8;
      i += 1;
    }
    if (i >= s.size()) return false;
  }
  const std::string digits = s.substr(i);
  for (char c : digits) {
    int d = std::isdigit(static_cast<unsigned char>(c))
                ? c - '0'
                : (std::isalpha(static_cast<unsigned char>(c))
                       ? std::tolower(static_cast<unsigned char>(c)) - 'a' + 10
                       : 99);
    if (d >= base) return false;
  }
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(digits.c_str(), &end, base);
  if (errno != 0 || *end != '\0') return false;
  if (neg && v > static_cast<unsigned long long>(std::numeric_limits<int64_t>::max()) + 1) {
    return false;
  }
  *out = neg ? -static_cast<double>(v) : static_cast<double>(v);
  return true;
}

// yaml.v2's float pattern: ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$
bool IsYamlStyleFloat(const std::string& s) {
  size_t i = 0;
  auto digits = [&] {
    size_t start = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    return i > start;
  };
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!digits()) return false;
  } else {
    if (!digits()) return false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      digits();
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == s.size();
}

// How yaml.v2 resolves the scalar `n`; `number` gets the value of an int or
// float.
Kind Resolve(const YAML::Node& n, double* number) {
  if (n.IsNull()) return Kind::kNull;
  if (!IsPlain(n)) return Kind::kStr;
  const std::string& s = n.Scalar();
  if (OneOf(s, {"", "~", "null", "Null", "NULL"})) return Kind::kNull;
  if (OneOf(s,
            {"y",    "Y",    "yes",   "Yes",   "YES",   "n",  "N",  "no", "No",  "NO",  "true",
             "True", "TRUE", "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF"})) {
    return Kind::kBool;
  }
  if (OneOf(s, {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"})) {
    *number = std::numeric_limits<double>::infinity();
    return Kind::kFloat;
  }
  if (OneOf(s, {"-.inf", "-.Inf", "-.INF"})) {
    *number = -std::numeric_limits<double>::infinity();
    return Kind::kFloat;
  }
  if (OneOf(s, {".nan", ".NaN", ".NAN"})) {
    *number = std::numeric_limits<double>::quiet_NaN();
    return Kind::kFloat;
  }
  const std::string plain = WithoutUnderscores(s);
  if (ParseGoInt(plain, number)) return Kind::kInt;
  if (IsYamlStyleFloat(plain)) {
    errno = 0;
    char* end = nullptr;
    double v = std::strtod(plain.c_str(), &end);
    if (*end == '\0' && !(errno == ERANGE && std::isinf(v))) {
      *number = v;
      return Kind::kFloat;
    }
  }
  return Kind::kStr;
}

// yaml.v2's name of a node in "cannot unmarshal" errors.
std::string Describe(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Sequence:
      return "!!seq";
    case YAML::NodeType::Map:
      return "!!map";
    case YAML::NodeType::Null:
      return "!!null";
    default:
      break;
  }
  double ignored = 0;
  const char* tag = "!!str";
  switch (Resolve(n, &ignored)) {
    case Kind::kBool:
      tag = "!!bool";
      break;
    case Kind::kInt:
      tag = "!!int";
      break;
    case Kind::kFloat:
      tag = "!!float";
      break;
    default:
      break;
  }
  return std::string(tag) + " `" + n.Scalar() + "`";
}

class Decoder {
 public:
  explicit Decoder(std::string path) : path_(std::move(path)) {}

  Result<UnitTestFile> Run(std::string_view text) {
    UnitTestFile out;
    out.path = path_;
    Result<YAML::Node> loaded = LoadYaml(text, path_);
    if (!loaded.ok()) return loaded.status();
    YAML::Node root = std::move(loaded).value();
    if (!root.IsDefined() || root.IsNull()) return out;
    if (!root.IsMap()) {
      Error(root, "", "cannot unmarshal " + Describe(root) + " into a unit test file");
    } else {
      Fields(root, "", "the unit test file",
             {{"rule_files", [&](const YAML::Node& n,
                                 const std::string& f) { StringList(n, f, &out.rule_files); }},
              {"evaluation_interval",
               [&](const YAML::Node& n, const std::string& f) {
                 Duration(n, f, &out.evaluation_interval_ms);
               }},
              {"group_eval_order",
               [&](const YAML::Node& n, const std::string& f) {
                 StringList(n, f, &out.group_eval_order);
               }},
              {"tests", [&](const YAML::Node& n, const std::string& f) {
                 List(n, f, [&](const YAML::Node& item, const std::string& path) {
                   out.tests.push_back(TestGroup(item, path));
                 });
               }}});
    }
    if (!errors_.empty()) return ErrorLines(errors_);
    return out;
  }

 private:
  using FieldFn = std::function<void(const YAML::Node&, const std::string&)>;
  struct Field {
    const char* name;
    FieldFn decode;
  };

  void Error(const YAML::Node& n, const std::string& field, const std::string& what) {
    errors_.push_back(YamlPosition(path_, n.Mark()) +
                      (field.empty() ? "" : "field \"" + field + "\": ") + what);
  }
  static std::string Join(const std::string& prefix, const std::string& name) {
    return prefix.empty() ? name : prefix + "." + name;
  }

  // A mapping decoded into a struct: unknown and repeated keys are errors,
  // each known key is decoded by its function (in the file's order).
  void Fields(const YAML::Node& map, const std::string& prefix, const char* type,
              std::initializer_list<Field> fields) {
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const std::string key = it->first.IsScalar() ? it->first.Scalar() : "";
      const Field* f = nullptr;
      for (const Field& candidate : fields) {
        if (key == candidate.name) f = &candidate;
      }
      const std::string path = Join(prefix, key);
      if (f == nullptr) {
        Error(it->first, path, std::string("field ") + key + " not found in " + type);
        continue;
      }
      if (!seen.insert(key).second) {
        Error(it->first, path, "field " + key + " already set in " + type);
        continue;
      }
      f->decode(it->second, path);
    }
  }

  // A list: null is empty; anything but a sequence is an error.
  void List(const YAML::Node& n, const std::string& field,
            const std::function<void(const YAML::Node&, const std::string&)>& item) {
    if (n.IsNull()) return;
    if (!n.IsSequence()) {
      Error(n, field, "cannot unmarshal " + Describe(n) + " into a list");
      return;
    }
    size_t i = 0;
    for (const auto& e : n) item(e, field + "[" + std::to_string(i++) + "]");
  }

  // A string: any scalar as written; null is "".
  bool String(const YAML::Node& n, const std::string& field, std::string* out) {
    if (n.IsNull()) {
      out->clear();
      return true;
    }
    if (!n.IsScalar()) {
      Error(n, field, "cannot unmarshal " + Describe(n) + " into string");
      return false;
    }
    *out = n.Scalar();
    return true;
  }

  void StringList(const YAML::Node& n, const std::string& field, std::vector<std::string>* out) {
    List(n, field, [&](const YAML::Node& item, const std::string& path) {
      std::string s;
      String(item, path, &s);
      out->push_back(std::move(s));
    });
  }

  // model.Duration: a string holding a Prometheus duration; null is zero.
  void Duration(const YAML::Node& n, const std::string& field, int64_t* out) {
    if (n.IsNull()) return;
    std::string s;
    if (!String(n, field, &s)) return;
    Result<int64_t> d = promql::promqltest::ParseScriptDuration(s);
    if (!d.ok()) {
      Error(n, field, "not a valid duration string: \"" + s + "\"");
      return;
    }
    *out = *d;
  }

  // float64: a plain YAML number; null leaves zero.
  void Float(const YAML::Node& n, const std::string& field, double* out) {
    if (n.IsNull()) return;
    double v = 0;
    Kind k = n.IsScalar() ? Resolve(n, &v) : Kind::kStr;
    if (k == Kind::kNull) return;
    if (k != Kind::kInt && k != Kind::kFloat) {
      Error(n, field, "cannot unmarshal " + Describe(n) + " into float64");
      return;
    }
    *out = v;
  }

  // map[string]string: scalar keys and values (null values read as "").
  void StringMap(const YAML::Node& n, const std::string& field, Labels* out) {
    if (n.IsNull()) return;
    if (!n.IsMap()) {
      Error(n, field, "cannot unmarshal " + Describe(n) + " into map[string]string");
      return;
    }
    std::vector<Label> items;
    std::set<std::string> seen;
    for (auto it = n.begin(); it != n.end(); ++it) {
      std::string k, v;
      if (!String(it->first, field, &k)) continue;
      if (!seen.insert(k).second) {
        Error(it->first, field + "." + k, "mapping key \"" + k + "\" already defined");
        continue;
      }
      if (!String(it->second, field + "." + k, &v)) continue;
      items.push_back({k, v});
    }
    *out = Labels::FromUnsorted(std::move(items));
  }

  // A struct item of a list: null is the zero value; a non-mapping is an error.
  bool StructItem(const YAML::Node& n, const std::string& field, const char* type) {
    if (n.IsNull()) return false;
    if (!n.IsMap()) {
      Error(n, field, "cannot unmarshal " + Describe(n) + " into " + type);
      return false;
    }
    return true;
  }

  UnitTestGroup TestGroup(const YAML::Node& n, const std::string& path) {
    UnitTestGroup g;
    g.line = n.Mark().line + 1;
    if (!StructItem(n, path, "a test group")) return g;
    Fields(n, path, "a test group",
           {{"interval",
             [&](const YAML::Node& v, const std::string& f) { Duration(v, f, &g.interval_ms); }},
            {"input_series",
             [&](const YAML::Node& v, const std::string& f) {
               List(v, f, [&](const YAML::Node& item, const std::string& p) {
                 UnitTestSeries s;
                 s.line = item.Mark().line + 1;
                 if (StructItem(item, p, "an input series")) {
                   Fields(item, p, "an input series",
                          {{"series", [&](const YAML::Node& x,
                                          const std::string& ff) { String(x, ff, &s.series); }},
                           {"values", [&](const YAML::Node& x, const std::string& ff) {
                              String(x, ff, &s.values);
                            }}});
                 }
                 g.input_series.push_back(std::move(s));
               });
             }},
            {"alert_rule_test",
             [&](const YAML::Node& v, const std::string& f) {
               List(v, f, [&](const YAML::Node& item, const std::string& p) {
                 g.alert_rule_test.push_back(AlertCase(item, p));
               });
             }},
            {"promql_expr_test",
             [&](const YAML::Node& v, const std::string& f) {
               List(v, f, [&](const YAML::Node& item, const std::string& p) {
                 g.promql_expr_test.push_back(PromqlCase(item, p));
               });
             }},
            {"external_labels", [&](const YAML::Node& v,
                                    const std::string& f) { StringMap(v, f, &g.external_labels); }},
            {"external_url",
             [&](const YAML::Node& v, const std::string& f) { String(v, f, &g.external_url); }},
            {"name", [&](const YAML::Node& v, const std::string& f) { String(v, f, &g.name); }}});
    return g;
  }

  AlertTestCase AlertCase(const YAML::Node& n, const std::string& path) {
    AlertTestCase c;
    c.line = n.Mark().line + 1;
    if (!StructItem(n, path, "an alert test case")) return c;
    Fields(n, path, "an alert test case",
           {{"eval_time",
             [&](const YAML::Node& v, const std::string& f) { Duration(v, f, &c.eval_time_ms); }},
            {"alertname",
             [&](const YAML::Node& v, const std::string& f) { String(v, f, &c.alertname); }},
            {"exp_alerts", [&](const YAML::Node& v, const std::string& f) {
               List(v, f, [&](const YAML::Node& item, const std::string& p) {
                 UnitTestAlert a;
                 if (StructItem(item, p, "an expected alert")) {
                   Fields(item, p, "an expected alert",
                          {{"exp_labels",
                            [&](const YAML::Node& x, const std::string& ff) {
                              StringMap(x, ff, &a.exp_labels);
                            }},
                           {"exp_annotations", [&](const YAML::Node& x, const std::string& ff) {
                              StringMap(x, ff, &a.exp_annotations);
                            }}});
                 }
                 c.exp_alerts.push_back(std::move(a));
               });
             }}});
    return c;
  }

  PromqlTestCase PromqlCase(const YAML::Node& n, const std::string& path) {
    PromqlTestCase c;
    c.line = n.Mark().line + 1;
    if (!StructItem(n, path, "a PromQL test case")) return c;
    Fields(n, path, "a PromQL test case",
           {{"expr", [&](const YAML::Node& v, const std::string& f) { String(v, f, &c.expr); }},
            {"eval_time",
             [&](const YAML::Node& v, const std::string& f) { Duration(v, f, &c.eval_time_ms); }},
            {"exp_samples", [&](const YAML::Node& v, const std::string& f) {
               List(v, f, [&](const YAML::Node& item, const std::string& p) {
                 UnitTestSample s;
                 if (StructItem(item, p, "an expected sample")) {
                   Fields(item, p, "an expected sample",
                          {{"labels", [&](const YAML::Node& x,
                                          const std::string& ff) { String(x, ff, &s.labels); }},
                           {"value", [&](const YAML::Node& x, const std::string& ff) {
                              Float(x, ff, &s.value);
                            }}});
                 }
                 c.exp_samples.push_back(std::move(s));
               });
             }}});
    return c;
  }

  std::string path_;
  std::vector<std::string> errors_;
};

}  // namespace

Result<UnitTestFile> ParseUnitTestFile(std::string_view yaml, const std::string& path) {
  return Decoder(path).Run(yaml);
}

Result<UnitTestFile> LoadUnitTestFile(const std::string& path) {
  Result<std::string> text = ReadSourceFile(path);
  if (!text.ok()) return text.status();
  return ParseUnitTestFile(*text, path);
}

}  // namespace gpumon::rules
