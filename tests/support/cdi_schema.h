#pragma once
// Validates a CDI spec against the upstream JSON Schema (tests/fixtures/reference/cdi, draft-07
// using only draft-04 keywords) with RapidJSON's validator, an implementation independent of
// the code that writes the specs.
#include <string>

#include "base/json.h"

namespace sriovdra::testing {

// "" when `spec` is valid, else where and why it is not.
std::string cdiSchemaErrors(const json::Value& spec);

}  // namespace sriovdra::testing
