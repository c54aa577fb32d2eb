#include "support/cdi_schema.h"

#include <stdexcept>

#include <rapidjson/schema.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "base/files.h"

namespace sriovdra::testing {
namespace {

std::string fixture(const std::string& name) {
  auto text = readFile(std::string(SRIOV_DRA_SOURCE_DIR) + "/tests/fixtures/reference/cdi/" + name);
  if (!text.ok()) throw std::runtime_error(text.status().toString());
  return *text;
}

rapidjson::Document parsed(const std::string& text) {
  rapidjson::Document d;
  d.Parse(text.c_str());
  if (d.HasParseError()) throw std::runtime_error("the CDI schema does not parse");
  return d;
}

class DefsProvider : public rapidjson::IRemoteSchemaDocumentProvider {
 public:
  DefsProvider() : doc_(parsed(fixture("defs.json"))), schema_(doc_) {}
  const rapidjson::SchemaDocument* GetRemoteDocument(const char* uri,
                                                     rapidjson::SizeType length) override {
    return std::string(uri, length) == "defs.json" ? &schema_ : nullptr;
  }

 private:
  rapidjson::Document doc_;
  rapidjson::SchemaDocument schema_;
};

}  // namespace

std::string cdiSchemaErrors(const json::Value& spec) {
  static DefsProvider defs;
  static rapidjson::Document schema_doc = parsed(fixture("schema.json"));
  static rapidjson::SchemaDocument schema(schema_doc, &defs);
  rapidjson::SchemaValidator validator(schema);
  if (spec.Accept(validator)) return "";
  rapidjson::StringBuffer where;
  validator.GetInvalidDocumentPointer().StringifyUriFragment(where);
  rapidjson::StringBuffer rule;
  validator.GetInvalidSchemaPointer().StringifyUriFragment(rule);
  return std::string("invalid at ") + where.GetString() + ": keyword '" +
         validator.GetInvalidSchemaKeyword() + "' of schema " + rule.GetString();
}

}  // namespace sriovdra::testing
