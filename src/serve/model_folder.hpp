// The model folder `accel serve` (and `accel embed`) load when not told which: $ACCEL_MODEL_DIR, else where
// scripts/setup installs all-MiniLM-L6-v2, .deps/models/all-MiniLM-L6-v2 in the source tree this build came from.
#pragma once

#include <filesystem>

namespace accel::serve {

[[nodiscard]] std::filesystem::path default_model_folder();

}  // namespace accel::serve
