#include "dra/cel.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <regex>
#include <set>
#include <vector>

#include "dra/attributes.h"
#include "dra/quantity.h"

namespace sriovdra::dra::cel {

constexpr size_t kMaxExpressionLength = 10240;  // Kubernetes' CELSelectorExpressionMaxLength

// ---------------------------------------------------------------------------------------------
// Values

namespace {

struct Value;
using List = std::vector<Value>;
using MapEntries = std::vector<std::pair<Value, Value>>;

struct Value {
  enum class Kind {
    kNull,
    kBool,
    kInt,
    kUint,
    kDouble,
    kString,
    kList,
    kMap,
    kQuantity,
    kSemver,
    kError,
    kDevice,       // the variable `device`
    kAttrDomains,  // device.attributes: domain -> attributes
    kAttrs,        // device.attributes[domain]
    kCapDomains,   // device.capacity
    kCaps,         // device.capacity[domain]
  };
  Kind kind = Kind::kNull;
  bool b = false;
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
  std::string s;  // string, error message, or the domain of kAttrs / kCaps
  std::shared_ptr<const List> list;
  std::shared_ptr<const MapEntries> map;
  std::shared_ptr<const Quantity> quantity;
  std::shared_ptr<const Semver> semver;

  static Value ofBool(bool v) { return {.kind = Kind::kBool, .b = v}; }
  static Value ofInt(int64_t v) { return {.kind = Kind::kInt, .i = v}; }
  static Value ofUint(uint64_t v) { return {.kind = Kind::kUint, .u = v}; }
  static Value ofDouble(double v) { return {.kind = Kind::kDouble, .d = v}; }
  static Value ofString(std::string v) { return {.kind = Kind::kString, .s = std::move(v)}; }
  static Value error(std::string message) {
    return {.kind = Kind::kError, .s = std::move(message)};
  }
  static Value of(Kind k, std::string domain = "") { return {.kind = k, .s = std::move(domain)}; }
  bool isError() const { return kind == Kind::kError; }
  bool isNumber() const {
    return kind == Kind::kInt || kind == Kind::kUint || kind == Kind::kDouble;
  }
};

std::string_view typeName(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kNull:
      return "null_type";
    case Value::Kind::kBool:
      return "bool";
    case Value::Kind::kInt:
      return "int";
    case Value::Kind::kUint:
      return "uint";
    case Value::Kind::kDouble:
      return "double";
    case Value::Kind::kString:
      return "string";
    case Value::Kind::kList:
      return "list";
    case Value::Kind::kQuantity:
      return "Quantity";
    case Value::Kind::kSemver:
      return "Semver";
    case Value::Kind::kError:
      return "error";
    case Value::Kind::kDevice:
      return "DRADevice";
    default:
      return "map";
  }
}

Value noOverload(std::string_view op, const Value& a, const Value* b = nullptr) {
  std::string msg = "no such overload: " + std::string(op) + "(" + std::string(typeName(a));
  if (b != nullptr) msg += ", " + std::string(typeName(*b));
  return Value::error(msg + ")");
}

// ---------------------------------------------------------------------------------------------
// Syntax tree

enum class Op {
  kLiteral,
  kIdent,
  kSelect,
  kHas,
  kIndex,
  kCall,
  kList,
  kMap,
  kNot,
  kNeg,
  kAnd,
  kOr,
  kConditional,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kIn,
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,
};

}  // namespace

struct Node {
  Op op = Op::kLiteral;
  size_t offset = 0;
  Value literal;
  std::string name;       // identifier, field or function
  bool receiver = false;  // kCall: args[0] is the target of a member call
  std::vector<std::shared_ptr<const Node>> args;
};

namespace {

using NodePtr = std::shared_ptr<const Node>;

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

class SyntaxError {
 public:
  SyntaxError(size_t offset, std::string message) : offset(offset), message(std::move(message)) {}
  size_t offset;
  std::string message;
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

  NodePtr expr() {
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
    if (accept("!")) return make(Op::kNot, at, {unary()});
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
};

// ---------------------------------------------------------------------------------------------
// Evaluation

const Value kCostExceeded = Value::error("operation cancelled: actual cost limit exceeded");

Value attributeValue(const api::AttributeValue& a) {
  using T = api::AttributeValue::Type;
  auto version = [](const std::string& s) {
    auto v = Semver::parse(s);
    if (!v.ok()) return Value::error(v.status().message());
    return Value{.kind = Value::Kind::kSemver, .semver = std::make_shared<Semver>(std::move(*v))};
  };
  switch (a.type) {
    case T::kInt:
      return Value::ofInt(a.int_value);
    case T::kBool:
      return Value::ofBool(a.bool_value);
    case T::kString:
      return Value::ofString(a.string_value);
    case T::kVersion:
      return version(a.string_value);
    default:
      break;
  }
  auto list = std::make_shared<List>();
  for (int64_t v : a.int_values) list->push_back(Value::ofInt(v));
  for (bool v : a.bool_values) list->push_back(Value::ofBool(v));
  for (const auto& v : a.string_values) {
    list->push_back(a.type == T::kVersions ? version(v) : Value::ofString(v));
  }
  return Value{.kind = Value::Kind::kList, .list = std::move(list)};
}

// The domain and ID of an attribute or capacity key published by `driver`.
std::pair<std::string_view, std::string_view> splitKey(std::string_view key,
                                                       std::string_view driver) {
  auto slash = key.find('/');
  if (slash == std::string_view::npos) return {driver, key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

class Evaluator {
 public:
  Evaluator(const DeviceInput& device, int64_t limit) : dev_(device), limit_(limit) {}

  Value eval(const Node& n) {
    if (++cost_ > limit_) return kCostExceeded;
    switch (n.op) {
      case Op::kLiteral:
        return n.literal;
      case Op::kIdent:
        return Value::of(Value::Kind::kDevice);
      case Op::kSelect:
        return select(eval(*n.args[0]), n.name, false);
      case Op::kHas:
        return select(eval(*n.args[0]), n.name, true);
      case Op::kIndex:
        return index(eval(*n.args[0]), eval(*n.args[1]));
      case Op::kList: {
        auto list = std::make_shared<List>();
        for (const auto& a : n.args) {
          Value v = eval(*a);
          if (v.isError()) return v;
          list->push_back(std::move(v));
        }
        return Value{.kind = Value::Kind::kList, .list = std::move(list)};
      }
      case Op::kMap: {
        auto map = std::make_shared<MapEntries>();
        for (size_t k = 0; k + 1 < n.args.size(); k += 2) {
          Value key = eval(*n.args[k]);
          if (key.isError()) return key;
          Value value = eval(*n.args[k + 1]);
          if (value.isError()) return value;
          map->emplace_back(std::move(key), std::move(value));
        }
        return Value{.kind = Value::Kind::kMap, .map = std::move(map)};
      }
      case Op::kNot: {
        Value v = eval(*n.args[0]);
        if (v.isError()) return v;
        if (v.kind != Value::Kind::kBool) return noOverload("!_", v);
        return Value::ofBool(!v.b);
      }
      case Op::kNeg:
        return negate(eval(*n.args[0]));
      case Op::kAnd:
      case Op::kOr:
        return logical(n);
      case Op::kConditional: {
        Value c = eval(*n.args[0]);
        if (c.isError()) return c;
        if (c.kind != Value::Kind::kBool) return noOverload("_?_:_", c);
        return eval(*n.args[c.b ? 1 : 2]);
      }
      case Op::kCall:
        return call(n);
      default:
        break;
    }
    Value a = eval(*n.args[0]);
    if (a.isError()) return a;
    Value b = eval(*n.args[1]);
    if (b.isError()) return b;
    return binary(n.op, a, b);
  }

  bool overBudget() const { return cost_ > limit_; }

 private:
  Value logical(const Node& n) {
    bool is_and = n.op == Op::kAnd;
    Value a = eval(*n.args[0]);
    if (overBudget()) return kCostExceeded;
    if (a.kind == Value::Kind::kBool && a.b != is_and) return a;  // short circuit
    Value b = eval(*n.args[1]);
    if (overBudget()) return kCostExceeded;
    if (b.kind == Value::Kind::kBool && b.b != is_and) return b;  // absorbs an error on the left
    if (a.isError()) return a;
    if (b.isError()) return b;
    if (a.kind != Value::Kind::kBool) return noOverload(is_and ? "_&&_" : "_||_", a, &b);
    if (b.kind != Value::Kind::kBool) return noOverload(is_and ? "_&&_" : "_||_", a, &b);
    return Value::ofBool(is_and);
  }

  // Looks `key` up in a map-like value; `test` (has() and `in`) answers presence instead.
  Value select(const Value& m, const std::string& key, bool test) {
    if (m.isError()) return m;
    auto missing = [&]() {
      return test ? Value::ofBool(false) : Value::error("no such key: " + key);
    };
    switch (m.kind) {
      case Value::Kind::kDevice:
        if (key == "driver")
          return test ? Value::ofBool(true) : Value::ofString(std::string(dev_.driver));
        if (key == "attributes")
          return test ? Value::ofBool(true) : Value::of(Value::Kind::kAttrDomains);
        if (key == "capacity")
          return test ? Value::ofBool(true) : Value::of(Value::Kind::kCapDomains);
        if (key == "allowMultipleAllocations") return Value::ofBool(test);
        return missing();
      case Value::Kind::kAttrDomains:
      case Value::Kind::kCapDomains: {
        if (!test) {
          return Value::of(
              m.kind == Value::Kind::kAttrDomains ? Value::Kind::kAttrs : Value::Kind::kCaps, key);
        }
        bool found = false;
        forEachKey(
            m.kind == Value::Kind::kAttrDomains,
            [&](std::string_view domain, std::string_view) { found = found || domain == key; });
        return Value::ofBool(found);
      }
      case Value::Kind::kAttrs: {
        const api::AttributeValue* a =
            dra::findQualified(dev_.device.attributes, dev_.driver, m.s + "/" + key);
        if (a == nullptr) return missing();
        return test ? Value::ofBool(true) : attributeValue(*a);
      }
      case Value::Kind::kCaps: {
        const std::string* q =
            dra::findQualified(dev_.device.capacity, dev_.driver, m.s + "/" + key);
        if (q == nullptr) return missing();
        if (test) return Value::ofBool(true);
        auto parsed = Quantity::parse(*q);
        if (!parsed.ok()) return Value::error(parsed.status().message());
        return Value{.kind = Value::Kind::kQuantity,
                     .quantity = std::make_shared<Quantity>(*parsed)};
      }
      case Value::Kind::kMap:
        for (const auto& [k, v] : *m.map) {
          if (k.kind == Value::Kind::kString && k.s == key) return test ? Value::ofBool(true) : v;
        }
        return missing();
      default:
        return test ? noOverload("has", m)
                    : Value::error("type '" + std::string(typeName(m)) +
                                   "' does not support field selection");
    }
  }

  Value index(const Value& m, const Value& k) {
    if (m.isError()) return m;
    if (k.isError()) return k;
    if (m.kind == Value::Kind::kList) {
      int64_t i = 0;
      if (k.kind == Value::Kind::kInt) {
        i = k.i;
      } else if (k.kind == Value::Kind::kUint && k.u <= static_cast<uint64_t>(INT64_MAX)) {
        i = static_cast<int64_t>(k.u);
      } else {
        return noOverload("_[_]", m, &k);
      }
      if (i < 0 || i >= static_cast<int64_t>(m.list->size())) {
        return Value::error("index out of range: " + std::to_string(i));
      }
      return (*m.list)[static_cast<size_t>(i)];
    }
    if (m.kind == Value::Kind::kMap) {
      for (const auto& [key, v] : *m.map) {
        if (equal(key, k)) return v;
      }
      return Value::error("no such key: " + display(k));
    }
    if (k.kind != Value::Kind::kString) return noOverload("_[_]", m, &k);
    return select(m, k.s, false);
  }

  Value contains(const Value& container, const Value& item) {
    switch (container.kind) {
      case Value::Kind::kList:
        cost_ += static_cast<int64_t>(container.list->size());
        for (const auto& v : *container.list) {
          if (equal(v, item)) return Value::ofBool(true);
        }
        return Value::ofBool(false);
      case Value::Kind::kMap:
        for (const auto& [k, v] : *container.map) {
          if (equal(k, item)) return Value::ofBool(true);
        }
        return Value::ofBool(false);
      case Value::Kind::kDevice:
      case Value::Kind::kAttrDomains:
      case Value::Kind::kCapDomains:
      case Value::Kind::kAttrs:
      case Value::Kind::kCaps:
        if (item.kind != Value::Kind::kString) return Value::ofBool(false);
        return select(container, item.s, true);
      default:
        return noOverload("@in", item, &container);
    }
  }

  template <typename F>
  void forEachKey(bool attributes, F&& f) const {
    if (attributes) {
      for (const auto& [key, v] : dev_.device.attributes) {
        auto [domain, id] = splitKey(key, dev_.driver);
        f(domain, id);
      }
    } else {
      for (const auto& [key, v] : dev_.device.capacity) {
        auto [domain, id] = splitKey(key, dev_.driver);
        f(domain, id);
      }
    }
  }

  // Lazily built maps become real ones for size() and comparisons.
  Value materialize(const Value& v) {
    if (v.kind != Value::Kind::kAttrDomains && v.kind != Value::Kind::kCapDomains &&
        v.kind != Value::Kind::kAttrs && v.kind != Value::Kind::kCaps) {
      return v;
    }
    bool attributes = v.kind == Value::Kind::kAttrDomains || v.kind == Value::Kind::kAttrs;
    bool domains = v.kind == Value::Kind::kAttrDomains || v.kind == Value::Kind::kCapDomains;
    std::set<std::string> keys;
    forEachKey(attributes, [&](std::string_view domain, std::string_view id) {
      if (domains) {
        keys.emplace(domain);
      } else if (domain == v.s) {
        keys.emplace(id);
      }
    });
    auto map = std::make_shared<MapEntries>();
    for (const auto& k : keys) {
      map->emplace_back(Value::ofString(k),
                        domains
                            ? Value::of(attributes ? Value::Kind::kAttrs : Value::Kind::kCaps, k)
                            : select(v, k, false));
    }
    return Value{.kind = Value::Kind::kMap, .map = std::move(map)};
  }

  static std::string display(const Value& v) {
    switch (v.kind) {
      case Value::Kind::kString:
        return v.s;
      case Value::Kind::kInt:
        return std::to_string(v.i);
      case Value::Kind::kUint:
        return std::to_string(v.u) + "u";
      case Value::Kind::kBool:
        return v.b ? "true" : "false";
      default:
        return std::string(typeName(v));
    }
  }

  // CEL heterogeneous equality: numbers compare by value, other different types are unequal.
  bool equal(const Value& a0, const Value& b0) {
    Value a = materialize(a0), b = materialize(b0);
    if (a.isNumber() && b.isNumber()) return compareNumbers(a, b) == 0;
    if (a.kind != b.kind) return false;
    switch (a.kind) {
      case Value::Kind::kNull:
        return true;
      case Value::Kind::kBool:
        return a.b == b.b;
      case Value::Kind::kString:
        cost_ += static_cast<int64_t>(std::min(a.s.size(), b.s.size()) / 10);
        return a.s == b.s;
      case Value::Kind::kQuantity:
        return *a.quantity == *b.quantity;
      case Value::Kind::kSemver:
        return *a.semver == *b.semver;
      case Value::Kind::kList:
        if (a.list->size() != b.list->size()) return false;
        for (size_t k = 0; k < a.list->size(); ++k) {
          if (!equal((*a.list)[k], (*b.list)[k])) return false;
        }
        return true;
      case Value::Kind::kMap:
        if (a.map->size() != b.map->size()) return false;
        for (const auto& [k, v] : *a.map) {
          bool found = false;
          for (const auto& [k2, v2] : *b.map) {
            if (equal(k, k2)) {
              found = equal(v, v2);
              break;
            }
          }
          if (!found) return false;
        }
        return true;
      default:
        return false;
    }
  }

  // -1/0/1; NaN compares as unordered (2).
  static int compareNumbers(const Value& a, const Value& b) {
    auto sign = [](auto x, auto y) { return x < y ? -1 : (y < x ? 1 : 0); };
    if (a.kind == Value::Kind::kDouble || b.kind == Value::Kind::kDouble) {
      auto as = [](const Value& v) {
        return v.kind == Value::Kind::kDouble
                   ? v.d
                   : (v.kind == Value::Kind::kInt ? static_cast<double>(v.i)
                                                  : static_cast<double>(v.u));
      };
      double x = as(a), y = as(b);
      if (std::isnan(x) || std::isnan(y)) return 2;
      return sign(x, y);
    }
    if (a.kind == b.kind) return a.kind == Value::Kind::kInt ? sign(a.i, b.i) : sign(a.u, b.u);
    if (a.kind == Value::Kind::kInt) return a.i < 0 ? -1 : sign(static_cast<uint64_t>(a.i), b.u);
    return b.i < 0 ? 1 : sign(a.u, static_cast<uint64_t>(b.i));
  }

  Value binary(Op op, const Value& a, const Value& b) {
    static const std::map<Op, std::string_view> kNames = {
        {Op::kEq, "_==_"}, {Op::kNe, "_!=_"}, {Op::kLt, "_<_"},  {Op::kLe, "_<=_"},
        {Op::kGt, "_>_"},  {Op::kGe, "_>=_"}, {Op::kIn, "@in"},  {Op::kAdd, "_+_"},
        {Op::kSub, "_-_"}, {Op::kMul, "_*_"}, {Op::kDiv, "_/_"}, {Op::kMod, "_%_"}};
    switch (op) {
      case Op::kEq:
        return Value::ofBool(equal(a, b));
      case Op::kNe:
        return Value::ofBool(!equal(a, b));
      case Op::kIn:
        return contains(b, a);
      case Op::kLt:
      case Op::kLe:
      case Op::kGt:
      case Op::kGe: {
        int c = 0;
        if (a.isNumber() && b.isNumber()) {
          c = compareNumbers(a, b);
          if (c == 2) return Value::ofBool(false);
        } else if (a.kind == b.kind && a.kind == Value::Kind::kString) {
          c = a.s.compare(b.s) < 0 ? -1 : (a.s == b.s ? 0 : 1);
        } else if (a.kind == b.kind && a.kind == Value::Kind::kBool) {
          c = static_cast<int>(a.b) - static_cast<int>(b.b);
        } else {
          return noOverload(kNames.at(op), a, &b);
        }
        bool r = op == Op::kLt ? c < 0 : op == Op::kLe ? c <= 0 : op == Op::kGt ? c > 0 : c >= 0;
        return Value::ofBool(r);
      }
      default:
        return arithmetic(op, kNames.at(op), a, b);
    }
  }

  Value arithmetic(Op op, std::string_view name, const Value& a, const Value& b) {
    if (a.kind != b.kind) return noOverload(name, a, &b);
    switch (a.kind) {
      case Value::Kind::kInt: {
        int64_t r = 0;
        bool overflow = false;
        if (op == Op::kAdd) overflow = __builtin_add_overflow(a.i, b.i, &r);
        if (op == Op::kSub) overflow = __builtin_sub_overflow(a.i, b.i, &r);
        if (op == Op::kMul) overflow = __builtin_mul_overflow(a.i, b.i, &r);
        if (op == Op::kDiv || op == Op::kMod) {
          if (b.i == 0)
            return Value::error(op == Op::kDiv ? "division by zero" : "modulus by zero");
          if (a.i == INT64_MIN && b.i == -1) return Value::error("integer overflow");
          r = op == Op::kDiv ? a.i / b.i : a.i % b.i;
        }
        if (overflow) return Value::error("integer overflow");
        return Value::ofInt(r);
      }
      case Value::Kind::kUint: {
        uint64_t r = 0;
        bool overflow = false;
        if (op == Op::kAdd) overflow = __builtin_add_overflow(a.u, b.u, &r);
        if (op == Op::kSub) overflow = __builtin_sub_overflow(a.u, b.u, &r);
        if (op == Op::kMul) overflow = __builtin_mul_overflow(a.u, b.u, &r);
        if (op == Op::kDiv || op == Op::kMod) {
          if (b.u == 0)
            return Value::error(op == Op::kDiv ? "division by zero" : "modulus by zero");
          r = op == Op::kDiv ? a.u / b.u : a.u % b.u;
        }
        if (overflow) return Value::error("unsigned integer overflow");
        return Value::ofUint(r);
      }
      case Value::Kind::kDouble:
        if (op == Op::kMod) return noOverload(name, a, &b);
        return Value::ofDouble(op == Op::kAdd   ? a.d + b.d
                               : op == Op::kSub ? a.d - b.d
                               : op == Op::kMul ? a.d * b.d
                                                : a.d / b.d);
      case Value::Kind::kString:
        if (op != Op::kAdd) return noOverload(name, a, &b);
        cost_ += static_cast<int64_t>((a.s.size() + b.s.size()) / 10);
        return Value::ofString(a.s + b.s);
      case Value::Kind::kList: {
        if (op != Op::kAdd) return noOverload(name, a, &b);
        auto list = std::make_shared<List>(*a.list);
        list->insert(list->end(), b.list->begin(), b.list->end());
        cost_ += static_cast<int64_t>(list->size());
        return Value{.kind = Value::Kind::kList, .list = std::move(list)};
      }
      default:
        return noOverload(name, a, &b);
    }
  }

  Value negate(const Value& v) {
    if (v.isError()) return v;
    if (v.kind == Value::Kind::kInt) {
      if (v.i == INT64_MIN) return Value::error("integer overflow");
      return Value::ofInt(-v.i);
    }
    if (v.kind == Value::Kind::kDouble) return Value::ofDouble(-v.d);
    return noOverload("-_", v);
  }

  Value call(const Node& n) {
    std::vector<Value> args;
    for (const auto& a : n.args) {
      Value v = eval(*a);
      if (v.isError()) return v;
      args.push_back(std::move(v));
    }
    const std::string& f = n.name;
    if (n.receiver) return method(f, args);
    const Value& x = args[0];
    if (f == "size") return size(x);
    if (f == "matches") return match(x, args[1]);
    if (f == "quantity" || f == "isQuantity") {
      if (x.kind != Value::Kind::kString) return noOverload(f, x);
      auto q = Quantity::parse(x.s);
      if (f == "isQuantity") return Value::ofBool(q.ok());
      if (!q.ok()) return Value::error(q.status().message());
      return Value{.kind = Value::Kind::kQuantity, .quantity = std::make_shared<Quantity>(*q)};
    }
    if (f == "semver" || f == "isSemver") {
      if (x.kind != Value::Kind::kString) return noOverload(f, x);
      auto v = Semver::parse(x.s);
      if (f == "isSemver") return Value::ofBool(v.ok());
      if (!v.ok()) return Value::error(v.status().message());
      return Value{.kind = Value::Kind::kSemver, .semver = std::make_shared<Semver>(*v)};
    }
    return convert(f, x);
  }

  Value convert(const std::string& f, const Value& x) {
    if (f == "string") {
      switch (x.kind) {
        case Value::Kind::kString:
          return x;
        case Value::Kind::kInt:
          return Value::ofString(std::to_string(x.i));
        case Value::Kind::kUint:
          return Value::ofString(std::to_string(x.u));
        case Value::Kind::kBool:
          return Value::ofString(x.b ? "true" : "false");
        case Value::Kind::kSemver:
          return Value::ofString(x.semver->text());
        case Value::Kind::kQuantity:
          return Value::ofString(x.quantity->text());
        default:
          return noOverload(f, x);
      }
    }
    if (f == "double") {
      if (x.isNumber()) {
        return Value::ofDouble(x.kind == Value::Kind::kDouble ? x.d
                               : x.kind == Value::Kind::kInt  ? static_cast<double>(x.i)
                                                              : static_cast<double>(x.u));
      }
      return noOverload(f, x);
    }
    if (f == "int") {
      if (x.kind == Value::Kind::kInt) return x;
      if (x.kind == Value::Kind::kUint) {
        if (x.u > static_cast<uint64_t>(INT64_MAX)) return Value::error("integer overflow");
        return Value::ofInt(static_cast<int64_t>(x.u));
      }
      if (x.kind == Value::Kind::kDouble) {
        if (!(x.d > -9.2233720368547758e18 && x.d < 9.2233720368547758e18)) {
          return Value::error("integer overflow");
        }
        return Value::ofInt(static_cast<int64_t>(x.d));
      }
      if (x.kind == Value::Kind::kString) {
        int64_t v = 0;
        auto [p, ec] = std::from_chars(x.s.data(), x.s.data() + x.s.size(), v);
        if (ec != std::errc() || p != x.s.data() + x.s.size()) {
          return Value::error("cannot convert \"" + x.s + "\" to int");
        }
        return Value::ofInt(v);
      }
      return noOverload(f, x);
    }
    // uint
    if (x.kind == Value::Kind::kUint) return x;
    if (x.kind == Value::Kind::kInt) {
      if (x.i < 0) return Value::error("unsigned integer overflow");
      return Value::ofUint(static_cast<uint64_t>(x.i));
    }
    return noOverload(f, x);
  }

  Value size(const Value& x0) {
    Value x = materialize(x0);
    switch (x.kind) {
      case Value::Kind::kString: {
        int64_t n = 0;  // code points
        for (unsigned char c : x.s) n += (c & 0xC0) != 0x80 ? 1 : 0;
        return Value::ofInt(n);
      }
      case Value::Kind::kList:
        return Value::ofInt(static_cast<int64_t>(x.list->size()));
      case Value::Kind::kMap:
        return Value::ofInt(static_cast<int64_t>(x.map->size()));
      default:
        return noOverload("size", x);
    }
  }

  Value match(const Value& s, const Value& pattern) {
    if (s.kind != Value::Kind::kString || pattern.kind != Value::Kind::kString) {
      return noOverload("matches", s, &pattern);
    }
    cost_ += static_cast<int64_t>(s.s.size() * pattern.s.size() / 10);
    if (overBudget()) return kCostExceeded;
    auto& cache = regexes_[pattern.s];
    if (!cache) {
      try {
        cache = std::make_shared<std::regex>(pattern.s, std::regex::ECMAScript);
      } catch (const std::regex_error& e) {
        return Value::error("invalid regular expression \"" + pattern.s + "\": " + e.what());
      }
    }
    return Value::ofBool(std::regex_search(s.s, *cache));
  }

  Value method(const std::string& f, const std::vector<Value>& args) {
    const Value& t = args[0];
    if (f == "size") return size(t);
    if (f == "matches") return match(t, args[1]);
    if (t.kind == Value::Kind::kString) {
      if (f == "startsWith" || f == "endsWith" || f == "contains") {
        const Value& a = args[1];
        if (a.kind != Value::Kind::kString) return noOverload(f, t, &a);
        cost_ += static_cast<int64_t>(t.s.size() / 10);
        if (f == "startsWith") return Value::ofBool(t.s.rfind(a.s, 0) == 0);
        if (f == "endsWith") {
          return Value::ofBool(t.s.size() >= a.s.size() &&
                               t.s.compare(t.s.size() - a.s.size(), a.s.size(), a.s) == 0);
        }
        return Value::ofBool(t.s.find(a.s) != std::string::npos);
      }
      if (f == "lowerAscii" || f == "upperAscii") {
        std::string out = t.s;
        for (auto& c : out) {
          c = static_cast<char>(f == "lowerAscii" ? std::tolower(static_cast<unsigned char>(c))
                                                  : std::toupper(static_cast<unsigned char>(c)));
        }
        cost_ += static_cast<int64_t>(out.size() / 10);
        return Value::ofString(out);
      }
      if (f == "trim") {
        size_t b = t.s.find_first_not_of(" \t\n\r\f\v");
        size_t e = t.s.find_last_not_of(" \t\n\r\f\v");
        return Value::ofString(b == std::string::npos ? "" : t.s.substr(b, e - b + 1));
      }
    }
    if (t.kind == Value::Kind::kQuantity) return quantityMethod(f, t, args);
    if (t.kind == Value::Kind::kSemver) {
      if (f == "major") return Value::ofInt(t.semver->major());
      if (f == "minor") return Value::ofInt(t.semver->minor());
      if (f == "patch") return Value::ofInt(t.semver->patch());
      if (args.size() == 2) {
        const Value& o = args[1];
        if (o.kind != Value::Kind::kSemver) return noOverload(f, t, &o);
        int c = t.semver->compare(*o.semver);
        if (f == "compareTo") return Value::ofInt(c);
        if (f == "isGreaterThan") return Value::ofBool(c > 0);
        if (f == "isLessThan") return Value::ofBool(c < 0);
      }
    }
    return args.size() == 2 ? noOverload(f, t, &args[1]) : noOverload(f, t);
  }

  static Value quantityMethod(const std::string& f, const Value& t,
                              const std::vector<Value>& args) {
    if (f == "isInteger") return Value::ofBool(t.quantity->isInteger());
    if (f == "asInteger") {
      auto v = t.quantity->asInteger();
      if (!v.ok()) return Value::error(v.status().message());
      return Value::ofInt(*v);
    }
    if (args.size() == 2) {
      const Value& o = args[1];
      if (o.kind != Value::Kind::kQuantity) return noOverload(f, t, &o);
      auto c = *t.quantity <=> *o.quantity;
      if (f == "compareTo") return Value::ofInt(std::is_lt(c) ? -1 : (std::is_gt(c) ? 1 : 0));
      if (f == "isGreaterThan") return Value::ofBool(std::is_gt(c));
      if (f == "isLessThan") return Value::ofBool(std::is_lt(c));
    }
    return args.size() == 2 ? noOverload(f, t, &args[1]) : noOverload(f, t);
  }

  const DeviceInput& dev_;
  int64_t limit_;
  int64_t cost_ = 0;
  std::map<std::string, std::shared_ptr<std::regex>> regexes_;
};

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
    Parser parser(Lexer(p.source_).run());
    p.root_ = parser.parse();
  } catch (const SyntaxError& e) {
    return Status(Code::kInvalidArgument, positioned(p.source_, e.offset, e.message));
  }
  return p;
}

Result<bool> Program::matches(const DeviceInput& device, int64_t cost_limit) const {
  Evaluator ev(device, cost_limit);
  Value v = ev.eval(*root_);
  if (ev.overBudget()) return Status(Code::kInvalidArgument, kCostExceeded.s);
  if (v.isError()) return Status(Code::kInvalidArgument, v.s);
  if (v.kind != Value::Kind::kBool) {
    return Status(Code::kInvalidArgument,
                  "the expression must evaluate to bool, not " + std::string(typeName(v)));
  }
  return v.b;
}

}  // namespace sriovdra::dra::cel
