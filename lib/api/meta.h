#pragma once
// Shared API building blocks: metav1.Condition, metav1.LabelSelector and core/v1.NodeSelector
// with their JSON codecs.
#include <optional>
#include <string>
#include <vector>

#include "api/codec.h"

namespace sriovdra::api {

struct Condition {
  std::string type;
  std::string status;  // "True", "False", "Unknown"
  std::string reason;
  std::string message;
  std::string last_transition_time;
  int64_t observed_generation = 0;
  bool operator==(const Condition&) const = default;
  static Condition decode(const Reader& r);
  void encode(Writer w) const;
};
std::vector<Condition> decodeConditions(const Reader& r, std::string_view key);
json::Value encodeConditions(const std::vector<Condition>& conditions, json::Allocator& a);
// Sets or replaces the condition of its type; keeps last_transition_time when the status did
// not change. Returns true if anything changed.
bool setCondition(std::vector<Condition>& conditions, Condition c, const std::string& now);
const Condition* findCondition(const std::vector<Condition>& conditions, std::string_view type);

struct SelectorRequirement {
  std::string key;
  std::string op;  // In, NotIn, Exists, DoesNotExist (+ Gt, Lt for node selectors)
  std::vector<std::string> values;
  bool operator==(const SelectorRequirement&) const = default;
};

struct LabelSelector {
  std::map<std::string, std::string> match_labels;
  std::vector<SelectorRequirement> match_expressions;
  bool operator==(const LabelSelector&) const = default;
  static LabelSelector decode(const Reader& r);
  void encode(Writer w) const;
};

struct NodeSelectorTerm {
  std::vector<SelectorRequirement> match_expressions;
  std::vector<SelectorRequirement> match_fields;
  bool operator==(const NodeSelectorTerm&) const = default;
};

struct NodeSelector {
  std::vector<NodeSelectorTerm> terms;
  bool operator==(const NodeSelector&) const = default;
  static NodeSelector decode(const Reader& r);
  void encode(Writer w) const;
};

}  // namespace sriovdra::api
