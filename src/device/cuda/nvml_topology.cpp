#include "device/cuda/nvml_topology.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>
#include <nvml.h>

#include <array>
#include <optional>
#include <string>

#include "operation/runtime_library.hpp"

namespace accel::device::cuda {
namespace {

#define ACCEL_NVML_FUNCTIONS(X)          \
  X(nvmlInit_v2)                         \
  X(nvmlDeviceGetHandleByPciBusId_v2)    \
  X(nvmlDeviceGetPciInfo_v3)             \
  X(nvmlDeviceGetTopologyCommonAncestor) \
  X(nvmlDeviceGetP2PStatus)              \
  X(nvmlDeviceGetNvLinkState)            \
  X(nvmlDeviceGetNvLinkRemotePciInfo_v2) \
  X(nvmlDeviceGetNvLinkRemoteDeviceType)

struct NvmlApi {
#define ACCEL_NVML_MEMBER(name) decltype(&::name) name = nullptr;
  ACCEL_NVML_FUNCTIONS(ACCEL_NVML_MEMBER)
#undef ACCEL_NVML_MEMBER
};

Status resolve(void* handle, NvmlApi& api) {
#define ACCEL_NVML_RESOLVE(name) ACCEL_RESOLVE_RUNTIME_SYMBOL(api, handle, "NVML", name)
  ACCEL_NVML_FUNCTIONS(ACCEL_NVML_RESOLVE)
#undef ACCEL_NVML_RESOLVE
  // Initialised once and never shut down: the table lives as long as the process.
  if (const nvmlReturn_t started = api.nvmlInit_v2(); started != NVML_SUCCESS)
    return unavailable(fmt::format("nvmlInit_v2 answered {}", static_cast<int>(started)));
  return Status();
}

Status load(NvmlApi& api) {
  const std::string candidates[] = {"libnvidia-ml.so.1"};
  return open_runtime_library("NVML", candidates, [&](void* handle) { return resolve(handle, api); });
}

Result<const NvmlApi*> nvml() {
  static RuntimeLibrary<NvmlApi> loaded(load);
  return loaded.get();
}

struct Gpu {
  nvmlDevice_t handle = nullptr;
  nvmlPciInfo_t pci{};
};

// The NVML device of a CUDA ordinal, found by its PCI address (the two number GPUs differently).
std::optional<Gpu> gpu_of(const NvmlApi& api, int ordinal) {
  std::array<char, NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE> bus_id{};
  if (cudaDeviceGetPCIBusId(bus_id.data(), static_cast<int>(bus_id.size()), ordinal) != cudaSuccess) {
    (void)cudaGetLastError();
    return std::nullopt;
  }
  Gpu gpu;
  if (api.nvmlDeviceGetHandleByPciBusId_v2(bus_id.data(), &gpu.handle) != NVML_SUCCESS) return std::nullopt;
  if (api.nvmlDeviceGetPciInfo_v3(gpu.handle, &gpu.pci) != NVML_SUCCESS) return std::nullopt;
  return gpu;
}

bool same_pci_device(const nvmlPciInfo_t& a, const nvmlPciInfo_t& b) {
  return a.domain == b.domain && a.bus == b.bus && a.device == b.device;
}

// The active NVLinks of `from` that end at `to`; where the pair meet through NVSwitches instead (NVML's P2P status
// says NVLink, and no link ends at `to`), the active links of `from` into the switches, as `nvidia-smi topo -m`
// counts them.
int count_nvlinks(const NvmlApi& api, const Gpu& from, const Gpu& to) {
  int direct = 0, into_switches = 0;
  for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
    nvmlEnableState_t active = NVML_FEATURE_DISABLED;
    if (api.nvmlDeviceGetNvLinkState(from.handle, link, &active) != NVML_SUCCESS || active != NVML_FEATURE_ENABLED)
      continue;
    nvmlPciInfo_t remote{};
    if (api.nvmlDeviceGetNvLinkRemotePciInfo_v2(from.handle, link, &remote) == NVML_SUCCESS &&
        same_pci_device(remote, to.pci)) {
      ++direct;
      continue;
    }
    nvmlIntNvLinkDeviceType_t type = NVML_NVLINK_DEVICE_TYPE_UNKNOWN;
    if (api.nvmlDeviceGetNvLinkRemoteDeviceType(from.handle, link, &type) == NVML_SUCCESS &&
        type == NVML_NVLINK_DEVICE_TYPE_SWITCH)
      ++into_switches;
  }
  if (direct > 0) return direct;
  nvmlGpuP2PStatus_t status = NVML_P2P_STATUS_UNKNOWN;
  if (api.nvmlDeviceGetP2PStatus(from.handle, to.handle, NVML_P2P_CAPS_INDEX_NVLINK, &status) == NVML_SUCCESS &&
      status == NVML_P2P_STATUS_OK)
    return into_switches;
  return 0;
}

LinkKind pcie_path(const NvmlApi& api, const Gpu& from, const Gpu& to) {
  nvmlGpuTopologyLevel_t level{};
  if (api.nvmlDeviceGetTopologyCommonAncestor(from.handle, to.handle, &level) != NVML_SUCCESS) return LinkKind::unknown;
  switch (level) {
    case NVML_TOPOLOGY_INTERNAL: return LinkKind::same_board;
    case NVML_TOPOLOGY_SINGLE:
    case NVML_TOPOLOGY_MULTIPLE: return LinkKind::pcie_switch;
    case NVML_TOPOLOGY_HOSTBRIDGE: return LinkKind::pcie_host_bridge;
    case NVML_TOPOLOGY_NODE: return LinkKind::numa_node;
    case NVML_TOPOLOGY_SYSTEM: return LinkKind::system;
  }
  return LinkKind::unknown;
}

}  // namespace

void add_nvml_topology(std::vector<PeerLink>& links) {
  const Result<const NvmlApi*> api = nvml();
  if (!api.ok()) return;
  for (PeerLink& link : links) {
    const std::optional<Gpu> from = gpu_of(**api, link.from), to = gpu_of(**api, link.to);
    if (!from || !to) continue;
    link.nvlinks = count_nvlinks(**api, *from, *to);
    link.link = link.nvlinks > 0 ? LinkKind::nvlink : pcie_path(**api, *from, *to);
  }
}

}  // namespace accel::device::cuda
