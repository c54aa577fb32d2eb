#include "base/yaml.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>

#include <yaml-cpp/yaml.h>

#include "base/strings.h"

namespace sriovdra {
namespace {

// "[-+]?[0-9]+"
bool isInteger(std::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?"
bool isFloat(std::string_view s) {
  auto digits = [&s] {
    size_t n = 0;
    while (n < s.size() && s[n] >= '0' && s[n] <= '9') ++n;
    s.remove_prefix(n);
    return n;
  };
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  size_t whole = digits();
  size_t fraction = 0;
  if (!s.empty() && s[0] == '.') {
    s.remove_prefix(1);
    fraction = digits();
  }
  if (whole == 0 && fraction == 0) return false;
  if (!s.empty() && (s[0] == 'e' || s[0] == 'E')) {
    s.remove_prefix(1);
    if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
    if (digits() == 0) return false;
  }
  return s.empty();
}

json::Value scalarValue(const YAML::Node& n, json::Allocator& a) {
  const std::string& s = n.Scalar();
  if (n.Tag() == "!" || n.Tag() == "tag:yaml.org,2002:str") return json::str(s, a);
  if (s == "null" || s == "Null" || s == "NULL" || s == "~" || s.empty()) return json::Value();
  if (s == "true" || s == "True" || s == "TRUE") return json::Value(true);
  if (s == "false" || s == "False" || s == "FALSE") return json::Value(false);
  if (isInteger(s)) {
    int64_t v = 0;
    const char* begin = s.data() + (s[0] == '+' ? 1 : 0);
    auto [ptr, ec] = std::from_chars(begin, s.data() + s.size(), v);
    if (ec == std::errc() && ptr == s.data() + s.size()) return json::Value(v);
    return json::str(s, a);
  }
  if (isFloat(s)) {
    double v = std::strtod(s.c_str(), nullptr);
    return std::isfinite(v) ? json::Value(v) : json::str(s, a);
  }
  return json::str(s, a);
}

// Turns one document into JSON within budgets: aliases are expanded (JSON has none), so a few
// kilobytes of anchors could otherwise stand for gigabytes; an alias may even contain itself.
class Converter {
 public:
  // `first_line`: where the document starts in the stream (0-based), for messages.
  Converter(json::Allocator& a, int first_line) : a_(a), first_line_(first_line) {}

  Result<json::Value> run(const YAML::Node& n) {
    json::Value v = convert(n, 0);
    if (!error_.empty()) return Status(Code::kInvalidArgument, error_);
    return v;
  }

 private:
  std::string at(const YAML::Node& n) const { return "line " + std::to_string(line(n)) + ": "; }
  int line(const YAML::Node& n) const { return first_line_ + n.Mark().line + 1; }

  bool fail(const YAML::Node& n, const std::string& what) {
    if (error_.empty()) error_ = at(n) + what;
    return false;
  }

  bool charge(const YAML::Node& n, size_t depth) {
    if (!error_.empty()) return false;
    if (depth > kYamlMaxDepth) {
      return fail(n, "nested deeper than " + std::to_string(kYamlMaxDepth) + " levels");
    }
    if (++nodes_ > kYamlMaxNodes) {
      return fail(n, "the document expands to more than " + std::to_string(kYamlMaxNodes) +
                         " values (aliases?)");
    }
    if (n.IsScalar()) {
      if (n.Scalar().size() > kYamlMaxScalar) {
        return fail(n, "a scalar of " + std::to_string(n.Scalar().size()) + " bytes (at most " +
                           std::to_string(kYamlMaxScalar) + ")");
      }
      bytes_ += n.Scalar().size();
      if (bytes_ > kYamlMaxExpandedBytes) {
        return fail(n, "the document expands to more than " +
                           std::to_string(kYamlMaxExpandedBytes) + " bytes of text (aliases?)");
      }
    }
    return true;
  }

  json::Value convert(const YAML::Node& n, size_t depth) {
    if (!charge(n, depth)) return json::Value();
    switch (n.Type()) {
      case YAML::NodeType::Null:
      case YAML::NodeType::Undefined:
        return json::Value();
      case YAML::NodeType::Scalar:
        return scalarValue(n, a_);
      case YAML::NodeType::Sequence: {
        json::Value arr(rapidjson::kArrayType);
        for (const auto& item : n) {
          arr.PushBack(convert(item, depth + 1), a_);
          if (!error_.empty()) break;
        }
        return arr;
      }
      case YAML::NodeType::Map: {
        json::Value obj(rapidjson::kObjectType);
        std::map<std::string, int> first_line;
        for (const auto& kv : n) {
          if (!charge(kv.first, depth + 1)) break;
          const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string();
          auto [seen, fresh] = first_line.emplace(key, line(kv.first));
          if (!fresh) {
            fail(kv.first, "duplicate key \"" + key + "\" (first at line " +
                               std::to_string(seen->second) + ")");
            break;
          }
          json::set(obj, key, convert(kv.second, depth + 1), a_);
          if (!error_.empty()) break;
        }
        return obj;
      }
    }
    return json::Value();
  }

  json::Allocator& a_;
  const int first_line_;
  size_t nodes_ = 0;
  size_t bytes_ = 0;
  std::string error_;
};

void emit(YAML::Emitter& out, const json::Value& v) {
  switch (v.GetType()) {
    case rapidjson::kNullType:
      out << YAML::Null;
      break;
    case rapidjson::kFalseType:
    case rapidjson::kTrueType:
      out << v.GetBool();
      break;
    case rapidjson::kNumberType:
      if (v.IsInt64()) {
        out << v.GetInt64();
      } else if (v.IsUint64()) {
        out << v.GetUint64();
      } else {
        out << v.GetDouble();
      }
      break;
    case rapidjson::kStringType: {
      std::string s(v.GetString(), v.GetStringLength());
      // Quote strings that a YAML 1.1 or 1.2 reader (kubectl's is 1.1) could take for another
      // type: booleans and nulls in any spelling, and anything starting like a number, which
      // covers 1.1's sexagesimal floats such as a PCI address 0000:11:00.0.
      static const std::set<std::string> kWords = {"true", "false", "yes", "no",   "on",
                                                   "off",  "y",     "n",   "null", "~"};
      std::string lowered = asciiLower(s);
      bool ambiguous = s.empty() || kWords.count(lowered) != 0 ||
                       std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-' ||
                       s[0] == '+' || s[0] == '.';
      if (ambiguous) {
        out << YAML::DoubleQuoted << s;
      } else {
        out << s;
      }
      break;
    }
    case rapidjson::kArrayType:
      if (v.Empty()) out << YAML::Flow;
      out << YAML::BeginSeq;
      for (const auto& item : v.GetArray()) emit(out, item);
      out << YAML::EndSeq;
      break;
    case rapidjson::kObjectType:
      if (v.MemberCount() == 0) out << YAML::Flow;
      out << YAML::BeginMap;
      for (const auto& m : v.GetObject()) {
        out << YAML::Key << std::string(m.name.GetString(), m.name.GetStringLength());
        out << YAML::Value;
        emit(out, m.value);
      }
      out << YAML::EndMap;
      break;
  }
}

struct DocumentText {
  std::string text;
  int first_line;  // 0-based line of the stream where it starts
};

// The documents of a stream, split at the markers at the start of a line ("---" and "...", and
// directives, which begin the next document). yaml-cpp 0.7's LoadAll loops forever on some
// invalid streams ("," or ",:", jbeder/yaml-cpp#1040, fixed after 0.8); Load reads one document
// and always returns.
std::vector<DocumentText> splitDocuments(std::string_view text) {
  std::vector<DocumentText> docs(1, DocumentText{"", 0});
  bool only_directives = true;  // the current document has nothing but directives so far
  auto startNew = [&](int line) {
    docs.push_back({"", line});
    only_directives = true;
  };
  auto marker = [](std::string_view l, std::string_view m) {
    return l.substr(0, m.size()) == m && (l.size() == m.size() || l[m.size()] == ' ' ||
                                          l[m.size()] == '\t' || l[m.size()] == '\r');
  };
  for (int line = 0; !text.empty(); ++line) {
    size_t end = std::min(text.find('\n'), text.size());
    std::string_view l = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    if (marker(l, "---")) {
      if (!only_directives) startNew(line);
      only_directives = false;
      docs.back().text.append(l.substr(3)).append("\n");
    } else if (marker(l, "...")) {
      startNew(line + 1);
    } else if (!l.empty() && l[0] == '%') {
      if (!only_directives) startNew(line);
      docs.back().text.append(l).append("\n");
    } else {
      if (l.find_first_not_of(" \t\r") != std::string_view::npos && l[0] != '#') {
        only_directives = false;
      }
      docs.back().text.append(l).append("\n");
    }
  }
  return docs;
}

}  // namespace

Result<std::vector<json::Document>> yamlToJson(std::string_view text) {
  std::vector<json::Document> out;
  for (const auto& d : splitDocuments(text)) {
    YAML::Node node;
    try {
      node = YAML::Load(d.text);
    } catch (const YAML::Exception& e) {
      return Status(Code::kInvalidArgument,
                    "invalid YAML: line " + std::to_string(d.first_line + e.mark.line + 1) +
                        ", column " + std::to_string(e.mark.column + 1) + ": " + e.msg);
    }
    if (node.IsNull() || !node.IsDefined()) continue;
    json::Document doc;
    auto v = Converter(doc.GetAllocator(), d.first_line).run(node);
    if (!v.ok()) return Status(Code::kInvalidArgument, "invalid YAML: " + v.status().message());
    static_cast<json::Value&>(doc) = std::move(*v);
    out.push_back(std::move(doc));
  }
  return out;
}

std::string jsonToYaml(const json::Value& v) {
  YAML::Emitter out;
  emit(out, v);
  return std::string(out.c_str()) + "\n";
}

}  // namespace sriovdra
