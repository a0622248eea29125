// `accel serve`: opens the device, starts the server, loads the models into it (each --model on the same device,
// the first the default), and serves until SIGTERM or SIGINT, then shuts down gracefully (every request already
// accepted is answered) and exits 0.
#pragma once

#include <string>
#include <vector>

#include "cli/serve_model_options.hpp"
#include "serve/serve_options.hpp"

namespace accel::cli {

struct ServeCommand {
  std::vector<std::string> models;  // empty: embed::default_model_folder()
  std::string device = "auto";      // as every command's --device (device_choice.hpp)
  // Non-empty: a replica of each model on every device of this list (accel::parse_device_list), instead of --device.
  std::string devices;
  serve::ServeOptions server;
  PerModelArguments per_model;  // matched to `models` by model_serve_options
};

// The process's exit code: 0 after a graceful shutdown, 1 when the per-model options do not match the models, the
// server could not start or a model did not load.
int run_serve(const ServeCommand& command);

}  // namespace accel::cli
