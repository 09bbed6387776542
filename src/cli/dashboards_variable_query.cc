// Grafana Prometheus variable queries (dashboards_variable_query.h).

#include "cli/dashboards_variable_query.h"

#include <cctype>

namespace gpumon::cli {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool IsLabelName(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

// The arguments of `name(...)` when `text` is exactly that call.
bool CallArguments(std::string_view text, std::string_view name, std::string_view* args) {
  if (text.substr(0, name.size()) != name) return false;
  std::string_view rest = Trim(text.substr(name.size()));
  if (rest.size() < 2 || rest.front() != '(' || rest.back() != ')') return false;
  *args = Trim(rest.substr(1, rest.size() - 2));
  return true;
}

}  // namespace

Result<VariableQuery> ParseVariableQuery(std::string_view text) {
  text = Trim(text);
  std::string_view args;
  VariableQuery q;
  if (CallArguments(text, "label_values", &args)) {
    // The label is the last argument; the selector (which may hold commas
    // inside its matchers) is everything before the last comma.
    size_t comma = args.rfind(',');
    std::string_view label = Trim(comma == std::string_view::npos ? args : args.substr(comma + 1));
    if (!IsLabelName(label)) {
      return Status::Error("label_values(...): \"" + std::string(label) + "\" is not a label name");
    }
    q.kind = VariableQuery::Kind::kLabelValues;
    q.label = std::string(label);
    if (comma != std::string_view::npos) q.selector = std::string(Trim(args.substr(0, comma)));
    return q;
  }
  if (CallArguments(text, "query_result", &args)) {
    q.kind = VariableQuery::Kind::kQueryResult;
    q.argument = std::string(args);
    return q;
  }
  if (CallArguments(text, "label_names", &args)) {
    q.kind = VariableQuery::Kind::kLabelNames;
    q.argument = std::string(args);
    return q;
  }
  if (CallArguments(text, "metrics", &args)) {
    q.kind = VariableQuery::Kind::kMetrics;
    q.argument = std::string(args);
    return q;
  }
  return Status::Error("\"" + std::string(text) +
                       "\" is not label_values(...), query_result(...), label_names(...) or "
                       "metrics(...)");
}

std::string FormatVariableQuery(const VariableQuery& q) {
  switch (q.kind) {
    case VariableQuery::Kind::kLabelValues:
      return "label_values(" + (q.selector.empty() ? "" : q.selector + ", ") + q.label + ")";
    case VariableQuery::Kind::kQueryResult:
      return "query_result(" + q.argument + ")";
    case VariableQuery::Kind::kLabelNames:
      return "label_names(" + q.argument + ")";
    case VariableQuery::Kind::kMetrics:
      return "metrics(" + q.argument + ")";
  }
  return "";
}

}  // namespace gpumon::cli
