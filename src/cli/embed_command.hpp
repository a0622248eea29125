// `accel embed [--model DIR] [--device ...] [--batch-tokens N] [--output FILE] FILE|-`: one text per line (or
// JSONL objects with a "text" field) in; JSONL ({"index", "tokens", "embedding"}) or, for an output ending in
// .npy, a float32 [texts, dimensions] array out. A progress bar goes to stderr once an input takes more than a
// second.
#pragma once

#include <cstdint>
#include <string>

namespace accel::cli {

struct EmbedOptions {
  std::string model;  // empty: embed::default_model_folder()
  std::string device = "auto";
  std::uint32_t batch_tokens = 16384;
  std::string input = "-";
  std::string output = "-";
  std::string input_format = "auto";  // auto | lines | jsonl
};

// Exit codes: cli/text_input.hpp's ExitCode.
int run_embed(const EmbedOptions& options);

}  // namespace accel::cli
