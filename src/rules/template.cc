// The template executor: walks the tree template_parse.cc builds and calls
// Go's builtins and Prometheus's functions (template_query.cc for the query
// functions and the URL, host and time helpers).
#include "rules/template.h"

#include <re2/re2.h>

#include <cctype>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "rules/status_macros.h"
#include "rules/template_fmt.h"
#include "rules/template_parse.h"
#include "rules/template_query.h"
#include "rules/template_value.h"

namespace gpumon::rules {

namespace {

using namespace template_internal;  // NOLINT: the engine's own internals
using Node = Template::Node;
using NodePtr = std::shared_ptr<Node>;

class Executor {
 public:
  explicit Executor(const TemplateData& data) : data_(data) {
    vars_ = {{"$", DataRef{&data}},
             {"$labels", data.labels},
             {"$externalLabels", data.external_labels},
             {"$externalURL", data.external_url},
             {"$value", data.value}};
  }

  Status Walk(const Node& n, const Value& dot, std::string* out) {
    switch (n.kind) {
      case Node::kList: {
        size_t scope = vars_.size();
        for (const auto& c : n.list) GPUMON_RETURN_IF_ERROR(Walk(*c, dot, out));
        vars_.resize(scope);
        return Status::Ok();
      }
      case Node::kText:
        *out += n.text;
        return Status::Ok();
      case Node::kAction: {
        GPUMON_ASSIGN_OR_RETURN(Value v, EvalPipe(n.pipe, dot));
        if (n.pipe.decl.empty()) *out += Sprint(v);
        return Status::Ok();
      }
      case Node::kIf:
      case Node::kWith: {
        size_t scope = vars_.size();
        GPUMON_ASSIGN_OR_RETURN(Value v, EvalPipe(n.pipe, dot));
        Status st;
        if (Truth(v)) {
          st = Walk(*n.list[0], n.kind == Node::kWith ? v : dot, out);
        } else if (n.else_list) {
          st = Walk(*n.else_list, dot, out);
        }
        vars_.resize(scope);
        return st;
      }
      case Node::kRange: {
        size_t scope = vars_.size();
        // The declaration binds per element, not the whole map or list.
        Pipe p = n.pipe;
        std::vector<std::string> decl = p.decl;
        p.decl.clear();
        GPUMON_ASSIGN_OR_RETURN(Value v, EvalPipe(p, dot));
        vars_.resize(scope);
        // One variable: the element; two: the key (or index) and the element.
        bool any = false;
        auto each = [&](Value key, const Value& elem) -> Status {
          any = true;
          size_t s2 = vars_.size();
          if (decl.size() == 1) vars_.push_back({decl[0], elem});
          if (decl.size() == 2) {
            vars_.push_back({decl[0], std::move(key)});
            vars_.push_back({decl[1], elem});
          }
          Status st = Walk(*n.list[0], elem, out);
          vars_.resize(s2);
          return st;
        };
        switch (KindOf(v)) {
          case kNil:
            break;
          case kLabelMap:
            for (const auto& l : std::get<Labels>(v)) {
              GPUMON_RETURN_IF_ERROR(each(l.name, Value(l.value)));
            }
            break;
          case kQueryResult: {
            // A copy of the list: the body may sort the result in place.
            std::vector<SamplePtr> samples = *std::get<QueryResultRef>(v).samples;
            for (size_t i = 0; i < samples.size(); ++i) {
              GPUMON_RETURN_IF_ERROR(each(static_cast<int64_t>(i), Value(samples[i])));
            }
            break;
          }
          case kArgs:
            for (const auto& [k, x] : std::get<ArgsRef>(v)->entries) {
              GPUMON_RETURN_IF_ERROR(each(k, x));
            }
            break;
          default:
            return ExecErr(n.pipe.line, std::string("range can't iterate over ") + Sprint(v));
        }
        if (!any && n.else_list) GPUMON_RETURN_IF_ERROR(Walk(*n.else_list, dot, out));
        vars_.resize(scope);
        return Status::Ok();
      }
    }
    return Status::Ok();
  }

 private:
  Value* Lookup(const std::string& name) {
    for (auto it = vars_.rbegin(); it != vars_.rend(); ++it) {
      if (it->first == name) return &it->second;
    }
    return nullptr;
  }

  Result<Value> EvalArg(int line, const Arg& a, const Value& dot) {
    Value v;
    switch (a.kind) {
      case Arg::kField:
      case Arg::kDot:
        v = dot;
        break;
      case Arg::kVar: {
        Value* p = Lookup(a.name);
        if (p == nullptr) return ExecErr(line, "undefined variable: " + a.name);
        v = *p;
        break;
      }
      case Arg::kString:
        v = a.str;
        break;
      case Arg::kInt:
        v = a.i;
        break;
      case Arg::kFloat:
        v = a.f;
        break;
      case Arg::kBool:
        v = a.b;
        break;
      case Arg::kNil:
        v = std::monostate{};
        break;
      case Arg::kPipe: {
        GPUMON_ASSIGN_OR_RETURN(v, EvalPipe(*a.pipe, dot));
        break;
      }
      case Arg::kFunc: {
        std::vector<Value> none;
        GPUMON_ASSIGN_OR_RETURN(v, Call(line, a.name, none));
        break;
      }
    }
    for (const auto& f : a.fields) {
      GPUMON_ASSIGN_OR_RETURN(v, Field(line, v, f));
    }
    return v;
  }

  Result<Value> EvalPipe(const Pipe& p, const Value& dot) {
    Value last;
    bool have_last = false;
    for (const auto& cmd : p.cmds) {
      const Arg& a0 = cmd.args[0];
      if (a0.kind == Arg::kFunc) {
        std::vector<Value> args;
        for (size_t i = 1; i < cmd.args.size(); ++i) {
          GPUMON_ASSIGN_OR_RETURN(Value v, EvalArg(p.line, cmd.args[i], dot));
          args.push_back(std::move(v));
        }
        if (have_last) args.push_back(last);
        GPUMON_ASSIGN_OR_RETURN(last, Call(p.line, a0.name, args));
      } else {
        if (cmd.args.size() > 1 || have_last) {
          return ExecErr(p.line, "can't give argument to non-function");
        }
        GPUMON_ASSIGN_OR_RETURN(last, EvalArg(p.line, a0, dot));
      }
      have_last = true;
    }
    for (const auto& name : p.decl) {
      if (p.assign) {
        Value* slot = Lookup(name);
        if (slot) *slot = last;
      } else {
        vars_.push_back({name, last});
      }
    }
    return last;
  }

  Result<Value> Call(int line, const std::string& fn, const std::vector<Value>& args) {
    const CallSite call(line, fn, args);
    if (IsPrometheusFunction(fn)) return CallPrometheusFunction(call, data_);
    auto want = [&](size_t n) { return call.WantArgs(n); };
    auto fail = [&](const Status& s) { return call.Fail(s); };
    auto str_arg = [&](size_t i) { return call.String(i); };
    if (fn.rfind("humanize", 0) == 0) {
      GPUMON_RETURN_IF_ERROR(want(1));
      auto f = ToFloat(args[0]);
      if (!f.ok()) return fail(f.status());
      double v = *f;
      if (fn == "humanize") return Value(Humanize(v));
      if (fn == "humanize1024") return Value(Humanize1024(v));
      if (fn == "humanizeDuration") return Value(HumanizeDuration(v));
      if (fn == "humanizePercentage") return Value(HumanizePercentage(v));
      if (!std::isnan(v) && !std::isinf(v)) {
        if (auto ms = FloatToTimeMs(v); !ms.ok()) return fail(ms.status());
      }
      return Value(HumanizeTimestamp(v));
    }
    if (fn == "printf") {
      if (args.empty()) return ExecErr(line, "wrong number of args for printf");
      GPUMON_ASSIGN_OR_RETURN(std::string f, str_arg(0));
      return Value(GoSprintf(f, std::vector<Value>(args.begin() + 1, args.end())));
    }
    if (fn == "print" || fn == "println") return Value(GoSprint(args, fn == "println"));
    if (fn == "toUpper" || fn == "toLower" || fn == "title" || fn == "safeHtml") {
      GPUMON_RETURN_IF_ERROR(want(1));
      GPUMON_ASSIGN_OR_RETURN(std::string s, str_arg(0));
      if (fn == "toUpper") {
        for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      } else if (fn == "toLower") {
        for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      } else if (fn == "title") {
        s = GoTitle(s);
      }
      return Value(s);
    }
    if (fn == "reReplaceAll" || fn == "match") {
      GPUMON_RETURN_IF_ERROR(want(fn == "match" ? 2 : 3));
      GPUMON_ASSIGN_OR_RETURN(std::string pattern, str_arg(0));
      RE2 re(pattern, RE2::Quiet);
      if (!re.ok()) return fail(Status::Error("error parsing regexp: " + re.error()));
      if (fn == "match") {
        GPUMON_ASSIGN_OR_RETURN(std::string text, str_arg(1));
        return Value(RE2::PartialMatch(text, re));
      }
      GPUMON_ASSIGN_OR_RETURN(std::string repl, str_arg(1));
      GPUMON_ASSIGN_OR_RETURN(std::string text, str_arg(2));
      return Value(ReplaceAll(re, text, repl));
    }
    if (fn == "urlquery") return Value(QueryEscape(GoSprint(args, false)));
    if (fn == "not") {
      GPUMON_RETURN_IF_ERROR(want(1));
      return Value(!Truth(args[0]));
    }
    if (fn == "and" || fn == "or") {
      if (args.empty()) return ExecErr(line, "wrong number of args for " + fn);
      for (size_t i = 0; i + 1 < args.size(); ++i) {
        if (Truth(args[i]) != (fn == "and")) return args[i];
      }
      return args.back();
    }
    if (fn == "len") {
      GPUMON_RETURN_IF_ERROR(want(1));
      switch (KindOf(args[0])) {
        case kString:
          return Value(int64_t(std::get<std::string>(args[0]).size()));
        case kLabelMap:
          return Value(int64_t(std::get<Labels>(args[0]).size()));
        case kQueryResult:
          return Value(int64_t(std::get<QueryResultRef>(args[0]).samples->size()));
        case kArgs:
          return Value(int64_t(std::get<ArgsRef>(args[0])->entries.size()));
        default:
          return fail(Status::Error(std::string("len of type ") + TypeName(args[0])));
      }
    }
    if (fn == "index") {
      if (args.empty())
        return ExecErr(line, "wrong number of args for index: want at least 1 got 0");
      Value item = args[0];
      for (size_t i = 1; i < args.size(); ++i) {
        GPUMON_ASSIGN_OR_RETURN(item, Index(call, item, args[i]));
      }
      return item;
    }
    // Comparisons.
    if (fn == "eq") {
      if (args.size() < 2) return ExecErr(line, "missing argument for comparison");
      for (size_t i = 1; i < args.size(); ++i) {
        if (KindOf(args[0]) == kBool && KindOf(args[i]) == kBool) {
          if (std::get<bool>(args[0]) == std::get<bool>(args[i])) return Value(true);
          continue;
        }
        auto c = Compare(args[0], args[i]);
        if (!c.ok()) return fail(c.status());
        if (*c == 0) return Value(true);
      }
      return Value(false);
    }
    GPUMON_RETURN_IF_ERROR(want(2));
    if (fn == "ne" && KindOf(args[0]) == kBool && KindOf(args[1]) == kBool) {
      return Value(std::get<bool>(args[0]) != std::get<bool>(args[1]));
    }
    auto c = Compare(args[0], args[1]);
    if (!c.ok()) return fail(c.status());
    int r = *c;
    if (fn == "ne") return Value(r != 0);
    if (r == 2) return Value(false);
    if (fn == "lt") return Value(r < 0);
    if (fn == "le") return Value(r <= 0);
    if (fn == "gt") return Value(r > 0);
    return Value(r >= 0);  // ge
  }

  // Go's index builtin, one step: a map by key, a query result by position.
  static Result<Value> Index(const CallSite& call, const Value& item, const Value& key) {
    auto fail = [&](const std::string& msg) { return call.Fail(Status::Error(msg)); };
    switch (KindOf(item)) {
      case kNil:
        return fail("index of untyped nil");
      case kLabelMap:
      case kArgs: {
        if (KindOf(key) != kString) {
          return fail(std::string("value has type ") + TypeName(key) + "; should be string");
        }
        const std::string& k = std::get<std::string>(key);
        if (KindOf(item) == kLabelMap) return Value(std::string(std::get<Labels>(item).Get(k)));
        const auto& m = std::get<ArgsRef>(item)->entries;
        auto it = m.find(k);
        return it == m.end() ? Value() : it->second;
      }
      case kQueryResult: {
        if (KindOf(key) == kNil) return fail("cannot index slice/array with nil");
        if (KindOf(key) != kInt) {
          return fail(std::string("cannot index slice/array with type ") + TypeName(key));
        }
        const auto& samples = *std::get<QueryResultRef>(item).samples;
        int64_t x = std::get<int64_t>(key);
        // Go 1.19's index checks x <= len and lets reflect catch x == len.
        if (x == static_cast<int64_t>(samples.size())) {
          return fail("reflect: slice index out of range");
        }
        if (x < 0 || x > static_cast<int64_t>(samples.size())) {
          return fail("index out of range: " + std::to_string(x));
        }
        return Value(samples[x]);
      }
      default:
        return fail(std::string("can't index item of type ") + TypeName(item));
    }
  }

  const TemplateData& data_;
  std::vector<std::pair<std::string, Value>> vars_;
};

}  // namespace

Result<Template> Template::Parse(std::string_view text) {
  GPUMON_ASSIGN_OR_RETURN(NodePtr root, ParseTemplate(text));
  Template t;
  t.root_ = root;
  return t;
}

Result<std::string> Template::Execute(const TemplateData& data) const {
  std::string out;
  if (!root_) return out;
  Executor ex(data);
  GPUMON_RETURN_IF_ERROR(ex.Walk(*root_, DataRef{&data}, &out));
  return out;
}

}  // namespace gpumon::rules
