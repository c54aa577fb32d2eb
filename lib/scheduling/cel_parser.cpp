#include "scheduling/cel_parser.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <regex>
#include <set>
#include <vector>

namespace sriovdra::scheduling::cel {
namespace {

// ---------------------------------------------------------------------------------------------
// Lexer

enum class Tok { kEnd, kIdent, kInt, kUint, kDouble, kString, kPunct };

struct Token {
  Tok kind = Tok::kEnd;
  std::string text;  // identifier, punctuation, or the decoded string
  size_t offset = 0;
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
};

void appendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    while (true) {
      skipSpace();
      Token t;
      t.offset = pos_;
      if (pos_ >= src_.size()) {
        out.push_back(t);
        return out;
      }
      char c = src_[pos_];
      if ((c == 'r' || c == 'R') && pos_ + 1 < src_.size() &&
          (src_[pos_ + 1] == '"' || src_[pos_ + 1] == '\'')) {
        ++pos_;
        t.kind = Tok::kString;
        t.text = stringLiteral(true);
      } else if (std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_') {
        size_t start = pos_;
        while (pos_ < src_.size() &&
               (std::isalnum(static_cast<unsigned char>(src_[pos_])) != 0 || src_[pos_] == '_')) {
          ++pos_;
        }
        t.kind = Tok::kIdent;
        t.text = std::string(src_.substr(start, pos_ - start));
      } else if (std::isdigit(static_cast<unsigned char>(c)) != 0 ||
                 (c == '.' && pos_ + 1 < src_.size() &&
                  std::isdigit(static_cast<unsigned char>(src_[pos_ + 1])) != 0)) {
        number(t);
      } else if (c == '"' || c == '\'') {
        t.kind = Tok::kString;
        t.text = stringLiteral(false);
      } else {
        static const char* kTwo[] = {"==", "!=", "<=", ">=", "&&", "||"};
        t.kind = Tok::kPunct;
        for (const char* two : kTwo) {
          if (src_.substr(pos_, 2) == two) t.text = two;
        }
        if (t.text.empty()) {
          if (std::string_view("()[]{}.,:?!<>+-*/%").find(c) == std::string_view::npos) {
            throw SyntaxError(pos_, "unexpected character '" + std::string(1, c) + "'");
          }
          t.text = std::string(1, c);
        }
        pos_ += t.text.size();
      }
      out.push_back(std::move(t));
    }
  }

 private:
  void skipSpace() {
    while (pos_ < src_.size()) {
      if (std::isspace(static_cast<unsigned char>(src_[pos_])) != 0) {
        ++pos_;
      } else if (src_.substr(pos_, 2) == "//") {
        while (pos_ < src_.size() && src_[pos_] != '\n') ++pos_;
      } else {
        return;
      }
    }
  }

  void number(Token& t) {
    size_t start = pos_;
    bool hex = src_.substr(pos_, 2) == "0x" || src_.substr(pos_, 2) == "0X";
    if (hex) pos_ += 2;
    bool is_double = false;
    while (pos_ < src_.size()) {
      char c = src_[pos_];
      if (std::isxdigit(static_cast<unsigned char>(c)) != 0 && (hex || std::isdigit(c) != 0)) {
        ++pos_;
      } else if (!hex && (c == '.' || c == 'e' || c == 'E')) {
        is_double = true;
        ++pos_;
        if ((c == 'e' || c == 'E') && pos_ < src_.size() &&
            (src_[pos_] == '+' || src_[pos_] == '-')) {
          ++pos_;
        }
      } else {
        break;
      }
    }
    std::string text(src_.substr(start, pos_ - start));
    bool is_uint = pos_ < src_.size() && (src_[pos_] == 'u' || src_[pos_] == 'U') && !is_double;
    if (is_uint) ++pos_;
    const char* first = text.data() + (hex ? 2 : 0);
    const char* last = text.data() + text.size();
    if (is_double) {
      t.kind = Tok::kDouble;
      char* end = nullptr;
      t.d = std::strtod(text.c_str(), &end);
      if (end != text.c_str() + text.size()) throw SyntaxError(start, "malformed number " + text);
    } else if (is_uint) {
      t.kind = Tok::kUint;
      auto [p, ec] = std::from_chars(first, last, t.u, hex ? 16 : 10);
      if (ec != std::errc() || p != last) throw SyntaxError(start, "malformed number " + text);
    } else {
      t.kind = Tok::kInt;
      uint64_t v = 0;
      auto [p, ec] = std::from_chars(first, last, v, hex ? 16 : 10);
      if (ec != std::errc() || p != last) throw SyntaxError(start, "malformed number " + text);
      // 9223372036854775808 is only valid after unary minus; the parser checks.
      if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1) {
        throw SyntaxError(start, "integer " + text + " does not fit an int");
      }
      t.u = v;
      t.i = static_cast<int64_t>(v);
    }
  }

  std::string stringLiteral(bool raw) {
    size_t start = pos_;
    char q = src_[pos_];
    bool triple = src_.substr(pos_, 3) == std::string(3, q);
    std::string close = triple ? std::string(3, q) : std::string(1, q);
    pos_ += close.size();
    std::string out;
    while (true) {
      if (pos_ >= src_.size()) throw SyntaxError(start, "unterminated string literal");
      if (src_.substr(pos_, close.size()) == close) {
        pos_ += close.size();
        return out;
      }
      char c = src_[pos_];
      if (!triple && c == '\n') throw SyntaxError(start, "unterminated string literal");
      if (c != '\\' || raw) {
        out += c;
        ++pos_;
        continue;
      }
      if (pos_ + 1 >= src_.size()) throw SyntaxError(pos_, "unterminated escape sequence");
      char e = src_[pos_ + 1];
      pos_ += 2;
      static const std::map<char, char> kSimple = {
          {'a', '\a'}, {'b', '\b'},  {'f', '\f'},  {'n', '\n'}, {'r', '\r'}, {'t', '\t'},
          {'v', '\v'}, {'\\', '\\'}, {'\'', '\''}, {'"', '"'},  {'`', '`'},  {'?', '?'}};
      if (auto it = kSimple.find(e); it != kSimple.end()) {
        out += it->second;
      } else if (e == 'x' || e == 'u' || e == 'U') {
        size_t n = e == 'x' ? 2 : (e == 'u' ? 4 : 8);
        uint32_t cp = 0;
        auto hex = src_.substr(pos_, n);
        auto [p, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), cp, 16);
        if (hex.size() != n || ec != std::errc() || p != hex.data() + hex.size()) {
          throw SyntaxError(pos_ - 2, "malformed \\" + std::string(1, e) + " escape");
        }
        pos_ += n;
        appendUtf8(out, cp);
      } else if (e >= '0' && e <= '3') {
        auto oct = src_.substr(pos_ - 1, 3);
        uint32_t cp = 0;
        auto [p, ec] = std::from_chars(oct.data(), oct.data() + oct.size(), cp, 8);
        if (oct.size() != 3 || ec != std::errc() || p != oct.data() + 3) {
          throw SyntaxError(pos_ - 2, "malformed octal escape");
        }
        pos_ += 2;
        appendUtf8(out, cp);
      } else {
        throw SyntaxError(pos_ - 2, "unknown escape sequence \\" + std::string(1, e));
      }
    }
  }

  std::string_view src_;
  size_t pos_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Parser (CEL grammar, recursive descent) with static checks

struct FunctionSpec {
  bool global;             // f(x) rather than x.f()
  int min_args, max_args;  // not counting the receiver
};

const std::map<std::string, std::vector<FunctionSpec>>& functions() {
  static const std::map<std::string, std::vector<FunctionSpec>> kFunctions = {
      {"size", {{true, 1, 1}, {false, 0, 0}}},
      {"int", {{true, 1, 1}}},
      {"uint", {{true, 1, 1}}},
      {"double", {{true, 1, 1}}},
      {"string", {{true, 1, 1}}},
      {"quantity", {{true, 1, 1}}},
      {"isQuantity", {{true, 1, 1}}},
      {"semver", {{true, 1, 1}}},
      {"isSemver", {{true, 1, 1}}},
      {"startsWith", {{false, 1, 1}}},
      {"endsWith", {{false, 1, 1}}},
      {"contains", {{false, 1, 1}}},
      {"matches", {{false, 1, 1}, {true, 2, 2}}},
      {"lowerAscii", {{false, 0, 0}}},
      {"upperAscii", {{false, 0, 0}}},
      {"trim", {{false, 0, 0}}},
      {"compareTo", {{false, 1, 1}}},
      {"isGreaterThan", {{false, 1, 1}}},
      {"isLessThan", {{false, 1, 1}}},
      {"asInteger", {{false, 0, 0}}},
      {"isInteger", {{false, 0, 0}}},
      {"major", {{false, 0, 0}}},
      {"minor", {{false, 0, 0}}},
      {"patch", {{false, 0, 0}}},
  };
  return kFunctions;
}

const std::set<std::string>& deviceFields() {
  static const std::set<std::string> kFields = {"driver", "attributes", "capacity",
                                                "allowMultipleAllocations"};
  return kFields;
}

std::string describe(const Token& t) {
  switch (t.kind) {
    case Tok::kEnd:
      return "end of input";
    case Tok::kString:
      return "string literal";
    case Tok::kInt:
    case Tok::kUint:
    case Tok::kDouble:
      return "number";
    default:
      return "'" + t.text + "'";
  }
}

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : toks_(std::move(tokens)) {}

  NodePtr parse() {
    NodePtr e = expr();
    if (peek().kind != Tok::kEnd) fail("expected an operator or end of input");
    return e;
  }

 private:
  const Token& peek() const { return toks_[pos_]; }
  bool isPunct(std::string_view p) const { return peek().kind == Tok::kPunct && peek().text == p; }
  bool isKeyword(std::string_view k) const {
    return peek().kind == Tok::kIdent && peek().text == k;
  }
  bool accept(std::string_view p) {
    if (!isPunct(p)) return false;
    ++pos_;
    return true;
  }
  [[noreturn]] void fail(const std::string& expected) const {
    throw SyntaxError(peek().offset, expected + ", found " + describe(peek()));
  }
  void expect(std::string_view p) {
    if (!accept(p)) fail("expected '" + std::string(p) + "'");
  }

  static NodePtr make(Op op, size_t offset, std::vector<NodePtr> args = {}, std::string name = "") {
    auto n = std::make_shared<Node>();
    n->op = op;
    n->offset = offset;
    n->args = std::move(args);
    n->name = std::move(name);
    return n;
  }

  // Counts the parser's own recursion (parentheses, unary operators, list and map literals,
  // call arguments), so hostile nesting is an error instead of a stack overflow.
  class Nested {
   public:
    explicit Nested(Parser& p) : p_(p) {
      if (++p_.depth_ > kMaxNesting) {
        throw SyntaxError(p_.peek().offset, "expression nests deeper than " +
                                                std::to_string(kMaxNesting) +
                                                " levels (CEL's recursion limit)");
      }
    }
    ~Nested() { --p_.depth_; }
    Nested(const Nested&) = delete;
    Nested& operator=(const Nested&) = delete;

   private:
    Parser& p_;
  };

  NodePtr expr() {
    Nested nested(*this);
    NodePtr cond = orExpr();
    if (!isPunct("?")) return cond;
    size_t at = peek().offset;
    ++pos_;
    NodePtr then = orExpr();
    expect(":");
    NodePtr otherwise = expr();
    return make(Op::kConditional, at, {cond, then, otherwise});
  }

  NodePtr orExpr() {
    NodePtr left = andExpr();
    while (isPunct("||")) {
      size_t at = peek().offset;
      ++pos_;
      left = make(Op::kOr, at, {left, andExpr()});
    }
    return left;
  }

  NodePtr andExpr() {
    NodePtr left = relation();
    while (isPunct("&&")) {
      size_t at = peek().offset;
      ++pos_;
      left = make(Op::kAnd, at, {left, relation()});
    }
    return left;
  }

  NodePtr relation() {
    NodePtr left = addition();
    static const std::map<std::string, Op> kRel = {{"==", Op::kEq}, {"!=", Op::kNe},
                                                   {"<", Op::kLt},  {"<=", Op::kLe},
                                                   {">", Op::kGt},  {">=", Op::kGe}};
    while (true) {
      size_t at = peek().offset;
      if (peek().kind == Tok::kPunct && kRel.count(peek().text) != 0) {
        Op op = kRel.at(peek().text);
        ++pos_;
        left = make(op, at, {left, addition()});
      } else if (isKeyword("in")) {
        ++pos_;
        left = make(Op::kIn, at, {left, addition()});
      } else {
        return left;
      }
    }
  }

  NodePtr addition() {
    NodePtr left = multiplication();
    while (isPunct("+") || isPunct("-")) {
      size_t at = peek().offset;
      Op op = peek().text == "+" ? Op::kAdd : Op::kSub;
      ++pos_;
      left = make(op, at, {left, multiplication()});
    }
    return left;
  }

  NodePtr multiplication() {
    NodePtr left = unary();
    while (isPunct("*") || isPunct("/") || isPunct("%")) {
      size_t at = peek().offset;
      Op op = peek().text == "*" ? Op::kMul : (peek().text == "/" ? Op::kDiv : Op::kMod);
      ++pos_;
      left = make(op, at, {left, unary()});
    }
    return left;
  }

  NodePtr unary() {
    size_t at = peek().offset;
    if (accept("!")) {
      Nested nested(*this);
      return make(Op::kNot, at, {unary()});
    }
    if (isPunct("-")) {
      ++pos_;
      // -9223372036854775808 is the only way to write the smallest int.
      if (peek().kind == Tok::kInt) {
        const Token& t = peek();
        ++pos_;
        auto n = std::make_shared<Node>();
        n->offset = at;
        n->literal = Value::ofInt(static_cast<int64_t>(0 - t.u));
        return member(n);
      }
      Nested nested(*this);
      return make(Op::kNeg, at, {unary()});
    }
    return member(primary());
  }

  NodePtr member(NodePtr operand) {
    while (true) {
      size_t at = peek().offset;
      if (accept(".")) {
        if (peek().kind != Tok::kIdent) fail("expected a field or method name after '.'");
        std::string name = peek().text;
        ++pos_;
        if (isPunct("(")) {
          ++pos_;
          std::vector<NodePtr> args{operand};
          arguments(args);
          operand = call(name, at, std::move(args), true);
        } else {
          checkDeviceField(*operand, name, at);
          operand = make(Op::kSelect, at, {operand}, name);
        }
      } else if (accept("[")) {
        NodePtr index = expr();
        expect("]");
        operand = make(Op::kIndex, at, {operand, index});
      } else {
        return operand;
      }
    }
  }

  void arguments(std::vector<NodePtr>& args) {
    if (accept(")")) return;
    while (true) {
      args.push_back(expr());
      if (accept(")")) return;
      if (!accept(",")) fail("expected ',' or ')'");
    }
  }

  NodePtr call(const std::string& name, size_t at, std::vector<NodePtr> args, bool receiver) {
    auto it = functions().find(name);
    if (it == functions().end()) {
      throw SyntaxError(at, "undeclared reference to function '" + name + "'");
    }
    int n = static_cast<int>(args.size()) - (receiver ? 1 : 0);
    bool ok = false;
    for (const auto& spec : it->second) {
      ok = ok || (spec.global == !receiver && n >= spec.min_args && n <= spec.max_args);
    }
    if (!ok) {
      throw SyntaxError(at, "no matching overload for '" + name + "' with " + std::to_string(n) +
                                " argument(s)" + (receiver ? " on a receiver" : ""));
    }
    auto node = make(Op::kCall, at, std::move(args), name);
    std::const_pointer_cast<Node>(node)->receiver = receiver;
    return node;
  }

  static void checkDeviceField(const Node& operand, const std::string& field, size_t at) {
    if (operand.op == Op::kIdent && operand.name == "device" && deviceFields().count(field) == 0) {
      throw SyntaxError(at, "undefined field '" + field +
                                "' (device has driver, attributes, capacity, "
                                "allowMultipleAllocations)");
    }
  }

  NodePtr primary() {
    const Token t = peek();
    size_t at = t.offset;
    switch (t.kind) {
      case Tok::kInt:
        if (t.u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
          throw SyntaxError(at, "integer does not fit an int");
        }
        ++pos_;
        return literal(Value::ofInt(t.i), at);
      case Tok::kUint:
        ++pos_;
        return literal(Value::ofUint(t.u), at);
      case Tok::kDouble:
        ++pos_;
        return literal(Value::ofDouble(t.d), at);
      case Tok::kString:
        ++pos_;
        return literal(Value::ofString(t.text), at);
      case Tok::kIdent:
        return identifier();
      case Tok::kEnd:
        fail("expected an expression");
      case Tok::kPunct:
        break;
    }
    if (accept("(")) {
      NodePtr e = expr();
      expect(")");
      return e;
    }
    if (accept("[")) {
      std::vector<NodePtr> items;
      if (!accept("]")) {
        while (true) {
          items.push_back(expr());
          if (accept("]")) break;
          if (!accept(",")) fail("expected ',' or ']'");
          if (accept("]")) break;  // trailing comma
        }
      }
      return make(Op::kList, at, std::move(items));
    }
    if (accept("{")) {
      std::vector<NodePtr> items;  // key, value, key, value, ...
      if (!accept("}")) {
        while (true) {
          items.push_back(expr());
          expect(":");
          items.push_back(expr());
          if (accept("}")) break;
          if (!accept(",")) fail("expected ',' or '}'");
          if (accept("}")) break;
        }
      }
      return make(Op::kMap, at, std::move(items));
    }
    fail("expected an expression");
  }

  static NodePtr literal(Value v, size_t at) {
    auto n = std::make_shared<Node>();
    n->offset = at;
    n->literal = std::move(v);
    return n;
  }

  NodePtr identifier() {
    const Token t = peek();
    ++pos_;
    if (t.text == "true" || t.text == "false")
      return literal(Value::ofBool(t.text == "true"), t.offset);
    if (t.text == "null") return literal(Value{}, t.offset);
    if (t.text == "in") throw SyntaxError(t.offset, "expected an expression, found 'in'");
    if (isPunct("(")) {
      ++pos_;
      if (t.text == "has") {
        NodePtr arg = expr();
        expect(")");
        if (arg->op != Op::kSelect) {
          throw SyntaxError(t.offset,
                            "invalid argument to has() macro: it takes a field "
                            "selection such as has(device.attributes[\"d\"].name)");
        }
        return make(Op::kHas, t.offset, {arg->args[0]}, arg->name);
      }
      std::vector<NodePtr> args;
      arguments(args);
      return call(t.text, t.offset, std::move(args), false);
    }
    if (t.text != "device") {
      throw SyntaxError(t.offset,
                        "undeclared reference to '" + t.text + "' (the only variable is device)");
    }
    return make(Op::kIdent, t.offset, {}, t.text);
  }

  std::vector<Token> toks_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

NodePtr parse(std::string_view source) { return Parser(Lexer(source).run()).parse(); }

}  // namespace sriovdra::scheduling::cel
