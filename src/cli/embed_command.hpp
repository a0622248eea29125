// `accel embed [--model DIR] [--device ...] [--dtype auto|f32|f16|bf16] [--batch-tokens N] [--prompt TEXT |
// --prompt-name NAME]
// [--dimensions N] [--truncate right|left|refuse] [--output FILE] FILE|-`: one text per line (or JSONL objects with
// a "text" field) in; JSONL out, one object per text: {"index", "tokens", "embedding"} for a dense model,
// {"index", "tokens", "sparse": {"indices", "values"}} for a SPLADE one, {"index", "tokens", "scores"} for a
// classifier; or, for an output ending in .npy, a float32 [texts, dimensions] array (dense models). A progress bar
// goes to stderr once an input takes more than a second.
//
// `accel rerank QUERY FILE|-`: a cross-encoder's score of the query with each line: JSONL {"index", "tokens",
// "score", "logit"} (score: the sigmoid of the logit, as sentence-transformers' CrossEncoder gives it for one
// label; a model of several labels prints "scores", its logits).
//
// `accel info --model DIR`: what loads from the folder (family, head, pooling, dimensions, tokenizer, prompts).
#pragma once

#include <cstdint>
#include <string>

namespace accel::cli {

struct EmbedOptions {
  std::string model;  // empty: embed::default_model_folder()
  std::string device = "auto";
  std::string devices;  // embed only; non-empty: a replica on each device of this list (EmbedReplicas), not --device
  std::uint32_t batch_tokens = 0;  // 0: embed::default_batch_tokens of the model and the device
  std::string dtype = "auto";      // --dtype: cli::compute_dtype
  std::string input = "-";
  std::string output = "-";
  std::string input_format = "auto";  // auto | lines | jsonl
  std::string prompt;                 // with has_prompt: --prompt's text (which may be empty)
  bool has_prompt = false;
  std::string prompt_name;
  std::uint32_t dimensions = 0;
  std::string truncate = "right";  // right | left | refuse
  std::string query;               // rerank's
};

// Exit codes: cli/text_input.hpp's ExitCode.
int run_embed(const EmbedOptions& options);
int run_rerank(const EmbedOptions& options);
int run_model_info(const EmbedOptions& options);

}  // namespace accel::cli
