#include "policy/selectors.h"

#include <algorithm>
#include <charconv>
#include <regex>

namespace sriovdra::policy {
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
bool matchesRequirement(const api::SelectorRequirement& r, const Labels& labels) {
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

void validateRequirement(const api::SelectorRequirement& r, const std::string& path,
                         bool node_selector, std::vector<std::string>& out) {
  static const std::vector<std::string> kLabelOps = {"In", "NotIn", "Exists", "DoesNotExist"};
  static const std::vector<std::string> kNodeOps = {"In",           "NotIn", "Exists",
                                                    "DoesNotExist", "Gt",    "Lt"};
  const auto& ops = node_selector ? kNodeOps : kLabelOps;
  if (!contains(ops, r.op)) {
    std::string list;
    for (const auto& o : ops) list += (list.empty() ? "" : ", ") + o;
    out.push_back(path + ".operator: \"" + r.op + "\" is not an operator; use one of " + list);
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
        out.push_back(path + ".values: \"" + v + "\" is not a valid label value");
      }
    }
  }
}

}  // namespace

bool isValidLabelValue(const std::string& value) {
  static const std::regex kValue("(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?");
  return value.size() <= 63 && std::regex_match(value, kValue);
}

bool isValidLabelKey(const std::string& key) {
  static const std::regex kName("[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?");
  static const std::regex kDns("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  auto slash = key.find('/');
  std::string name = slash == std::string::npos ? key : key.substr(slash + 1);
  if (name.empty() || name.size() > 63 || !std::regex_match(name, kName)) return false;
  if (slash == std::string::npos) return true;
  std::string prefix = key.substr(0, slash);
  return !prefix.empty() && prefix.size() <= 253 && std::regex_match(prefix, kDns);
}

bool matchesLabelMap(const Labels& selector, const Labels& labels) {
  for (const auto& [k, v] : selector) {
    auto it = labels.find(k);
    if (it == labels.end() || it->second != v) return false;
  }
  return true;
}

bool matchesLabelSelector(const api::LabelSelector& selector, const Labels& labels) {
  if (!matchesLabelMap(selector.match_labels, labels)) return false;
  for (const auto& r : selector.match_expressions) {
    if (r.op == "Gt" || r.op == "Lt") return false;  // not label-selector operators
    if (!matchesRequirement(r, labels)) return false;
  }
  return true;
}

bool matchesNodeSelector(const api::NodeSelector& selector, const std::string& node_name,
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

std::vector<std::string> validateLabelSelector(const api::LabelSelector& selector,
                                               const std::string& path) {
  std::vector<std::string> out;
  for (const auto& [k, v] : selector.match_labels) {
    if (!isValidLabelKey(k))
      out.push_back(path + ".matchLabels: \"" + k + "\" is not a valid label key");
    if (!isValidLabelValue(v)) {
      out.push_back(path + ".matchLabels." + k + ": \"" + v + "\" is not a valid label value");
    }
  }
  for (size_t i = 0; i < selector.match_expressions.size(); ++i) {
    validateRequirement(selector.match_expressions[i],
                        path + ".matchExpressions[" + std::to_string(i) + "]", false, out);
  }
  return out;
}

std::vector<std::string> validateNodeSelector(const api::NodeSelector& selector,
                                              const std::string& path) {
  std::vector<std::string> out;
  if (selector.terms.empty()) {
    out.push_back(path +
                  ".nodeSelectorTerms: an empty list selects no node; add a term or "
                  "remove nodeSelector to select every node");
  }
  for (size_t t = 0; t < selector.terms.size(); ++t) {
    const auto& term = selector.terms[t];
    std::string tp = path + ".nodeSelectorTerms[" + std::to_string(t) + "]";
    if (term.match_expressions.empty() && term.match_fields.empty()) {
      out.push_back(tp + ": an empty term selects no node; add matchExpressions or matchFields");
    }
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

}  // namespace sriovdra::policy
