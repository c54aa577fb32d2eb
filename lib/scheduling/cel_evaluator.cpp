#include "scheduling/cel_evaluator.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <vector>

#include <re2/re2.h>

#include "api/attributes.h"

namespace sriovdra::scheduling::cel {
namespace {

const Value kCostExceeded = Value::error(std::string(kCostExceededMessage));
// What one compiled pattern may take (RE2 refuses a pattern that needs more: an error).
constexpr int64_t kRegexMemory = 1 << 20;

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
        if (key == "allowMultipleAllocations") {
          return Value::ofBool(test || dev_.device.allow_multiple_allocations);
        }
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
            api::findQualified(dev_.device.attributes, dev_.driver, m.s + "/" + key);
        if (a == nullptr) return missing();
        return test ? Value::ofBool(true) : attributeValue(*a);
      }
      case Value::Kind::kCaps: {
        const std::string* q =
            api::findQualified(dev_.device.capacity, dev_.driver, m.s + "/" + key);
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
      // CEL's dialect is RE2's, and RE2 runs in time linear in the input.
      RE2::Options options;
      options.set_log_errors(false);
      options.set_max_mem(kRegexMemory);
      cache = std::make_shared<RE2>(pattern.s, options);
    }
    if (!cache->ok()) {
      return Value::error("invalid regular expression \"" + pattern.s + "\": " + cache->error());
    }
    return Value::ofBool(RE2::PartialMatch(s.s, *cache));
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
  std::map<std::string, std::shared_ptr<RE2>> regexes_;
};

}  // namespace

Evaluation evaluate(const Node& root, const DeviceInput& device, int64_t cost_limit) {
  Evaluator ev(device, cost_limit);
  Value v = ev.eval(root);
  return {std::move(v), ev.overBudget()};
}

}  // namespace sriovdra::scheduling::cel
