// `accel demo`: the README's first command. Embeds a handful of sentences with all-MiniLM-L6-v2 (on the GPU if there
// is one, else the CPU) and prints how similar each pair is.
#pragma once

#include <string>

namespace accel::cli {

struct EmbedDemoOptions {
  std::string model;  // empty: embed::default_model_folder()
  std::string device = "auto";
};

// The process exit code: 0 when the sentences were embedded.
int run_embed_demo(const EmbedDemoOptions& options);

}  // namespace accel::cli
