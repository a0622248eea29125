// `accel serve`: opens the device, starts the server, loads the models into it (each --model on the same device,
// the first the default), and serves until SIGTERM or SIGINT, then shuts down gracefully (every request already
// accepted is answered) and exits 0.
#pragma once

#include <string>
#include <vector>

#include "serve/serve_options.hpp"

namespace accel::cli {

struct ServeCommand {
  std::vector<std::string> models;  // empty: embed::default_model_folder()
  std::string device = "auto";      // as every command's --device (device_choice.hpp)
  serve::ServeOptions server;
};

// The process's exit code: 0 after a graceful shutdown, 1 when the server could not start or the model load.
int run_serve(const ServeCommand& command);

}  // namespace accel::cli
