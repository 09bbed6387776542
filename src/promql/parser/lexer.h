// The PromQL lexer: query text → tokens, following Prometheus's lex.go
// (keywords are case-insensitive, identifiers inside braces are never
// keywords, brackets hold durations, comments are dropped).
//
// Contract: Lex always ends the token list with one kEof or one kError
// token; a kError token carries the lexer's message (Prometheus's
// wording) and its position, and nothing after it is lexed, so the parser
// reports it only when it reaches that point, as Prometheus does.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpumon::promql::internal {

enum class Tok : uint8_t {
  kEof,
  kError,
  kIdentifier,
  kMetricIdentifier,  // an identifier containing ':'
  kNumber,
  kDuration,
  kString,
  kLParen,
  kRParen,
  kLBrace,
  kRBrace,
  kLBracket,
  kRBracket,
  kComma,
  kAssign,  // '='
  kColon,
  // Operators.
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,
  kPow,
  kEqlc,
  kNeq,
  kLte,
  kLss,
  kGte,
  kGtr,
  kEqlRegex,
  kNeqRegex,
  kAt,
  kAtan2,
  kLand,
  kLor,
  kLunless,
  // Aggregators.
  kAvg,
  kBottomk,
  kCount,
  kCountValues,
  kGroup,
  kMax,
  kMin,
  kQuantile,
  kStddev,
  kStdvar,
  kSum,
  kTopk,
  kLimitk,
  kLimitRatio,
  // Keywords.
  kBool,
  kBy,
  kGroupLeft,
  kGroupRight,
  kIgnoring,
  kOffset,
  kOn,
  kWithout,
  // Preprocessors (also function names).
  kStart,
  kEnd,
  kStep,
  kRange,
  kMaxOf,
  kMinOf,
};

struct Token {
  Tok kind = Tok::kEof;
  int start = 0;  // byte offsets into the query
  int end = 0;
};

struct LexResult {
  std::vector<Token> tokens;
  std::string error;  // message of the final kError token, if any
};

LexResult Lex(std::string_view input);

bool IsAggregator(Tok t);
bool IsOperator(Tok t);
bool IsKeyword(Tok t);
// Prometheus's Item.desc(): `identifier "foo"`, `"("`, `<op:+>`, `end of
// input`, ... for "unexpected ..." messages.
std::string Describe(const Token& t, std::string_view input);

}  // namespace gpumon::promql::internal
