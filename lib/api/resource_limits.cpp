#include "api/resource_limits.h"

#include <regex>

#include "base/names.h"

namespace sriovdra::api {
namespace {

const std::regex kSemver(
    "(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)"
    "(-((0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)(\\.(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*"
    "))*))?"
    "(\\+([0-9a-zA-Z-]+(\\.[0-9a-zA-Z-]+)*))?");

std::string quote(const std::string& s) { return "\"" + s + "\""; }

size_t valueCount(const AttributeValue& v) {
  using T = AttributeValue::Type;
  switch (v.type) {
    case T::kInts:
      return v.intValues().size();
    case T::kBools:
      return v.boolValues().size();
    case T::kStrings:
    case T::kVersions:
      return v.stringValues().size();
    default:
      return 1;
  }
}

}  // namespace

bool isDnsLabel(const std::string& s) { return sriovdra::isDnsLabel(s, kMaxDnsLabelLength); }
bool isDnsSubdomain(const std::string& s) { return sriovdra::isDnsSubdomain(s); }
bool isCIdentifier(const std::string& s) { return sriovdra::isCIdentifier(s); }
bool isSemver(const std::string& v) { return std::regex_match(v, kSemver); }

std::vector<std::string> qualifiedNameProblems(const std::string& name) {
  std::vector<std::string> out;
  auto slash = name.find('/');
  std::string id = slash == std::string::npos ? name : name.substr(slash + 1);
  if (slash != std::string::npos) {
    std::string domain = name.substr(0, slash);
    if (id.find('/') != std::string::npos) {
      out.push_back("attribute " + quote(name) + " has more than one '/'; write domain/name");
      return out;
    }
    if (domain.size() > kMaxQualifiedNameDomainLength || !isDnsSubdomain(domain)) {
      out.push_back("attribute " + quote(name) + ": the domain " + quote(domain) +
                    " must be a lower-case DNS subdomain of at most 63 characters");
    }
  }
  if (id.empty() || id.size() > kMaxQualifiedNameIdLength || !isCIdentifier(id)) {
    out.push_back("attribute " + quote(name) + ": the name " + quote(id) +
                  " must be a C identifier ([A-Za-z_][A-Za-z0-9_]*) of at most 32 characters");
  }
  return out;
}

std::vector<std::string> attributeValueProblems(const std::string& name, const AttributeValue& v) {
  using T = AttributeValue::Type;
  std::vector<std::string> out;
  auto checkString = [&](const std::string& s) {
    if (s.size() > kMaxAttributeValueLength) {
      out.push_back("attribute " + quote(name) + ": " + quote(s.substr(0, 20) + "...") +
                    " is longer than 64 characters");
    }
  };
  auto checkVersion = [&](const std::string& s) {
    checkString(s);
    if (!isSemver(s)) {
      out.push_back("attribute " + quote(name) + ": " + quote(s) +
                    " is not a semantic version (semver.org 2.0.0, e.g. 1.2.3, no leading v)");
    }
  };
  switch (v.type) {
    case T::kString:
      checkString(v.string_value);
      break;
    case T::kVersion:
      checkVersion(v.string_value);
      break;
    case T::kStrings:
      for (const auto& s : v.stringValues()) checkString(s);
      break;
    case T::kVersions:
      for (const auto& s : v.stringValues()) checkVersion(s);
      break;
    default:
      break;
  }
  if (v.isList() && valueCount(v) == 0) {
    out.push_back("attribute " + quote(name) + ": a list value must not be empty");
  }
  return out;
}

std::vector<std::string> sliceDeviceProblems(const SliceDevice& d) {
  std::vector<std::string> out;
  if (!isDnsLabel(d.name)) {
    out.push_back("the name " + quote(d.name) +
                  " is not a DNS label (lower-case letters, digits and '-', at most 63)");
  }
  size_t entries = d.attributes.size() + d.capacity.size();
  if (entries > kMaxAttributesAndCapacitiesPerDevice) {
    out.push_back(std::to_string(d.attributes.size()) + " attributes and " +
                  std::to_string(d.capacity.size()) +
                  " capacities; a device carries at most 32 in all (14 are built in): remove "
                  "attributes from the DeviceAttributes that select it");
  }
  size_t values = 0;
  for (const auto& [name, value] : d.attributes) {
    for (auto& p : qualifiedNameProblems(name)) out.push_back(std::move(p));
    for (auto& p : attributeValueProblems(name, value)) out.push_back(std::move(p));
    values += valueCount(value);
  }
  if (values > kMaxAttributeValuesPerDevice) {
    out.push_back(std::to_string(values) +
                  " attribute values (list entries count one each); a device carries at most 48");
  }
  for (const auto& [name, quantity] : d.capacity) {
    for (auto& p : qualifiedNameProblems(name)) out.push_back("capacity: " + p);
  }
  return out;
}

}  // namespace sriovdra::api
