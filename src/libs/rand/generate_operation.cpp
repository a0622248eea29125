#include "libs/rand/generate_operation.hpp"

#include <fmt/format.h>

#include "libs/rand/cpu_philox.hpp"
#if ACCEL_HAVE_CUDA
#include "libs/rand/curand_generator.hpp"
#endif

namespace accel {

Status Operation<rand::Generate>::check_cpu_support(const rand::CheckedGenerate& checked) {
#if ACCEL_HAVE_CUDA
  (void)checked;
  return Status();
#else
  if (checked.philox()) return Status();
  return not_supported(
      fmt::format("rand::Generate: {} runs on the CPU through cuRAND's host-side generators, and "
                  "accel was built without the CUDA toolkit",
                  rand::to_string(checked.generator)));
#endif
}

// A host-side cuRAND generator is made for each request: it holds no state a later request could use (each
// seeds it anew), and the CPU device has nowhere to keep one per thread. Seeding is what costs (MRG32k3a's host
// generator takes about half a second).
Status Operation<rand::Generate>::run_cpu(const rand::Generate& request, const rand::CheckedGenerate& checked,
                                          std::span<const BufferView> views, const CpuTarget&) {
  if (checked.philox()) {
    rand::run_cpu_philox(rand::philox_args(request, checked, views[output].data));
    return Status();
  }
#if ACCEL_HAVE_CUDA
  if (checked.count == 0) return Status();
  ACCEL_ASSIGN_OR_RETURN(std::unique_ptr<rand::CurandGenerator> generator,
                         rand::CurandGenerator::on_host(checked.generator));
  return generator->generate(request, checked, views[output].data);
#else
  return check_cpu_support(checked);
#endif
}

void Operation<rand::Generate>::describe_cpu(LibraryReport& report) {
#if ACCEL_HAVE_CUDA
  LibraryVersion curand = rand::curand_library();
  curand.name = "cuRAND host generators";
  report.report(std::move(curand));
#else
  (void)report;
#endif
}

}  // namespace accel
