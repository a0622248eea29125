// How the GPUs of the host are joined, from NVML (the driver's libnvidia-ml.so.1, loaded at run time, never linked):
// NVLink and its link count, or the PCIe path between two GPUs. CUDA reports whether a pair are peers, not by what.
#pragma once

#include <vector>

#include "accel/device/peer.hpp"

namespace accel::device::cuda {

// Sets `link` and `nvlinks` of each of `links` (pairs of CUDA ordinals) where NVML answers for both GPUs; leaves
// them unknown and 0 where NVML is absent (a build without its header, a host without the driver's library) or
// does not know a GPU.
void add_nvml_topology(std::vector<PeerLink>& links);

}  // namespace accel::device::cuda
