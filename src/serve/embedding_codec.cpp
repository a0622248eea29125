#include "serve/embedding_codec.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <iterator>
#include <utility>

#include "serve/base64.hpp"
#include "serve/float_json.hpp"

namespace accel::serve {
namespace {

std::int16_t scaled(float value, double offset, double low, double high) {
  constexpr double kStep = 2.0 / 255.0;
  const double bucket = std::trunc((static_cast<double>(value) + 1.0) / kStep - offset);
  return static_cast<std::int16_t>(std::clamp(bucket, low, high));
}

}  // namespace

std::optional<Encoding> encoding_named(std::string_view name) {
  static constexpr std::array<std::pair<std::string_view, Encoding>, 6> kNames{{{"float", Encoding::float32},
                                                                                {"base64", Encoding::base64},
                                                                                {"int8", Encoding::int8},
                                                                                {"uint8", Encoding::uint8},
                                                                                {"binary", Encoding::binary},
                                                                                {"ubinary", Encoding::ubinary}}};
  for (const auto& [known, encoding] : kNames)
    if (known == name) return encoding;
  return std::nullopt;
}

std::vector<std::int16_t> quantize_row(std::span<const float> row, Encoding encoding) {
  std::vector<std::int16_t> out;
  switch (encoding) {
    case Encoding::uint8:
      for (float value : row) out.push_back(scaled(value, 0, 0, 255));
      break;
    case Encoding::int8:
      for (float value : row) out.push_back(scaled(value, 128, -128, 127));
      break;
    case Encoding::binary:
    case Encoding::ubinary: {
      const int offset = encoding == Encoding::binary ? 128 : 0;
      for (std::size_t first = 0; first < row.size(); first += 8) {
        int byte = 0;
        for (std::size_t bit = 0; bit < 8; ++bit)
          if (first + bit < row.size() && row[first + bit] > 0) byte |= 0x80 >> bit;
        out.push_back(static_cast<std::int16_t>(byte - offset));
      }
      break;
    }
    case Encoding::float32:
    case Encoding::base64: break;
  }
  return out;
}

void append_encoded_row(std::string& out, std::span<const float> row, Encoding encoding) {
  static_assert(std::endian::native == std::endian::little, "base64 embeddings are little-endian float32 bytes");
  switch (encoding) {
    case Encoding::float32: append_json_floats(out, row); return;
    case Encoding::base64:
      out += '"';
      append_base64(out, std::as_bytes(row));
      out += '"';
      return;
    case Encoding::int8:
    case Encoding::uint8:
    case Encoding::binary:
    case Encoding::ubinary:
      fmt::format_to(std::back_inserter(out), "[{}]", fmt::join(quantize_row(row, encoding), ","));
      return;
  }
}

}  // namespace accel::serve
