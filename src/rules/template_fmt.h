// Go's formatting and string functions as alert templates call them; internal
// to the template engine (template*.cc). The humanizing functions and
// FormatGoFloat (declared in template.h) are defined here too.
//
// Contract:
// - GoSprintf follows fmt.Sprintf for the verbs templates use (%v %s %q %t
//   %d %x %X %o %f %F %e %E %g %G, flags, width, precision), with Go's
//   %!verb(type=value), %!v(MISSING) and %!(EXTRA ...) texts.
// - GoSprint is fmt.Sprint (spaces between operands when neither is a
//   string) or, with `ln`, fmt.Sprintln.
// - QueryEscape is url.QueryEscape; ReplaceAll is regexp.ReplaceAllString
//   with $1, ${1} and ${name} expansion; GoTitle is strings.Title.
#pragma once

#include <re2/re2.h>

#include <string>
#include <vector>

#include "rules/template_value.h"

namespace gpumon::rules::template_internal {

std::string GoSprintf(const std::string& fmt, const std::vector<Value>& args);
std::string GoSprint(const std::vector<Value>& args, bool ln);
std::string QueryEscape(const std::string& s);
std::string ReplaceAll(const RE2& re, const std::string& text, const std::string& repl);
std::string GoTitle(const std::string& s);

}  // namespace gpumon::rules::template_internal
