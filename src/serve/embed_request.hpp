// accel::serve::EmbedRequest — what an embedding route asks for, once its body is parsed and checked against the
// limits: texts to tokenise (with how to cut and prompt them), or (OpenAI only) sequences of token ids given by the
// client; and what to do with the rows (dimensions, normalisation, encoding).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "accel/embed/model.hpp"

namespace accel::serve {

// What a body may hold: the server's limits and the model's facts a request is checked against.
struct RequestLimits {
  std::size_t max_inputs = 2048;          // inputs per request
  std::uint32_t max_sequence_length = 0;  // tokens per input, special tokens included (the model's)
  std::uint32_t dimensions = 0;           // the model's
  std::uint32_t vocabulary = 0;           // token ids are below this
  bool normalized = false;                // the model's rows are unit length already
};

// How a route's texts are tokenised: every route that takes text has these fields.
struct TextOptions {
  // Cut inputs longer than max_sequence_length rather than refuse them (413). Absent: the server's --auto-truncate.
  std::optional<bool> truncate;
  embed::Truncation direction = embed::Truncation::right;  // which end is cut, when cutting
  std::optional<std::string> prompt_name;                  // the folder's prompt of that name, put before each text
};

// How rows are written in a response: embedding_codec.hpp defines each.
enum class Encoding : std::uint8_t { float32, base64, int8, uint8, binary, ubinary };

struct EmbedRequest {
  std::vector<std::string> texts;
  // Sequences of token ids, used as given (no special tokens are added); set instead of texts.
  std::vector<std::vector<std::int32_t>> token_inputs;
  std::string model;  // echoed in OpenAI's response
  Encoding encoding = Encoding::float32;
  TextOptions text;
  // Keep the first this many dimensions (Matryoshka), then normalise again if the rows were unit length. 0: all.
  std::uint32_t dimensions = 0;
  // Scale each row to unit length (TEI's `normalize`); a model that normalises already is left as it is.
  bool normalize = false;

  [[nodiscard]] std::size_t inputs() const noexcept { return texts.empty() ? token_inputs.size() : texts.size(); }
};

}  // namespace accel::serve
