// Writes safetensors files for the embed tests: well-formed ones from a list of tensors (zero-filled, laid out
// end to end) and, through le64, the raw pieces of damaged ones.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace accel::testing {

inline std::string le64(std::uint64_t value) {
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((value >> (8 * i)) & 0xff);
  return bytes;
}

struct WrittenTensor {
  std::string name;
  std::string dtype;  // "F32", "I64", ...
  std::vector<std::uint64_t> shape;
};

inline std::string safetensors_bytes(const std::vector<WrittenTensor>& tensors) {
  static const std::map<std::string, std::uint64_t> kSizes = {{"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2},
                                                              {"I64", 8}, {"I32", 4}, {"I8", 1},  {"U8", 1}};
  std::string header = "{";
  std::uint64_t offset = 0;
  for (const WrittenTensor& tensor : tensors) {
    std::uint64_t bytes = kSizes.at(tensor.dtype);
    std::string shape;
    for (const std::uint64_t extent : tensor.shape) {
      bytes *= extent;
      if (!shape.empty()) shape += ',';
      shape += std::to_string(extent);
    }
    if (header.size() > 1) header += ',';
    header += "\"" + tensor.name + "\":{\"dtype\":\"" + tensor.dtype + "\",\"shape\":[" + shape +
              "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + bytes) + "]}";
    offset += bytes;
  }
  header += "}";
  return le64(header.size()) + header + std::string(offset, '\0');
}

}  // namespace accel::testing
