#pragma once
// Test data helpers: read YAML/JSON fixtures from the source tree, retarget them to a namespace.
#include <string>
#include <vector>

#include "base/json.h"

namespace sriovdra::testing {

// The path of tests/fixtures/<relative> in the source tree.
std::string fixturePath(const std::string& relative);
// All documents of tests/fixtures/<relative>.
std::vector<json::Document> loadFixture(const std::string& relative);
// The single document of tests/fixtures/<relative>.
json::Document loadFixtureObject(const std::string& relative);
// Sets metadata.namespace and drops server-owned metadata (uid, resourceVersion, ...).
void retarget(json::Document& obj, const std::string& ns);
// Parses one YAML document (test literals).
json::Document yamlObject(const std::string& yaml);

}  // namespace sriovdra::testing
