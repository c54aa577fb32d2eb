#include "api/meta.h"

namespace sriovdra::api {
namespace {

std::vector<SelectorRequirement> decodeRequirements(const Reader& r, std::string_view key) {
  std::vector<SelectorRequirement> out;
  for (const auto& e : r.array(key)) {
    out.push_back({e.str("key"), e.str("operator"), e.strings("values")});
  }
  return out;
}

json::Value encodeRequirements(const std::vector<SelectorRequirement>& reqs, json::Allocator& a) {
  json::Value arr(rapidjson::kArrayType);
  for (const auto& req : reqs) {
    json::Value o(rapidjson::kObjectType);
    Writer(o, a)
        .strAlways("key", req.key)
        .strAlways("operator", req.op)
        .strings("values", req.values);
    arr.PushBack(o, a);
  }
  return arr;
}

}  // namespace

Condition Condition::decode(const Reader& r) {
  return {r.str("type"),
          r.str("status"),
          r.str("reason"),
          r.str("message"),
          r.str("lastTransitionTime"),
          r.i64("observedGeneration")};
}

void Condition::encode(Writer w) const {
  w.strAlways("type", type)
      .strAlways("status", status)
      .strAlways("reason", reason)
      .strAlways("message", message)
      .strAlways("lastTransitionTime", last_transition_time);
  if (observed_generation > 0) w.i64("observedGeneration", observed_generation);
}

std::vector<Condition> decodeConditions(const Reader& r, std::string_view key) {
  std::vector<Condition> out;
  for (const auto& c : r.array(key)) out.push_back(Condition::decode(c));
  return out;
}

json::Value encodeConditions(const std::vector<Condition>& conditions, json::Allocator& a) {
  json::Value arr(rapidjson::kArrayType);
  for (const auto& c : conditions) {
    json::Value o(rapidjson::kObjectType);
    c.encode(Writer(o, a));
    arr.PushBack(o, a);
  }
  return arr;
}

bool setCondition(std::vector<Condition>& conditions, Condition c, const std::string& now) {
  for (auto& existing : conditions) {
    if (existing.type != c.type) continue;
    c.last_transition_time = existing.status == c.status ? existing.last_transition_time : now;
    if (existing == c) return false;
    existing = std::move(c);
    return true;
  }
  c.last_transition_time = now;
  conditions.push_back(std::move(c));
  return true;
}

const Condition* findCondition(const std::vector<Condition>& conditions, std::string_view type) {
  for (const auto& c : conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

LabelSelector LabelSelector::decode(const Reader& r) {
  return {r.stringMap("matchLabels"), decodeRequirements(r, "matchExpressions")};
}

void LabelSelector::encode(Writer w) const {
  w.stringMap("matchLabels", match_labels);
  if (!match_expressions.empty()) {
    w.value("matchExpressions", encodeRequirements(match_expressions, w.allocator()));
  }
}

NodeSelector NodeSelector::decode(const Reader& r) {
  NodeSelector out;
  for (const auto& t : r.array("nodeSelectorTerms")) {
    out.terms.push_back(
        {decodeRequirements(t, "matchExpressions"), decodeRequirements(t, "matchFields")});
  }
  return out;
}

void NodeSelector::encode(Writer w) const {
  json::Value arr(rapidjson::kArrayType);
  for (const auto& t : terms) {
    json::Value o(rapidjson::kObjectType);
    if (!t.match_expressions.empty()) {
      Writer(o, w.allocator())
          .value("matchExpressions", encodeRequirements(t.match_expressions, w.allocator()));
    }
    if (!t.match_fields.empty()) {
      Writer(o, w.allocator())
          .value("matchFields", encodeRequirements(t.match_fields, w.allocator()));
    }
    arr.PushBack(o, w.allocator());
  }
  w.value("nodeSelectorTerms", std::move(arr));
}

}  // namespace sriovdra::api
