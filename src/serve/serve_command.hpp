// `accel serve`: opens the device, starts the server, loads the model into it, and serves until SIGTERM or
// SIGINT, then shuts down gracefully (every request already accepted is answered) and exits 0.
#pragma once

#include <string>

#include "serve/serve_options.hpp"

namespace accel::serve {

struct ServeCommand {
  std::string model;            // empty: default_model_folder()
  std::string device = "auto";  // auto (CUDA when usable, else the CPU), cpu, cpu-isolated, cuda, cuda-isolated
  ServeOptions server;
};

// The process's exit code: 0 after a graceful shutdown, 1 when the server could not start or the model load.
int run_serve(const ServeCommand& command);

}  // namespace accel::serve
