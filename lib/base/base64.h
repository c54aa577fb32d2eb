#pragma once
// Standard base64 (RFC 4648, with padding), as Kubernetes uses for *-data fields and Secrets.
#include <string>
#include <string_view>

#include "base/status.h"

namespace sriovdra {

Result<std::string> base64Decode(std::string_view in);
std::string base64Encode(std::string_view in);

}  // namespace sriovdra
