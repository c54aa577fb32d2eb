#include "base/yaml.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <regex>
#include <set>

#include <yaml-cpp/yaml.h>

namespace sriovdra {
namespace {

json::Value scalarValue(const YAML::Node& n, json::Allocator& a) {
  const std::string& s = n.Scalar();
  if (n.Tag() == "!" || n.Tag() == "tag:yaml.org,2002:str") return json::str(s, a);
  if (s == "null" || s == "Null" || s == "NULL" || s == "~" || s.empty()) return json::Value();
  if (s == "true" || s == "True" || s == "TRUE") return json::Value(true);
  if (s == "false" || s == "False" || s == "FALSE") return json::Value(false);
  static const std::regex kInt("[-+]?[0-9]+");
  static const std::regex kFloat(R"([-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?)");
  if (std::regex_match(s, kInt)) {
    int64_t v = 0;
    const char* begin = s.data() + (s[0] == '+' ? 1 : 0);
    auto [ptr, ec] = std::from_chars(begin, s.data() + s.size(), v);
    if (ec == std::errc() && ptr == s.data() + s.size()) return json::Value(v);
    return json::str(s, a);
  }
  if (std::regex_match(s, kFloat)) return json::Value(std::strtod(s.c_str(), nullptr));
  return json::str(s, a);
}

json::Value convert(const YAML::Node& n, json::Allocator& a) {
  switch (n.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return json::Value();
    case YAML::NodeType::Scalar:
      return scalarValue(n, a);
    case YAML::NodeType::Sequence: {
      json::Value arr(rapidjson::kArrayType);
      for (const auto& item : n) arr.PushBack(convert(item, a), a);
      return arr;
    }
    case YAML::NodeType::Map: {
      json::Value obj(rapidjson::kObjectType);
      for (const auto& kv : n) json::set(obj, kv.first.Scalar(), convert(kv.second, a), a);
      return obj;
    }
  }
  return json::Value();
}

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
      std::string lowered = s;
      std::transform(lowered.begin(), lowered.end(), lowered.begin(),
                     [](unsigned char c) { return std::tolower(c); });
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

}  // namespace

Result<std::vector<json::Document>> yamlToJson(std::string_view text) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    return Status(Code::kInvalidArgument, std::string("invalid YAML: ") + e.what());
  }
  std::vector<json::Document> out;
  for (const auto& node : docs) {
    if (node.IsNull() || !node.IsDefined()) continue;
    json::Document doc;
    json::Value v = convert(node, doc.GetAllocator());
    static_cast<json::Value&>(doc) = std::move(v);
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
