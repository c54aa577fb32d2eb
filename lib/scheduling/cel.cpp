#include "scheduling/cel.h"

#include <algorithm>
#include <vector>

#include "scheduling/cel_evaluator.h"
#include "scheduling/cel_parser.h"

namespace sriovdra::scheduling::cel {
namespace {

constexpr size_t kMaxExpressionLength = 10240;  // Kubernetes' CELSelectorExpressionMaxLength

// The depth of the tree CEL's compiler walks: every operator and call one level, a chain of one
// logical operator (&& or ||) balanced as CEL builds it (ceil(log2 of its terms)). The parser
// loops over operator chains, so "1+1+...+1" of 300 terms passes it, 300 deep: the API server
// refuses that ("max recursion depth exceeded").
int depth(const Node& n) {
  if (n.op == Op::kAnd || n.op == Op::kOr) {
    std::vector<const Node*> terms;
    const Node* at = &n;
    while (at->op == n.op) {
      terms.push_back(at->args[1].get());
      at = at->args[0].get();
    }
    terms.push_back(at);
    int deepest = 0;
    for (const Node* t : terms) deepest = std::max(deepest, depth(*t));
    int levels = 0;
    while ((size_t{1} << levels) < terms.size()) ++levels;
    return deepest + levels;
  }
  int deepest = -1;
  for (const auto& a : n.args) deepest = std::max(deepest, depth(*a));
  return deepest + 1;
}

// "syntax error at 2:5: <message>", the line, and a caret under the column.
std::string positioned(std::string_view src, size_t offset, const std::string& message) {
  size_t line = 1, col = 1, line_start = 0;
  for (size_t k = 0; k < offset && k < src.size(); ++k) {
    if (src[k] == '\n') {
      ++line;
      col = 1;
      line_start = k + 1;
    } else {
      ++col;
    }
  }
  size_t line_end = src.find('\n', line_start);
  std::string text(src.substr(line_start, line_end == std::string_view::npos
                                              ? std::string_view::npos
                                              : line_end - line_start));
  return "syntax error at " + std::to_string(line) + ":" + std::to_string(col) + ": " + message +
         "\n  " + text + "\n  " + std::string(col - 1, ' ') + "^";
}

}  // namespace

Result<Program> Program::compile(std::string_view expression) {
  Program p;
  p.source_ = std::string(expression);
  if (expression.size() > kMaxExpressionLength) {
    return Status(Code::kInvalidArgument, "expression is longer than 10240 characters");
  }
  try {
    p.root_ = parse(p.source_);
  } catch (const SyntaxError& e) {
    return Status(Code::kInvalidArgument, positioned(p.source_, e.offset, e.message));
  }
  if (depth(*p.root_) > kMaxNesting) {
    return Status(Code::kInvalidArgument,
                  positioned(p.source_, 0,
                             "expression nests deeper than " + std::to_string(kMaxNesting) +
                                 " levels (CEL's recursion limit; a chain of N binary operators "
                                 "nests N deep, except && and ||, which CEL balances)"));
  }
  return p;
}

Result<bool> Program::matches(const DeviceInput& device, int64_t cost_limit) const {
  auto [v, over_budget] = evaluate(*root_, device, cost_limit);
  if (over_budget) return Status(Code::kInvalidArgument, std::string(kCostExceededMessage));
  if (v.isError()) return Status(Code::kInvalidArgument, v.s);
  if (v.kind != Value::Kind::kBool) {
    return Status(Code::kInvalidArgument,
                  "the expression must evaluate to bool, not " + std::string(typeName(v)));
  }
  return v.b;
}

}  // namespace sriovdra::scheduling::cel
