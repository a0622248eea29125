#include "accel/version.hpp"

namespace accel {

Version library_version() noexcept {
  return {.major = ACCEL_VERSION_MAJOR, .minor = ACCEL_VERSION_MINOR, .patch = ACCEL_VERSION_PATCH};
}

}  // namespace accel
