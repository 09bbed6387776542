#include "web/api/ast_json.h"

#include <charconv>
#include <cmath>

#include "promql/function_table.h"

namespace gpumon::web::api {
namespace {

using promql::Expr;

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

// strconv.FormatFloat(v, 'f', -1, 64).
std::string FormatFixed(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[400];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  return ec == std::errc() ? std::string(buf, end) : std::string("NaN");
}

const char* MatchTypeName(tsdb::MatchType t) {
  switch (t) {
    case tsdb::MatchType::kEqual:
      return "=";
    case tsdb::MatchType::kNotEqual:
      return "!=";
    case tsdb::MatchType::kRegexMatch:
      return "=~";
    case tsdb::MatchType::kRegexNoMatch:
      return "!~";
  }
  return "=";
}

const char* CardName(promql::VectorMatchCardinality c) {
  switch (c) {
    case promql::VectorMatchCardinality::kOneToOne:
      return "one-to-one";
    case promql::VectorMatchCardinality::kManyToOne:
      return "many-to-one";
    case promql::VectorMatchCardinality::kOneToMany:
      return "one-to-many";
    case promql::VectorMatchCardinality::kManyToMany:
      return "many-to-many";
  }
  return "one-to-one";
}

const char* TypeName(promql::ValueType t) {
  return t == promql::ValueType::kNone ? "none" : promql::ValueTypeName(t);
}

void StringList(JsonWriter& w, const std::vector<std::string>& list) {
  w.StartArray();
  for (const auto& s : list) w.Str(s);
  w.EndArray();
}

void Matchers(JsonWriter& w, const std::vector<tsdb::Matcher>& ms) {
  w.StartArray();
  for (const auto& m : ms) {
    w.StartObject();
    w.Key("name");
    w.Str(m.name());
    w.Key("type");
    w.String(MatchTypeName(m.type()));
    w.Key("value");
    w.Str(m.value());
    w.EndObject();
  }
  w.EndArray();
}

void StartOrEnd(JsonWriter& w, promql::AtModifier at) {
  w.Key("startOrEnd");
  if (at == promql::AtModifier::kStart) {
    w.String("start");
  } else if (at == promql::AtModifier::kEnd) {
    w.String("end");
  } else {
    w.Null();
  }
}

void Timestamp(JsonWriter& w, promql::AtModifier at, int64_t at_ms) {
  w.Key("timestamp");
  if (at == promql::AtModifier::kTimestamp) {
    w.Int64(at_ms);
  } else {
    w.Null();
  }
}

void Node(JsonWriter& w, const Expr* e);

void Selector(JsonWriter& w, const promql::VectorSelector& vs, const int64_t* range_ms) {
  w.StartObject();
  w.Key("matchers");
  Matchers(w, vs.matchers);
  w.Key("name");
  w.Str(vs.name);
  w.Key("offset");
  w.Int64(vs.offset_ms);
  if (range_ms) {
    w.Key("range");
    w.Int64(*range_ms);
  }
  StartOrEnd(w, vs.at);
  Timestamp(w, vs.at, vs.at_ms);
  w.Key("type");
  w.String(range_ms ? "matrixSelector" : "vectorSelector");
  w.EndObject();
}

void Node(JsonWriter& w, const Expr* e) {
  if (!e) {
    w.Null();
    return;
  }
  std::visit(Overloaded{
                 [&](const promql::NumberLiteral& n) {
                   w.StartObject();
                   w.Key("type");
                   w.String("numberLiteral");
                   w.Key("val");
                   w.Str(FormatFixed(n.value));
                   w.EndObject();
                 },
                 [&](const promql::StringLiteral& s) {
                   w.StartObject();
                   w.Key("type");
                   w.String("stringLiteral");
                   w.Key("val");
                   w.Str(s.value);
                   w.EndObject();
                 },
                 [&](const promql::VectorSelector& vs) { Selector(w, vs, nullptr); },
                 [&](const promql::MatrixSelector& ms) {
                   const auto* vs = ms.selector
                                        ? std::get_if<promql::VectorSelector>(&ms.selector->node)
                                        : nullptr;
                   static const promql::VectorSelector kEmpty;
                   Selector(w, vs ? *vs : kEmpty, &ms.range_ms);
                 },
                 [&](const promql::Subquery& sq) {
                   w.StartObject();
                   w.Key("expr");
                   Node(w, sq.expr.get());
                   w.Key("offset");
                   w.Int64(sq.offset_ms);
                   w.Key("range");
                   w.Int64(sq.range_ms);
                   StartOrEnd(w, sq.at);
                   w.Key("step");
                   w.Int64(sq.step_ms);
                   Timestamp(w, sq.at, sq.at_ms);
                   w.Key("type");
                   w.String("subquery");
                   w.EndObject();
                 },
                 [&](const promql::Paren& p) {
                   w.StartObject();
                   w.Key("expr");
                   Node(w, p.expr.get());
                   w.Key("type");
                   w.String("parenExpr");
                   w.EndObject();
                 },
                 [&](const promql::Unary& u) {
                   w.StartObject();
                   w.Key("expr");
                   Node(w, u.expr.get());
                   w.Key("op");
                   w.String(u.negate ? "-" : "+");
                   w.Key("type");
                   w.String("unaryExpr");
                   w.EndObject();
                 },
                 [&](const promql::Binary& b) {
                   w.StartObject();
                   w.Key("bool");
                   w.Bool(b.return_bool);
                   w.Key("lhs");
                   Node(w, b.lhs.get());
                   w.Key("matching");
                   if (b.matching) {
                     w.StartObject();
                     w.Key("card");
                     w.String(CardName(b.matching->card));
                     w.Key("include");
                     StringList(w, b.matching->include);
                     w.Key("labels");
                     StringList(w, b.matching->matching_labels);
                     w.Key("on");
                     w.Bool(b.matching->on);
                     w.EndObject();
                   } else {
                     w.Null();
                   }
                   w.Key("op");
                   w.String(promql::BinaryOpName(b.op));
                   w.Key("rhs");
                   Node(w, b.rhs.get());
                   w.Key("type");
                   w.String("binaryExpr");
                   w.EndObject();
                 },
                 [&](const promql::Aggregate& a) {
                   w.StartObject();
                   w.Key("expr");
                   Node(w, a.expr.get());
                   w.Key("grouping");
                   StringList(w, a.grouping);
                   w.Key("op");
                   w.String(promql::AggregateOpName(a.op));
                   w.Key("param");
                   Node(w, a.param.get());
                   w.Key("type");
                   w.String("aggregation");
                   w.Key("without");
                   w.Bool(a.without);
                   w.EndObject();
                 },
                 [&](const promql::Call& c) {
                   w.StartObject();
                   w.Key("args");
                   w.StartArray();
                   for (const auto& arg : c.args) Node(w, arg.get());
                   w.EndArray();
                   w.Key("func");
                   w.StartObject();
                   w.Key("argTypes");
                   w.StartArray();
                   if (c.func) {
                     for (auto t : c.func->arg_types) w.String(TypeName(t));
                   }
                   w.EndArray();
                   w.Key("name");
                   w.Str(c.func ? c.func->name : std::string_view());
                   w.Key("returnType");
                   w.String(c.func ? TypeName(c.func->return_type) : "none");
                   w.Key("variadic");
                   w.Int(c.func ? c.func->variadic : 0);
                   w.EndObject();
                   w.Key("type");
                   w.String("call");
                   w.EndObject();
                 },
             },
             e->node);
}

}  // namespace

bool WriteAstJson(JsonWriter& w, const promql::Expr& e) {
  Node(w, &e);
  return w.ok();
}

}  // namespace gpumon::web::api
