// Embeddings as JSON arrays of numbers, each float written in its shortest form that reads back to the same
// float: about 10 characters per value where a double's 17 digits (nlohmann::json's dump) take 20, and a
// response of 384-dimensional embeddings is mostly these numbers.
#pragma once

#include <span>
#include <string>

namespace accel::serve {

void append_json_floats(std::string& out, std::span<const float> values);

}  // namespace accel::serve
