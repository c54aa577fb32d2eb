#pragma once
// SHA-256 (OpenSSL) as lower-case hex, for checksums of files this project writes.
#include <string>
#include <string_view>

namespace sriovdra {

std::string sha256Hex(std::string_view data);

}  // namespace sriovdra
