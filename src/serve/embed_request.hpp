// accel::serve::EmbedRequest — what either API asks for, once its body is parsed and checked against the limits:
// texts to tokenise, or (OpenAI only) sequences of token ids given by the client.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace accel::serve {

// What a body may hold: the server's limits and the model's facts a request is checked against.
struct RequestLimits {
  std::size_t max_inputs = 2048;          // inputs per request
  std::uint32_t max_sequence_length = 0;  // tokens per input, special tokens included (the model's)
  std::uint32_t dimensions = 0;           // the model's
  std::uint32_t vocabulary = 0;           // token ids are below this
};

enum class Encoding : std::uint8_t { float32, base64 };

struct EmbedRequest {
  std::vector<std::string> texts;
  // Sequences of token ids, used as given (no special tokens are added); set instead of texts.
  std::vector<std::vector<std::int32_t>> token_inputs;
  std::string model;  // echoed in OpenAI's response
  Encoding encoding = Encoding::float32;
  // false: an input longer than max_sequence_length is refused (413) rather than cut.
  bool truncate = false;

  [[nodiscard]] std::size_t inputs() const noexcept { return texts.empty() ? token_inputs.size() : texts.size(); }
};

}  // namespace accel::serve
