#include "serve/float_json.hpp"

#include <fmt/format.h>

#include <iterator>

namespace accel::serve {

void append_json_floats(std::string& out, std::span<const float> values) {
  out += '[';
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    fmt::format_to(std::back_inserter(out), "{}", values[i]);
  }
  out += ']';
}

}  // namespace accel::serve
