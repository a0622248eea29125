// Base64 (RFC 4648, with padding) of bytes: OpenAI's `encoding_format: "base64"` sends embeddings as the
// base64 of their little-endian float32 bytes.
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace accel::serve {

void append_base64(std::string& out, std::span<const std::byte> bytes);

}  // namespace accel::serve
