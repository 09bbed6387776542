// The alert template syntax tree and its parser (lexer included); internal
// to the template engine (template*.cc). The accepted language is described
// in template.h.
//
// Contract:
// - ParseTemplate returns the root list node of `text`, or an error
//   "line N: ..." for a syntax error, an undefined variable, a function
//   that is not defined, or a construct the engine does not support.
// - Functions are resolved by name at parse time: the builtins and
//   Prometheus's functions that the executor implements
//   (IsTemplateFunction); Prometheus's and Go's other functions fail with
//   "function "F" is not supported in alert templates".
// - Each pipeline records its line for execution errors; a range pipeline
//   keeps its $k, $v declarations for the executor to bind per element.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "rules/template.h"

namespace gpumon::rules {

namespace template_internal {

struct Pipe;

struct Arg {
  enum Kind { kField, kVar, kFunc, kString, kInt, kFloat, kBool, kNil, kDot, kPipe };
  Kind kind = kNil;
  std::string name;                 // variable (with $) or function name
  std::vector<std::string> fields;  // field chain after the operand
  std::string str;
  int64_t i = 0;
  double f = 0;
  bool b = false;
  std::shared_ptr<Pipe> pipe;
};

struct Command {
  std::vector<Arg> args;
};

struct Pipe {
  int line = 1;
  std::vector<std::string> decl;  // declared or assigned variables
  bool assign = false;            // = rather than :=
  std::vector<Command> cmds;
};

}  // namespace template_internal

struct Template::Node {
  enum Kind { kList, kText, kAction, kIf, kWith, kRange };
  Kind kind = kList;
  std::string text;
  template_internal::Pipe pipe;
  std::vector<std::shared_ptr<Node>> list;
  std::shared_ptr<Node> else_list;  // may be null
};

namespace template_internal {

// Whether `name` is a function the executor implements.
bool IsTemplateFunction(std::string_view name);

Result<std::shared_ptr<Template::Node>> ParseTemplate(std::string_view text);

}  // namespace template_internal

}  // namespace gpumon::rules
