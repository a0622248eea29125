#include "serve/float_json.hpp"

#include <charconv>
#include <system_error>

namespace accel::serve {

namespace {
// The longest shortest form of a float: "-1.17549435e-38".
constexpr std::size_t kMaxFloatChars = 16;
}  // namespace

void append_json_floats(std::string& out, std::span<const float> values) {
  // std::to_chars straight into the string: a response of embeddings is mostly these numbers, and formatting
  // each through fmt and a back_inserter took about a sixth of a 64-connection server's CPU on the H200
  // (docs/PERFORMANCE.md §69).
  const std::size_t start = out.size();
  out.resize(start + 2 + values.size() * (kMaxFloatChars + 1));
  char* next = out.data() + start;
  char* const end = out.data() + out.size();
  *next++ = '[';
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) *next++ = ',';
    next = std::to_chars(next, end, values[i]).ptr;
  }
  *next++ = ']';
  out.resize(static_cast<std::size_t>(next - out.data()));
}

}  // namespace accel::serve
