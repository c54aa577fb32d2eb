#include "support/fixtures.h"

#include <stdexcept>

#include "base/files.h"
#include "base/yaml.h"
#include "support/control_plane.h"

namespace sriovdra::testing {

std::string fixturePath(const std::string& relative) {
  return sourceDir() + "/tests/fixtures/" + relative;
}

std::vector<json::Document> loadFixture(const std::string& relative) {
  std::string path = fixturePath(relative);
  auto text = readFile(path);
  if (!text.ok()) throw std::runtime_error(text.status().toString());
  auto docs = yamlToJson(*text);
  if (!docs.ok()) throw std::runtime_error(path + ": " + docs.status().toString());
  return std::move(*docs);
}

json::Document loadFixtureObject(const std::string& relative) {
  auto docs = loadFixture(relative);
  if (docs.size() != 1) throw std::runtime_error(relative + " must hold exactly one object");
  return std::move(docs[0]);
}

void retarget(json::Document& obj, const std::string& ns) {
  auto& md = json::ensureObject(obj, "metadata", obj.GetAllocator());
  for (const char* key :
       {"uid", "resourceVersion", "creationTimestamp", "generation", "managedFields", "selfLink"}) {
    md.RemoveMember(key);
  }
  json::setString(md, "namespace", ns, obj.GetAllocator());
}

json::Document yamlObject(const std::string& yaml) {
  auto docs = yamlToJson(yaml);
  if (!docs.ok() || docs->size() != 1) {
    throw std::runtime_error("bad test YAML: " + docs.status().toString());
  }
  return std::move(docs->at(0));
}

}  // namespace sriovdra::testing
