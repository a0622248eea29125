// `accel tokenize (--model DIR | --tokenizer FILE) [--offsets] [--max-length N [--truncate right|left]]
// [--no-special-tokens] FILE|-`: one JSONL line per input text, {"index", "ids"} (and "offsets" with --offsets),
// exactly what HuggingFace tokenizers' `encode` gives after no_truncation() and no_padding() unless --max-length
// asks for truncation. Offsets are [begin, end) in code points of the text, as tokenizers' Python API reports them.
#pragma once

#include <cstddef>
#include <string>

namespace accel::cli {

struct TokenizeOptions {
  std::string model;      // a model folder: its tokenizer.json
  std::string tokenizer;  // or the tokenizer.json itself
  std::string input = "-";
  std::string input_format = "auto";  // auto | lines | jsonl
  bool offsets = false;
  bool special_tokens = true;
  std::size_t max_length = 0;  // 0: no truncation
  std::string truncate = "right";
  unsigned threads = 0;  // 0: one per hardware thread
};

// Exit codes: cli/text_input.hpp's ExitCode.
int run_tokenize(const TokenizeOptions& options);

}  // namespace accel::cli
