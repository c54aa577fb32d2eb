#pragma once
// Internal to the CEL implementation: the lexer and the recursive-descent parser of CEL's
// grammar, with the static checks of cel.h (the variable `device`, its fields, known functions
// and their arity). Pure.
#include <string>
#include <string_view>
#include <utility>

#include "scheduling/cel_value.h"

namespace sriovdra::scheduling::cel {

// Nesting the parser accepts: parentheses, list and map literals, call arguments and unary
// operators, each level counted once. Deeper is a SyntaxError, never a stack overflow.
inline constexpr int kMaxNesting = 250;

struct SyntaxError {
  SyntaxError(size_t at, std::string what) : offset(at), message(std::move(what)) {}
  size_t offset;
  std::string message;
};

// Throws SyntaxError at the first problem.
NodePtr parse(std::string_view source);

}  // namespace sriovdra::scheduling::cel
