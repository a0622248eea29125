#include "serve/model_folder.hpp"

#include <cstdlib>

namespace accel::serve {

std::filesystem::path default_model_folder() {
  if (const char* folder = std::getenv("ACCEL_MODEL_DIR"); folder != nullptr && *folder != '\0') return folder;
  return std::filesystem::path(ACCEL_SOURCE_DIR) / ".deps" / "models" / "all-MiniLM-L6-v2";
}

}  // namespace accel::serve
