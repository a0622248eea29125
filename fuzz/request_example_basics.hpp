// What every request example is made with (request_examples.hpp): the overload tag of example() and a buffer
// handle of the fuzzers' made-up device, value-initialised so that its padding is zero in the seeds.
#pragma once

#include <cstdint>
#include <type_traits>

#include "accel/core/buffer_handle.hpp"

namespace accel::fuzzing {

template <class Request>
using For = std::type_identity<Request>;

inline BufferHandle buffer(std::uint32_t slot, DType dtype, std::uint64_t count) {
  auto h = BufferHandle();
  h.device = 1, h.slot = slot, h.epoch = 1, h.generation = slot + 1, h.dtype = dtype, h.count = count;
  return h;
}

}  // namespace accel::fuzzing
