// cuRAND's host API for XORWOW, MRG32k3a and Sobol32: one generator of one kind, on the GPU (bound to a stream) or
// on the host (cuRAND's host-side generators, which need the toolkit's library but no GPU).
#pragma once

#include <curand.h>

#include <memory>
#include <string_view>

#include "accel/core/library_version.hpp"
#include "accel/libs/rand/generate.hpp"
#include "libs/rand/generate_checks.hpp"

namespace accel::rand {

// A Status for a cuRAND return code; `what` names the call.
[[nodiscard]] Status curand_status(curandStatus_t status, std::string_view what);

[[nodiscard]] LibraryVersion curand_library();

class CurandGenerator {
 public:
  // A generator writing to device memory in order on `stream`.
  static Result<std::unique_ptr<CurandGenerator>> on_device(Generator generator, cudaStream_t stream);
  // A generator writing to host memory.
  static Result<std::unique_ptr<CurandGenerator>> on_host(Generator generator);
  ~CurandGenerator();
  CurandGenerator(const CurandGenerator&) = delete;
  CurandGenerator& operator=(const CurandGenerator&) = delete;

  // Seeds the generator and sets its offset as the request says (both every time: a generator advances as it
  // generates, and the request names its position), then writes checked.count elements to `output`. On the device
  // it enqueues; the status is what cuRAND answered.
  [[nodiscard]] Status generate(const Generate& request, const CheckedGenerate& checked, void* output) const;

 private:
  CurandGenerator(curandGenerator_t handle, Generator generator) : handle_(handle), generator_(generator) {}
  static Result<std::unique_ptr<CurandGenerator>> make(Generator generator, bool host, cudaStream_t stream);

  // A handle: generating changes what it points to, not this object (which is why generate() is const: cached
  // generators are handed out as pointers to const).
  curandGenerator_t handle_;
  Generator generator_;
};

}  // namespace accel::rand
