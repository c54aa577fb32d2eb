#pragma once
// YAML (as kubectl accepts it) to JSON documents. Plain scalars resolve like YAML 1.2's core
// schema (true/false, null/~, integers, floats); quoted scalars always stay strings.
// A stream of several documents ("---") yields one JSON document each; empty documents are skipped.
// Refused with the line: a key twice in one mapping (YAML forbids it; a silent "last wins" would
// hide `numVfs: 1` above `numVfs: 64`), nesting deeper than kYamlMaxDepth, a scalar longer than
// kYamlMaxScalar, and documents whose aliases expand beyond kYamlMaxNodes values or
// kYamlMaxExpandedBytes of text (an alias bomb).
#include <string_view>
#include <vector>

#include "base/json.h"

namespace sriovdra {

inline constexpr size_t kYamlMaxDepth = 512;
inline constexpr size_t kYamlMaxScalar = 1 << 20;
inline constexpr size_t kYamlMaxNodes = 1'000'000;
inline constexpr size_t kYamlMaxExpandedBytes = 64u << 20;

Result<std::vector<json::Document>> yamlToJson(std::string_view text);

// JSON to block-style YAML, for printing objects to people (`-o yaml`).
std::string jsonToYaml(const json::Value& v);

}  // namespace sriovdra
