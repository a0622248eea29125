// The per-model options of `accel serve`: each may be given once, for every model, or once per --model, matched to
// the models by position (as Infinity's repeated options are):
//
//   accel serve --model A --model B --served-model-name a --served-model-name b
//               --batch-tokens 16384 --batch-tokens 4096 --auto-truncate
//
// serves A as "a" with a budget of 16384 tokens a batch and B as "b" with 4096, both cutting long inputs. Any other
// count is refused naming the option, and so is one --served-model-name for several models (they would share it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "accel/core/result.hpp"
#include "serve/serve_options.hpp"

namespace accel::cli {

// Each per-model option's values as given, in order.
struct PerModelArguments {
  std::vector<std::string> served_names;          // --served-model-name
  std::vector<std::uint32_t> batch_tokens;        // --batch-tokens
  std::vector<std::size_t> max_batch_requests;    // --max-batch-requests
  std::vector<std::string> auto_truncate;         // --auto-truncate[=true|false] (a flag: "true" when bare)
  std::vector<std::string> dtypes;                // --dtype (cli::compute_dtype)
  std::vector<std::string> default_prompt_names;  // --default-prompt-name ("": the folder's own)
  std::vector<std::string> default_prompts;       // --default-prompt ("": no prompt)
};

// What each of `models` models is served with; invalid_argument naming the option whose count is neither 0, 1 nor
// `models`, a --served-model-name given once for several models, a served name twice, an --auto-truncate value
// other than true or false, or a --dtype not among cli::kDtypeChoices.
[[nodiscard]] Result<std::vector<serve::ModelServeOptions>> model_serve_options(std::size_t models,
                                                                                const PerModelArguments& given);

}  // namespace accel::cli
