#include "serve/base64.hpp"

#include <cstdint>

namespace accel::serve {

void append_base64(std::string& out, std::span<const std::byte> bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  out.reserve(out.size() + (bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const auto triple = std::to_integer<std::uint32_t>(bytes[i]) << 16 |
                        std::to_integer<std::uint32_t>(bytes[i + 1]) << 8 |
                        std::to_integer<std::uint32_t>(bytes[i + 2]);
    for (int shift = 18; shift >= 0; shift -= 6) out += kAlphabet[(triple >> shift) & 63];
  }
  const std::size_t rest = bytes.size() - i;
  if (rest == 0) return;
  std::uint32_t tail = std::to_integer<std::uint32_t>(bytes[i]) << 16;
  if (rest == 2) tail |= std::to_integer<std::uint32_t>(bytes[i + 1]) << 8;
  out += kAlphabet[(tail >> 18) & 63];
  out += kAlphabet[(tail >> 12) & 63];
  out += rest == 2 ? kAlphabet[(tail >> 6) & 63] : '=';
  out += '=';
}

}  // namespace accel::serve
