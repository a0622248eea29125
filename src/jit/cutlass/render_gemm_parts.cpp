// What the GEMM and grouped GEMM renderers share (render_gemm_parts.hpp): their validation, the text of every module
// before the instance, and the instance's aliases.
#include "jit/cutlass/render_gemm_parts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "jit/cutlass/render_parts.hpp"

namespace accel::jit::cutlass {

// -- validation ------------------------------------------------------------------------------------------------

// Shared memory the TMA epilogue takes, as CUTLASS's sm90 builder sizes it (EpilogueTileAuto), plus a little.
// It is sized before validate_tile runs: a tile without extent (which that refuses) takes none, rather than dividing
// by a zero subtile (UndefinedBehaviorSanitizer in the asan-toolkit preset found it).
int epilogue_smem_bytes(const TileConfig& tile, DType output, const EpilogueSmem& parts) {
  if (tile.tile_m <= 0 || tile.tile_n <= 0) return 0;
  const bool cooperative = tile.schedule == Schedule::tma_cooperative;
  const int epi_m = std::min(cooperative ? 128 : 64, tile.tile_m);
  const int epi_n = std::gcd(std::min(32, tile.tile_n), tile.tile_n);
  const int epi_tiles = (tile.tile_m / epi_m) * (tile.tile_n / epi_n);
  const int out = static_cast<int>(size_of(output));
  const int subtile = epi_m * epi_n * out;
  const bool reuse = parts.source && out > 1;  // C and D share a type: D reuses C's buffers
  const int stages_d = std::min(epi_tiles, 2);
  const int stages_c = reuse ? std::max(std::min(epi_tiles, 4), stages_d + 1) : std::min(epi_tiles, 4);
  int bytes = reuse ? 0 : stages_d * subtile;
  if (parts.source) bytes += stages_c * subtile;
  if (parts.residual) bytes += stages_c * subtile;
  return bytes + parts.row_vectors_bytes + 1024;
}

Status validate_tile(std::string_view family, DType input, const TileConfig& tile, int epilogue_bytes,
                     int carveout_bytes) {
  const TileConfig& t = tile;
  if (t.schedule == Schedule::tma_cooperative && t.tile_m != 128 && t.tile_m != 256)
    return invalid_argument(
        fmt::format("{}: tile_m {} is not supported by tma_cooperative (its two consumer "
                    "warp groups split M: 128 or 256)",
                    family, t.tile_m));
  if (t.schedule == Schedule::tma_pingpong && t.tile_m != 64 && t.tile_m != 128)
    return invalid_argument(
        fmt::format("{}: tile_m {} is not supported by tma_pingpong (64 or 128)", family, t.tile_m));
  if (t.tile_n < 16 || t.tile_n > 256 || t.tile_n % 16 != 0)
    return invalid_argument(fmt::format("{}: tile_n {} must be a multiple of 16 from 16 to 256", family, t.tile_n));
  // Each consumer thread holds its share of the f32 accumulator tile in registers: the cooperative kernel's two
  // warp groups split a tile, a ping-pong warp group holds one whole. Past 128 registers of them the kernel spills.
  const int consumer_threads = t.schedule == Schedule::tma_cooperative ? 256 : 128;
  const int accumulator_registers = t.tile_m * t.tile_n / consumer_threads;
  if (accumulator_registers > 128)
    return invalid_argument(
        fmt::format("{}: tile {}x{} gives each {} consumer thread {} accumulator registers; at "
                    "most 128 fit without spilling",
                    family, t.tile_m, t.tile_n, to_string(t.schedule), accumulator_registers));
  const int element_bytes = static_cast<int>(size_of(input));
  const int k_bytes = t.tile_k * element_bytes;
  if (t.tile_k <= 0 || (k_bytes != 64 && k_bytes != 128 && k_bytes != 256))
    return invalid_argument(fmt::format("{}: tile_k {} must span 64, 128 or 256 bytes of {} ({}, {} or {})", family,
                                        t.tile_k, to_string(input), 64 / element_bytes, 128 / element_bytes,
                                        256 / element_bytes));
  const auto cluster_ok = [](int c) { return c == 1 || c == 2 || c == 4; };
  if (!cluster_ok(t.cluster_m) || !cluster_ok(t.cluster_n) || t.cluster_m * t.cluster_n > 4)
    return invalid_argument(fmt::format("{}: cluster {}x{} is not supported (1, 2 or 4 each, at most 4 blocks)", family,
                                        t.cluster_m, t.cluster_n));
  const int stage_bytes = (t.tile_m + t.tile_n) * t.tile_k * element_bytes + 32;
  const int stages = (kSm90SmemBytes - epilogue_bytes - carveout_bytes) / stage_bytes;
  if (stages < 2)
    return invalid_argument(
        fmt::format("{}: tile {}x{}x{} leaves room for {} mainloop stage(s) in shared memory "
                    "beside the epilogue's {} bytes; it needs at least 2",
                    family, t.tile_m, t.tile_n, t.tile_k, std::max(stages, 0), epilogue_bytes));
  return {};
}

Status validate_types(std::string_view family, int arch, DType input, DType output, Layout layout_a, Layout layout_b,
                      const TileConfig& tile) {
  if (tile.schedule != Schedule::tma_cooperative && tile.schedule != Schedule::tma_pingpong)
    return not_supported(
        fmt::format("{}: schedule {} (GEMMs take tma_cooperative or tma_pingpong)", family, to_string(tile.schedule)));
  if (arch != 90)
    return not_supported(fmt::format("{}: arch {} is not supported by schedule {}, which needs sm_90 (arch 90)", family,
                                     arch, to_string(tile.schedule)));
  if (input != DType::f16 && input != DType::bf16 && input != DType::fp8_e4m3)
    return not_supported(
        fmt::format("{}: input {} is not supported (A and B: f16, bf16 or fp8_e4m3)", family, to_string(input)));
  if (output != DType::f16 && output != DType::bf16 && output != DType::f32)
    return not_supported(
        fmt::format("{}: output {} is not supported (C and D: f16, bf16 or f32)", family, to_string(output)));
  if (input == DType::fp8_e4m3 && layout_a != Layout::row_major)
    return not_supported(
        fmt::format("{}: fp8_e4m3 needs layout_a row_major (K-major A), not layout_a {}", family, to_string(layout_a)));
  if (input == DType::fp8_e4m3 && layout_b != Layout::column_major)
    return not_supported(fmt::format("{}: fp8_e4m3 needs layout_b column_major (K-major B), not layout_b {}", family,
                                     to_string(layout_b)));
  return {};
}

// -- rendering helpers -------------------------------------------------------------------------------------------

std::string substitute(std::string_view text, const std::vector<std::pair<std::string_view, std::string>>& values) {
  std::string out;
  out.reserve(text.size() + 256);
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t open = text.find('$', at);
    if (open == std::string_view::npos) break;
    const std::size_t close = text.find('$', open + 1);
    if (close == std::string_view::npos) break;
    const std::string_view name = text.substr(open + 1, close - open - 1);
    const auto found = std::find_if(values.begin(), values.end(), [&](const auto& v) { return v.first == name; });
    out.append(text.substr(at, open - at));
    if (found == values.end()) {
      out.append(text.substr(open, close - open + 1));  // not a placeholder: keep it
    } else {
      out.append(found->second);
    }
    at = close + 1;
  }
  out.append(text.substr(at));
  return out;
}

namespace {

std::string_view layout_tag(Layout layout) {
  return layout == Layout::row_major ? "cutlass::layout::RowMajor" : "cutlass::layout::ColumnMajor";
}

std::string tile_shape(const TileConfig& t) {
  return fmt::format("Shape<_{}, _{}, _{}>", t.tile_m, t.tile_n, t.tile_k);
}

std::string cluster_shape(const TileConfig& t) { return fmt::format("Shape<_{}, _{}, _1>", t.cluster_m, t.cluster_n); }

// fp8 takes CUTLASS's FP8FastAccum schedules: the tensor cores accumulate without the periodic promotion to a
// separate f32 accumulator. The promoting mainloop keeps a second accumulator set: on the H100 it ran a 4096^3
// fp8 GEMM at 128x256x128 in 314 us against 96 us for fast accumulation (it spills), and at 128x128x128 in 118 us.
std::string mainloop_schedule(Schedule schedule, bool grouped, DType input) {
  const std::string_view fast = input == DType::fp8_e4m3 ? "FP8FastAccum" : "";
  if (grouped)
    return fmt::format("{}{}",
                       schedule == Schedule::tma_cooperative
                           ? "cutlass::gemm::KernelPtrArrayTmaWarpSpecializedCooperative"
                           : "cutlass::gemm::KernelPtrArrayTmaWarpSpecializedPingpong",
                       fast);
  return fmt::format("{}{}",
                     schedule == Schedule::tma_cooperative ? "cutlass::gemm::KernelTmaWarpSpecializedCooperative"
                                                           : "cutlass::gemm::KernelTmaWarpSpecializedPingpong",
                     fast);
}

std::string_view epilogue_schedule(Schedule schedule, bool grouped) {
  if (grouped)
    return schedule == Schedule::tma_cooperative ? "cutlass::epilogue::PtrArrayTmaWarpSpecializedCooperative"
                                                 : "cutlass::epilogue::PtrArrayTmaWarpSpecializedPingpong";
  return schedule == Schedule::tma_cooperative ? "cutlass::epilogue::TmaWarpSpecializedCooperative"
                                               : "cutlass::epilogue::TmaWarpSpecialized";
}

std::string_view layout_words(Layout layout) { return layout == Layout::row_major ? "row-major" : "column-major"; }

}  // namespace

std::string stride_expression(bool contiguous_first, std::string_view ld, std::string_view rows) {
  if (contiguous_first) return fmt::format("cute::make_stride(cute::Int<1>{{}}, {0}, {0} * {1})", ld, rows);
  return fmt::format("cute::make_stride({0}, cute::Int<1>{{}}, {0} * {1})", ld, rows);
}

namespace {

constexpr std::string_view kCommonHead = R"cu(#include <atomic>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <exception>
#include <vector>

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/epilogue/fusion/operations.hpp"
#include "cutlass/epilogue/thread/activation.h"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/dispatch_policy.hpp"
#include "cutlass/gemm/group_array_problem_shape.hpp"
#include "cutlass/gemm/kernel/gemm_universal.hpp"

namespace accel_module {

// What a cutlass::Status means to the caller.
inline int result_of(cutlass::Status status) {
  switch (status) {
    case cutlass::Status::kSuccess: return kAccelOk;
    case cutlass::Status::kErrorMisalignedOperand:
    case cutlass::Status::kErrorInvalidDataType:
    case cutlass::Status::kErrorInvalidLayout:
    case cutlass::Status::kErrorWorkspaceNull: return kAccelInvalidArgument;
    case cutlass::Status::kErrorInvalidProblem:
    case cutlass::Status::kErrorNotSupported:
    case cutlass::Status::kErrorArchMismatch:
    case cutlass::Status::kErrorInsufficientDriver: return kAccelNotSupported;
    case cutlass::Status::kErrorMemoryAllocation: return kAccelCudaError;
    default: return kAccelInternal;
  }
}

inline long long ll(int64_t value) { return static_cast<long long>(value); }

// A matrix operand: present, 16-byte aligned (TMA), its leading dimension at least the extent of its contiguous
// dimension and a multiple of `alignment` elements (16 bytes, TMA again).
inline int check_matrix(const char* name, const void* pointer, const char* ld_name, int64_t ld,
                        int64_t contiguous_extent, int alignment, char* error, size_t capacity) {
  if (pointer == nullptr) return accel_fail(kAccelInvalidArgument, error, capacity, "%s is null", name);
  if (reinterpret_cast<uintptr_t>(pointer) % 16 != 0)
    return accel_fail(kAccelInvalidArgument, error, capacity, "%s (%p) is not 16-byte aligned, as TMA needs", name,
                pointer);
  if (ld < contiguous_extent)
    return accel_fail(kAccelInvalidArgument, error, capacity, "%s = %lld is less than %lld, the extent of %s's contiguous "
                "dimension", ld_name, ll(ld), ll(contiguous_extent), name);
  if (ld % alignment != 0)
    return accel_fail(kAccelInvalidArgument, error, capacity, "%s = %lld is not a multiple of %d elements (16 bytes), as "
                "TMA needs", ld_name, ll(ld), alignment);
  return kAccelOk;
}

// The current device as the kernel sees it, queried once per device: it must be sm_90 (the module holds sm_90a
// code only); its SM count and how many clusters of the kernel fit at once size the persistent grid.
struct DeviceInfo {
  int device = 0;
  int sm_count = 0;
  int max_active_clusters = 0;
};

template <class Kernel>
int query_device(DeviceInfo& info, char* error, size_t capacity) {
  constexpr int kMaxDevices = 64;
  static std::atomic<int> sm_counts[kMaxDevices];  // 0: not queried yet
  static std::atomic<int> cluster_counts[kMaxDevices];
  cudaError_t status = cudaGetDevice(&info.device);
  if (status != cudaSuccess)
    return accel_fail(kAccelCudaError, error, capacity, "cudaGetDevice: %s", cudaGetErrorString(status));
  const bool cached = info.device >= 0 && info.device < kMaxDevices;
  if (cached && sm_counts[info.device].load(std::memory_order_acquire) > 0) {
    info.max_active_clusters = cluster_counts[info.device].load(std::memory_order_relaxed);
    info.sm_count = sm_counts[info.device].load(std::memory_order_relaxed);
    return kAccelOk;
  }
  int major = 0, minor = 0;
  if ((status = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, info.device)) != cudaSuccess ||
      (status = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, info.device)) != cudaSuccess ||
      (status = cudaDeviceGetAttribute(&info.sm_count, cudaDevAttrMultiProcessorCount, info.device)) !=
          cudaSuccess)
    return accel_fail(kAccelCudaError, error, capacity, "cudaDeviceGetAttribute: %s", cudaGetErrorString(status));
  if (major != 9 || minor != 0)
    return accel_fail(kAccelNotSupported, error, capacity, "this module holds sm_90a code only; device %d is sm_%d%d",
                info.device, major, minor);
  using Cluster = typename Kernel::ClusterShape;
  constexpr int kClusterSize = cute::size(Cluster{});
  info.max_active_clusters = 0;
  if constexpr (kClusterSize > 1) {
    const int smem_bytes = Kernel::SharedStorageSize;
    const void* kernel = reinterpret_cast<const void*>(&cutlass::device_kernel<Kernel>);
    bool sized = smem_bytes < (48 << 10) ||
                 cudaFuncSetAttribute(cutlass::device_kernel<Kernel>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      smem_bytes) == cudaSuccess;
    cudaLaunchAttribute attribute{};
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = cute::size<0>(Cluster{});
    attribute.val.clusterDim.y = cute::size<1>(Cluster{});
    attribute.val.clusterDim.z = cute::size<2>(Cluster{});
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(attribute.val.clusterDim.x, attribute.val.clusterDim.y, attribute.val.clusterDim.z);
    config.blockDim = dim3(Kernel::MaxThreadsPerBlock, 1, 1);
    config.dynamicSmemBytes = static_cast<size_t>(smem_bytes);
    config.attrs = &attribute;
    config.numAttrs = 1;
    if (!sized || cudaOccupancyMaxActiveClusters(&info.max_active_clusters, kernel, &config) != cudaSuccess) {
      (void)cudaGetLastError();  // not fatal: CUTLASS then sizes the grid from the SM count alone
      info.max_active_clusters = 0;
    }
  }
  if (cached) {
    cluster_counts[info.device].store(info.max_active_clusters, std::memory_order_relaxed);
    sm_counts[info.device].store(info.sm_count, std::memory_order_release);
  }
  return kAccelOk;
}

// Initializes and launches `gemm` on `stream`; `problem` describes the call in messages.
template <class Gemm>
int launch(Gemm& gemm, typename Gemm::Arguments const& arguments, void* workspace, cudaStream_t stream,
           const char* problem, char* error, size_t capacity) {
  cutlass::Status status = gemm.can_implement(arguments);
  if (status != cutlass::Status::kSuccess)
    return accel_fail(result_of(status), error, capacity, "CUTLASS cannot run %s with this kernel: %s", problem,
                cutlass::cutlassGetStatusString(status));
  status = gemm.initialize(arguments, workspace, stream);
  if (status != cutlass::Status::kSuccess) {
    const cudaError_t cuda = cudaPeekAtLastError();
    return accel_fail(status == cutlass::Status::kErrorInternal ? kAccelCudaError : result_of(status), error, capacity,
                "CUTLASS initialize failed for %s: %s (%s)", problem, cutlass::cutlassGetStatusString(status),
                cudaGetErrorString(cuda));
  }
  status = gemm.run(stream);
  if (status != cutlass::Status::kSuccess) {
    const cudaError_t cuda = cudaPeekAtLastError();
    return accel_fail(status == cutlass::Status::kErrorInternal ? kAccelCudaError : result_of(status), error, capacity,
                "CUTLASS kernel launch failed for %s: %s (%s)", problem, cutlass::cutlassGetStatusString(status),
                cudaGetErrorString(cuda));
  }
  return kAccelOk;
}

}  // namespace accel_module

)cu";

}  // namespace

std::string_view gemm_common_head() { return kCommonHead; }

std::string common_aliases(DType input, DType output, Layout layout_a, Layout layout_b, Layout layout_c, bool source,
                           const TileConfig& tile, bool grouped) {
  std::string out;
  out += fmt::format(
      "// A: m x k, {0}; B: k x n, {1}; C and D: m x n, {2}.\n"
      "using ElementA = {3};\n"
      "using LayoutA = {4};\n"
      "constexpr int AlignmentA = 128 / cutlass::sizeof_bits<ElementA>::value;  // 16 bytes, for TMA\n"
      "using ElementB = {3};\n"
      "using LayoutB = {5};\n"
      "constexpr int AlignmentB = 128 / cutlass::sizeof_bits<ElementB>::value;\n",
      layout_words(layout_a), layout_words(layout_b), layout_words(layout_c), cutlass_element(input),
      layout_tag(layout_a), layout_tag(layout_b));
  if (source) {
    out += fmt::format("using ElementC = {};\n", cutlass_element(output));
  } else {
    out += "using ElementC = void;  // the instance reads no C\n";
  }
  out += fmt::format(
      "using ElementD = {0};\n"
      "using LayoutC = {1};\n"
      "using LayoutD = LayoutC;\n"
      "constexpr int AlignmentD = 128 / cutlass::sizeof_bits<ElementD>::value;\n"
      "constexpr int AlignmentC = AlignmentD;\n"
      "using ElementAccumulator = float;\n"
      "using ElementCompute = float;\n"
      "using ElementScalar = float;\n"
      "constexpr auto RoundStyle = cutlass::FloatRoundStyle::round_to_nearest;\n"
      "\n"
      "using TileShape = {2};\n"
      "using ClusterShape = {3};\n"
      "using KernelSchedule = {4};\n"
      "using EpilogueSchedule = {5};\n"
      "using EpilogueTileType = cutlass::epilogue::collective::EpilogueTileAuto;\n",
      cutlass_element(output), layout_tag(layout_c), tile_shape(tile), cluster_shape(tile),
      mainloop_schedule(tile.schedule, grouped, input), epilogue_schedule(tile.schedule, grouped));
  return out;
}

std::string kernel_aliases(bool grouped) {
  const std::string_view pointer = grouped ? " *" : "";
  return fmt::format(
      "using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<\n"
      "    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,\n"
      "    TileShape, ClusterShape, EpilogueTileType,\n"
      "    ElementAccumulator, ElementCompute,\n"
      "    ElementC, LayoutC{0}, AlignmentC,\n"
      "    ElementD, LayoutD{0}, AlignmentD,\n"
      "    EpilogueSchedule, EpilogueOp>::CollectiveOp;\n"
      "\n"
      "using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<\n"
      "    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,\n"
      "    ElementA, LayoutA{0}, AlignmentA,\n"
      "    ElementB, LayoutB{0}, AlignmentB,\n"
      "    ElementAccumulator, TileShape, ClusterShape,\n"
      "    cutlass::gemm::collective::StageCountAutoCarveout<\n"
      "        static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>,\n"
      "    KernelSchedule>::CollectiveOp;\n"
      "\n"
      "using GemmKernel = cutlass::gemm::kernel::GemmUniversal<{1}, CollectiveMainloop, CollectiveEpilogue>;\n"
      "using Gemm = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;\n",
      pointer, grouped ? "ProblemShape" : "Shape<int, int, int, int>");
}

}  // namespace accel::jit::cutlass
