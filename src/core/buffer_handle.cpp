#include "accel/core/buffer_handle.hpp"

#include <fmt/format.h>

namespace accel {

std::string to_string(const BufferHandle& h) {
  if (h.is_null()) return "null buffer";
  return fmt::format("buffer #{} (device {}, epoch {}, generation {}, {} x {})", h.slot, h.device, h.epoch,
                     h.generation, h.count, to_string(h.dtype));
}

}  // namespace accel
