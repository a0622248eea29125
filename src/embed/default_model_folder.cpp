#include <cstdlib>
#include <system_error>

#include "accel/embed/model.hpp"

namespace accel::embed {

std::filesystem::path default_model_folder() {
  if (const char* named = std::getenv("ACCEL_MODEL_DIR"); named != nullptr && *named != '\0') return named;
  std::error_code error;
  const std::filesystem::path program = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    const std::filesystem::path beside = program.parent_path().parent_path() / "models" / "all-MiniLM-L6-v2";
    if (std::filesystem::exists(beside / "config.json", error)) return beside;
  }
  return ACCEL_SOURCE_MODEL_DIR;
}

}  // namespace accel::embed
