// How a family's linked requests run (the operation contract's run_linked, Note [Linked bursts]): as chains of one
// launch each, where the family's kernels chain them.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "accel/core/status.hpp"
#include "operation/cuda_operation.hpp"

namespace accel::blas {

// Links run as chains: each longest chain from the first link on (`chain_length`) is one `launch_chain`, and a link
// that begins none is launched alone (`launch_one`, as the request's run launches it). Errors say `alone`, or how many
// `kind` a chain held.
template <class Link, class LaunchOne>
Status run_chains(std::span<const Link> links, CudaRun& run, int (*chain_length)(const Link*, std::size_t),
                  cudaError_t (*launch_chain)(const Link*, int, cudaStream_t), LaunchOne&& launch_one,
                  std::string_view alone, std::string_view kind) {
  for (std::size_t first = 0; first < links.size();) {
    const int count = std::max(chain_length(&links[first], links.size() - first), 1);
    const cudaError_t launched = count == 1 ? launch_one(links[first], run.target.stream())
                                            : launch_chain(&links[first], count, run.target.stream());
    ACCEL_RETURN_IF_ERROR(run.target.check(
        launched, count == 1 ? std::string(alone) : fmt::format("launching a chain of {} {}", count, kind)));
    first += static_cast<std::size_t>(count);
  }
  return Status();
}

}  // namespace accel::blas
