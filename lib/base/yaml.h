#pragma once
// YAML (as kubectl accepts it) to JSON documents. Plain scalars resolve like YAML 1.2's core
// schema (true/false, null/~, integers, floats); quoted scalars always stay strings.
// A stream of several documents ("---") yields one JSON document each; empty documents are skipped.
#include <string_view>
#include <vector>

#include "base/json.h"

namespace sriovdra {

Result<std::vector<json::Document>> yamlToJson(std::string_view text);

// JSON to block-style YAML, for printing objects to people (`-o yaml`).
std::string jsonToYaml(const json::Value& v);

}  // namespace sriovdra
