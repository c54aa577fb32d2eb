#include "api/selectors.h"

#include <algorithm>
#include <charconv>
#include <string_view>

#include "base/names.h"
#include "base/strings.h"

namespace sriovdra::api {
namespace {

bool contains(const std::vector<std::string>& values, const std::string& v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

std::optional<int64_t> parseInt(const std::string& s) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

// One requirement against a set of key/values (labels or fields).
bool matchesRequirement(const SelectorRequirement& r, const Labels& labels) {
  auto it = labels.find(r.key);
  bool present = it != labels.end();
  if (r.op == "In") return present && contains(r.values, it->second);
  if (r.op == "NotIn") return !present || !contains(r.values, it->second);
  if (r.op == "Exists") return present;
  if (r.op == "DoesNotExist") return !present;
  if (r.op == "Gt" || r.op == "Lt") {
    if (!present || r.values.size() != 1) return false;
    auto have = parseInt(it->second);
    auto want = parseInt(r.values[0]);
    if (!have || !want) return false;
    return r.op == "Gt" ? *have > *want : *have < *want;
  }
  return false;
}

void validateRequirement(const SelectorRequirement& r, const std::string& path, bool node_selector,
                         std::vector<std::string>& out) {
  static const std::vector<std::string> kLabelOps = {"In", "NotIn", "Exists", "DoesNotExist"};
  static const std::vector<std::string> kNodeOps = {"In",           "NotIn", "Exists",
                                                    "DoesNotExist", "Gt",    "Lt"};
  const auto& ops = node_selector ? kNodeOps : kLabelOps;
  if (!contains(ops, r.op)) {
    out.push_back(path + ".operator: \"" + r.op + "\" is not an operator; use one of " +
                  join(ops, ", "));
    return;
  }
  if (!isValidLabelKey(r.key)) {
    out.push_back(path + ".key: \"" + r.key +
                  "\" is not a valid label key (optional DNS prefix/, then up to 63 characters "
                  "[A-Za-z0-9_.-] starting and ending alphanumeric)");
  }
  if ((r.op == "In" || r.op == "NotIn") && r.values.empty()) {
    out.push_back(path + ".values: operator " + r.op + " needs at least one value");
  }
  if ((r.op == "Exists" || r.op == "DoesNotExist") && !r.values.empty()) {
    out.push_back(path + ".values: operator " + r.op + " takes no values; remove them");
  }
  if (r.op == "Gt" || r.op == "Lt") {
    if (r.values.size() != 1 || !parseInt(r.values[0])) {
      out.push_back(path + ".values: operator " + r.op + " needs exactly one integer value");
    }
  } else {
    for (const auto& v : r.values) {
      if (!isValidLabelValue(v)) {
        out.push_back(path);
        out.back().append(".values: \"").append(v).append("\" is not a valid label value");
      }
    }
  }
}

}  // namespace

bool isValidLabelValue(const std::string& value) {
  return value.empty() || (value.size() <= 63 && isNamePart(value));
}

bool isValidLabelKey(const std::string& key) {
  auto slash = key.find('/');
  std::string_view name = std::string_view(key).substr(slash == std::string::npos ? 0 : slash + 1);
  if (name.size() > 63 || !isNamePart(name)) return false;
  return slash == std::string::npos || isDnsSubdomain(std::string_view(key).substr(0, slash));
}

bool matchesLabelMap(const Labels& selector, const Labels& labels) {
  for (const auto& [k, v] : selector) {
    auto it = labels.find(k);
    if (it == labels.end() || it->second != v) return false;
  }
  return true;
}

bool matchesLabelSelector(const LabelSelector& selector, const Labels& labels) {
  if (!matchesLabelMap(selector.match_labels, labels)) return false;
  for (const auto& r : selector.match_expressions) {
    if (r.op == "Gt" || r.op == "Lt") return false;  // not label-selector operators
    if (!matchesRequirement(r, labels)) return false;
  }
  return true;
}

bool matchesNodeSelector(const NodeSelector& selector, const std::string& node_name,
                         const Labels& labels) {
  const Labels fields = {{"metadata.name", node_name}};
  for (const auto& term : selector.terms) {
    if (term.match_expressions.empty() && term.match_fields.empty()) continue;
    bool all = true;
    for (const auto& r : term.match_expressions) all = all && matchesRequirement(r, labels);
    for (const auto& r : term.match_fields) {
      all = all && r.key == "metadata.name" && (r.op == "In" || r.op == "NotIn") &&
            matchesRequirement(r, fields);
    }
    if (all) return true;
  }
  return false;
}

std::vector<std::string> validateLabelSelector(const LabelSelector& selector,
                                               const std::string& path) {
  std::vector<std::string> out;
  for (const auto& [k, v] : selector.match_labels) {
    if (!isValidLabelKey(k)) {
      out.push_back(path);
      out.back().append(".matchLabels: \"").append(k).append("\" is not a valid label key");
    }
    if (!isValidLabelValue(v)) {
      out.push_back(path);
      out.back()
          .append(".matchLabels.")
          .append(k)
          .append(": \"")
          .append(v)
          .append("\" is not a valid label value");
    }
  }
  for (size_t i = 0; i < selector.match_expressions.size(); ++i) {
    validateRequirement(selector.match_expressions[i],
                        path + ".matchExpressions[" + std::to_string(i) + "]", false, out);
  }
  return out;
}

std::vector<std::string> validateNodeSelector(const NodeSelector& selector,
                                              const std::string& path) {
  std::vector<std::string> out;
  for (size_t t = 0; t < selector.terms.size(); ++t) {
    const auto& term = selector.terms[t];
    std::string tp = path + ".nodeSelectorTerms[" + std::to_string(t) + "]";
    for (size_t i = 0; i < term.match_expressions.size(); ++i) {
      validateRequirement(term.match_expressions[i],
                          tp + ".matchExpressions[" + std::to_string(i) + "]", true, out);
    }
    for (size_t i = 0; i < term.match_fields.size(); ++i) {
      const auto& r = term.match_fields[i];
      std::string fp = tp + ".matchFields[" + std::to_string(i) + "]";
      if (r.key != "metadata.name") {
        out.push_back(fp + ".key: only metadata.name can be matched as a node field, not \"" +
                      r.key + "\"");
      } else if (r.op != "In" && r.op != "NotIn") {
        out.push_back(fp + ".operator: metadata.name supports In and NotIn, not \"" + r.op + "\"");
      } else if (r.values.size() != 1) {
        out.push_back(fp + ".values: a metadata.name requirement takes exactly one node name");
      }
    }
  }
  return out;
}

}  // namespace sriovdra::api

namespace sriovdra::api {

Result<LabelSelector> parseLabelSelector(const std::string& text) {
  LabelSelector out;
  auto trim = [](const std::string& s) {
    size_t b = s.find_first_not_of(" \t");
    size_t e = s.find_last_not_of(" \t");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
  };
  // Split on commas outside parentheses.
  std::vector<std::string> parts;
  int depth = 0;
  std::string cur;
  for (char c : text) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      parts.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!trim(cur).empty() || !parts.empty()) parts.push_back(trim(cur));
  auto bad = [&](const std::string& part, const std::string& why) {
    return Status(Code::kInvalidArgument,
                  "label selector \"" + text + "\": \"" + part + "\" " + why);
  };
  for (const auto& part : parts) {
    if (part.empty()) return bad(part, "is empty (stray comma?)");
    auto setOp = [&](const std::string& op) -> Result<bool> {
      auto pos = part.find(" " + op + " ");
      if (pos == std::string::npos) return false;
      std::string key = trim(part.substr(0, pos));
      std::string rest = trim(part.substr(pos + op.size() + 2));
      if (rest.size() < 2 || rest.front() != '(' || rest.back() != ')') {
        return bad(part, "needs a value list in parentheses, e.g. (a,b)");
      }
      std::vector<std::string> values;
      std::string list = rest.substr(1, rest.size() - 2);
      size_t start = 0;
      while (start <= list.size()) {
        size_t comma = list.find(',', start);
        if (comma == std::string::npos) comma = list.size();
        std::string v = trim(list.substr(start, comma - start));
        if (!v.empty()) values.push_back(v);
        start = comma + 1;
      }
      out.match_expressions.push_back({key, op == "in" ? "In" : "NotIn", values});
      return true;
    };
    auto in = setOp("notin");
    if (!in.ok()) return in.status();
    if (*in) continue;
    in = setOp("in");
    if (!in.ok()) return in.status();
    if (*in) continue;
    if (auto pos = part.find("!="); pos != std::string::npos) {
      out.match_expressions.push_back(
          {trim(part.substr(0, pos)), "NotIn", {trim(part.substr(pos + 2))}});
    } else if (auto eq = part.find('='); eq != std::string::npos) {
      size_t skip = part.compare(eq, 2, "==") == 0 ? 2 : 1;
      out.match_labels[trim(part.substr(0, eq))] = trim(part.substr(eq + skip));
    } else if (part[0] == '!') {
      out.match_expressions.push_back({trim(part.substr(1)), "DoesNotExist", {}});
    } else {
      out.match_expressions.push_back({part, "Exists", {}});
    }
  }
  auto problems = validateLabelSelector(out, "selector");
  if (!problems.empty())
    return Status(Code::kInvalidArgument, "label selector \"" + text + "\": " + problems[0]);
  return out;
}

}  // namespace sriovdra::api
