// GEMM and grouped GEMM instances: what CUTLASS can build, and the .cu text of their modules.
//
// Both families are CUTLASS 3.x GemmUniversal kernels for sm_90 assembled by the collective builders: a TMA
// warp-specialised mainloop (cooperative or ping-pong) and a TMA epilogue. The GEMM's epilogue is the formula
// of module_abi.hpp as an epilogue visitor tree (EVT), only the nodes the instance asks for; the plain linear
// combination uses CUTLASS's built-in fusion operation. The grouped GEMM is the pointer-array kernel with a
// linear-combination epilogue; its per-group arrays live in the caller's workspace.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "jit/cutlass/render_parts.hpp"

namespace accel::jit::cutlass {
namespace {

// -- validation ------------------------------------------------------------------------------------------------

constexpr int kSm90SmemBytes = 232448;  // what one block may use on sm_90 (CUTLASS's sm90_smem_capacity_bytes)

struct EpilogueSmem {
  bool source = true;
  bool residual = false;
  int row_vectors_bytes = 0;  // vectors broadcast along m and staged in shared memory: one tile_n slice each
};

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

// Replaces each `$name$` of `text` by its value.
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

// The stride expression of an operand from its leading dimension, in CUTLASS's mode order (A: m,k; B: n,k;
// C and D: m,n; then the batch, one matrix further on).
std::string stride_expression(bool contiguous_first, std::string_view ld, std::string_view rows) {
  if (contiguous_first) return fmt::format("cute::make_stride(cute::Int<1>{{}}, {0}, {0} * {1})", ld, rows);
  return fmt::format("cute::make_stride({0}, cute::Int<1>{{}}, {0} * {1})", ld, rows);
}

// The part of every module after the prologue that does not depend on the instance: includes and helpers.
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

// The instance's element, layout, tile and schedule aliases, shared by both families.
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

// The collective builders and the kernel, after `EpilogueOp` is defined.
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

// -- the GEMM's epilogue visitor tree ----------------------------------------------------------------------------

// One node of the tree: a named alias (or an inline type for leaves) and the initializer of its arguments.
struct EvtNode {
  std::string type;               // the type as written where the node is used
  std::string comment;            // what the node computes
  std::string leaf_arguments;     // leaves: their arguments' initializer
  std::vector<EvtNode> children;  // inner nodes: the inputs, in order
  std::string compute_arguments = "{}";
};

void render_arguments(const EvtNode& node, int indent, bool comma, std::string& out) {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  const std::string_view separator = comma ? "," : "";
  if (node.children.empty()) {
    out += fmt::format("{}{}{}  // {}\n", pad, node.leaf_arguments, separator, node.comment);
    return;
  }
  out += fmt::format("{}{{  // {}\n", pad, node.comment);
  for (const EvtNode& child : node.children) render_arguments(child, indent + 2, true, out);
  out += fmt::format("{}  {}   // the node's own operation\n", pad, node.compute_arguments);
  out += fmt::format("{}}}{}\n", pad, separator);
}

std::string_view activation_functor(Activation activation) {
  switch (activation) {
    case Activation::relu: return "cutlass::epilogue::thread::ReLu";
    case Activation::gelu_tanh: return "cutlass::epilogue::thread::GELU_taylor";
    case Activation::silu: return "cutlass::epilogue::thread::SiLu";
    case Activation::identity:
    case Activation::gelu_erf:
    case Activation::sigmoid:
    case Activation::tanh:
    case Activation::log1p_relu: break;  // identity has no node; check_cutlass_gemm refuses the others
  }
  return "";
}

bool plain_linear_combination(const EpilogueSpec& e) {
  return e.activation == Activation::identity && e.bias == BiasKind::none && !e.row_scale && !e.col_scale &&
         !e.residual;
}

std::string formula(const EpilogueSpec& e) {
  std::string inner = "alpha * acc";
  if (e.row_scale) inner += " * row_scale[m]";
  if (e.col_scale) inner += " * col_scale[n]";
  if (e.source) inner += " + beta * C";
  if (e.bias == BiasKind::per_row) inner += " + bias[m]";
  if (e.bias == BiasKind::per_column) inner += " + bias[n]";
  std::string out =
      e.activation == Activation::identity ? inner : fmt::format("{}({})", to_string(e.activation), inner);
  if (e.residual) out += " + residual";
  return "D = " + out;
}

// The EpilogueOp alias (and the aliases it is built from) and the body of the function that fills its arguments.
struct RenderedEpilogue {
  std::string aliases;
  std::string arguments_body;
};

RenderedEpilogue render_epilogue(const GemmInstance& instance) {
  const EpilogueSpec& e = instance.epilogue;
  RenderedEpilogue out;
  if (plain_linear_combination(e)) {
    if (e.source) {
      out.aliases =
          "// Epilogue: D = alpha * acc + beta * C (CUTLASS's linear combination; skips reading C when beta is 0).\n"
          "using EpilogueOp = cutlass::epilogue::fusion::LinearCombination<\n"
          "    ElementD, ElementCompute, ElementC, ElementScalar, RoundStyle>;\n";
      out.arguments_body =
          "  EpilogueArguments arguments{};\n"
          "  arguments.alpha = args.alpha;\n"
          "  arguments.beta = args.beta;\n"
          "  return arguments;\n";
    } else {
      out.aliases =
          "// Epilogue: D = alpha * acc (CUTLASS's scaled accumulator; no C).\n"
          "using EpilogueOp = cutlass::epilogue::fusion::ScaledAcc<ElementD, ElementCompute, ElementScalar, "
          "RoundStyle>;\n";
      out.arguments_body =
          "  EpilogueArguments arguments{};\n"
          "  arguments.alpha = args.alpha;\n"
          "  return arguments;\n";
    }
    return out;
  }

  std::string& a = out.aliases;
  a += fmt::format("// Epilogue visitor tree: {}\n", formula(e));
  a += "namespace fusion = cutlass::epilogue::fusion;\n";
  a += "template <template <class> class Op, class Output = ElementCompute>\n"
       "using Compute = fusion::Sm90Compute<Op, Output, ElementCompute, RoundStyle>;\n";
  if (e.residual) {
    a += "// The residual is read like C (TMA, the same pipeline), so its node takes the epilogue's tiling.\n"
         "using EpilogueDescriptor = cutlass::epilogue::collective::detail::EpilogueDescriptor<\n"
         "    TileShape, EpilogueTileType, ElementC, ElementD, EpilogueSchedule>;\n"
         "using ResidualDescriptor =\n"
         "    cutlass::epilogue::collective::detail::AuxLoadDescriptor<EpilogueDescriptor, LayoutD, ElementD>;\n";
  }
  a += "\n// Leaves\n";
  a += "using Alpha = fusion::Sm90ScalarBroadcast<ElementScalar>;\n";
  if (e.source) a += "using Beta = fusion::Sm90ScalarBroadcast<ElementScalar>;\n";
  if (e.row_scale)
    a += "using RowScale = fusion::Sm90ColBroadcast<0, TileShape, float, ElementCompute, Stride<_1, _0, int64_t>>;"
         "  // one per row\n";
  if (e.col_scale)
    a += "using ColScale = fusion::Sm90RowBroadcast<0, TileShape, float, ElementCompute, Stride<_0, _1, int64_t>>;"
         "  // one per column\n";
  if (e.bias == BiasKind::per_row)
    a += "using Bias = fusion::Sm90ColBroadcast<0, TileShape, ElementD, ElementCompute, Stride<_1, _0, int64_t>>;"
         "  // one per row\n";
  if (e.bias == BiasKind::per_column)
    a += "using Bias = fusion::Sm90RowBroadcast<0, TileShape, ElementD, ElementCompute, Stride<_0, _1, int64_t>>;"
         "  // one per column\n";
  if (e.residual)
    a += "using Residual = fusion::Sm90AuxLoad<\n"
         "    ResidualDescriptor::Stages, typename EpilogueDescriptor::EpilogueTile, ElementD,\n"
         "    typename ResidualDescriptor::Stride, typename ResidualDescriptor::SmemLayoutAtom,\n"
         "    typename ResidualDescriptor::CopyOpS2R>;  // m x n, D's layout\n";

  // The chain, innermost first; the last node writes ElementD.
  struct Step {
    std::string name;
    std::string op;               // the Compute functor
    std::vector<EvtNode> inputs;  // with the previous node spliced in where `previous_at` says
    int previous_at;
    std::string comment;
  };
  const EvtNode alpha{.type = "Alpha", .comment = "alpha", .leaf_arguments = "{{args.alpha}}", .children = {}};
  const EvtNode acc{.type = "fusion::Sm90AccFetch", .comment = "acc", .leaf_arguments = "{}", .children = {}};
  std::vector<Step> steps;
  steps.push_back({"AlphaAcc", "cutlass::multiplies", {alpha, acc}, -1, "alpha * acc"});
  if (e.row_scale)
    steps.push_back({"RowScaled",
                     "cutlass::multiplies",
                     {EvtNode{.type = "RowScale", .comment = "row_scale[m]", .leaf_arguments = "{args.row_scale}"}},
                     0,
                     "... * row_scale[m]"});
  if (e.col_scale)
    steps.push_back({"ColScaled",
                     "cutlass::multiplies",
                     {EvtNode{.type = "ColScale", .comment = "col_scale[n]", .leaf_arguments = "{args.col_scale}"}},
                     0,
                     "... * col_scale[n]"});
  if (e.source)
    steps.push_back({"WithSource",
                     "cutlass::homogeneous_multiply_add",
                     {EvtNode{.type = "Beta", .comment = "beta", .leaf_arguments = "{{args.beta}}"},
                      EvtNode{.type = "fusion::Sm90SrcFetch<ElementC>", .comment = "C", .leaf_arguments = "{}"}},
                     2,
                     "beta * C + ... (C is not read when beta is 0)"});
  if (e.bias != BiasKind::none)
    steps.push_back({"WithBias",
                     "cutlass::plus",
                     {EvtNode{.type = "Bias",
                              .comment = e.bias == BiasKind::per_row ? "bias[m]" : "bias[n]",
                              .leaf_arguments = "{static_cast<ElementD const*>(args.bias)}"}},
                     0,
                     "... + bias"});
  if (e.activation != Activation::identity)
    steps.push_back({"Activated",
                     std::string(activation_functor(e.activation)),
                     {},
                     0,
                     fmt::format("{}(...)", to_string(e.activation))});
  if (e.residual)
    steps.push_back(
        {"WithResidual",
         "cutlass::plus",
         {EvtNode{.type = "Residual",
                  .comment = "residual",
                  .leaf_arguments = "{static_cast<ElementD const*>(args.residual), ElementD(0), stride_d}"}},
         0,
         "... + residual"});

  a += "\n// Nodes, innermost first: Sm90EVT<operation, inputs...>\n";
  EvtNode previous;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    Step& step = steps[i];
    const bool root = i + 1 == steps.size();
    std::vector<EvtNode> inputs = step.inputs;
    if (step.previous_at >= 0) inputs.insert(inputs.begin() + step.previous_at, previous);
    std::string input_types;
    for (const EvtNode& input : inputs) input_types += ", " + input.type;
    a += fmt::format("using {} = fusion::Sm90EVT<Compute<{}{}>{}>;  // {}\n", step.name, step.op,
                     root ? ", ElementD" : "", input_types, step.comment);
    previous = EvtNode{.type = step.name, .comment = step.comment, .leaf_arguments = "", .children = inputs};
  }
  a += fmt::format("using EpilogueOp = {};\n", steps.back().name);

  std::string& body = out.arguments_body;
  body += "  return\n";
  render_arguments(previous, 4, false, body);
  body.insert(body.size() - 1, ";");
  return out;
}

// -- GEMM module -------------------------------------------------------------------------------------------------

constexpr std::string_view kGemmEntryPoints = R"cu(namespace accel_module {

using EpilogueArguments = typename CollectiveEpilogue::FusionCallbacks::Arguments;

// The epilogue's arguments: the visitor tree's, nested as the tree is (each node: its inputs, then its own).
inline EpilogueArguments epilogue_arguments(const AccelGemmArgs& args, typename GemmKernel::StrideD stride_d) {
  (void)stride_d;
$EPILOGUE_ARGUMENTS$}

// The problem size: not negative and within CUTLASS's int extents. `empty` when there is nothing to compute.
inline int check_shape(const AccelGemmArgs& args, bool& empty, char* error, size_t capacity) {
  if (args.m < 0 || args.n < 0 || args.k < 0)
    return accel_fail(kAccelInvalidArgument, error, capacity, "negative GEMM size m=%lld n=%lld k=%lld", ll(args.m),
                ll(args.n), ll(args.k));
  if (args.m > INT_MAX || args.n > INT_MAX || args.k > INT_MAX)
    return accel_fail(kAccelNotSupported, error, capacity, "GEMM size m=%lld n=%lld k=%lld exceeds CUTLASS's int extents",
                ll(args.m), ll(args.n), ll(args.k));
  empty = args.m == 0 || args.n == 0;
  if (!empty && args.k == 0)
    return accel_fail(kAccelNotSupported, error, capacity, "k = 0 (m=%lld n=%lld) is not supported by this kernel",
                ll(args.m), ll(args.n));
  return kAccelOk;
}

// The kernel's arguments from the call's. With `check`, the operands are checked first (presence, alignment,
// leading dimensions); without, only the problem size matters (the workspace query).
inline int make_arguments(const AccelGemmArgs& call, bool check, typename Gemm::Arguments& arguments, char* error,
                          size_t capacity) {
  AccelGemmArgs args = call;
  int result = kAccelOk;
  if (check) {
$OPERAND_CHECKS$  }
  // Strides in CUTLASS's mode order (A: m, k; B: n, k; C and D: m, n), then the batch: one matrix further on.
  const typename GemmKernel::StrideA stride_a = $STRIDE_A$;
  const typename GemmKernel::StrideB stride_b = $STRIDE_B$;
  const typename GemmKernel::StrideC stride_c = $STRIDE_C$;
  const typename GemmKernel::StrideD stride_d = $STRIDE_D$;
  arguments = typename Gemm::Arguments{
      cutlass::gemm::GemmUniversalMode::kGemm,
      {static_cast<int>(args.m), static_cast<int>(args.n), static_cast<int>(args.k), 1},
      {static_cast<ElementA const*>(args.a), stride_a, static_cast<ElementB const*>(args.b), stride_b},
      {epilogue_arguments(args, stride_d), $C_POINTER$, stride_c, static_cast<ElementD*>(args.d), stride_d}};
  return result;
}

}  // namespace accel_module

extern "C" int accel_workspace_bytes(const void* args, size_t* bytes, char* error, size_t error_capacity) {
  using namespace accel_module;
  if (args == nullptr || bytes == nullptr)
    return accel_fail(kAccelInvalidArgument, error, error_capacity, "accel_workspace_bytes: args and bytes must not be null");
  return accel_guarded("accel_workspace_bytes", error, error_capacity, [&]() -> int {
      const AccelGemmArgs& call = *static_cast<const AccelGemmArgs*>(args);
      bool empty = false;
      if (int result = check_shape(call, empty, error, error_capacity); result != kAccelOk) return result;
      *bytes = 0;
      if (empty) return kAccelOk;
      typename Gemm::Arguments arguments;
      if (int result = make_arguments(call, false, arguments, error, error_capacity); result != kAccelOk) return result;
      *bytes = Gemm::get_workspace_size(arguments);
      return kAccelOk;
  });
}

extern "C" int accel_run(const void* args, void* workspace, size_t workspace_bytes, cudaStream_t stream,
                         char* error, size_t error_capacity) {
  using namespace accel_module;
  if (args == nullptr) return accel_fail(kAccelInvalidArgument, error, error_capacity, "accel_run: args is null");
  return accel_guarded("accel_run", error, error_capacity, [&]() -> int {
      const AccelGemmArgs& call = *static_cast<const AccelGemmArgs*>(args);
      bool empty = false;
      if (int result = check_shape(call, empty, error, error_capacity); result != kAccelOk) return result;
      if (empty) return kAccelOk;
      typename Gemm::Arguments arguments;
      if (int result = make_arguments(call, true, arguments, error, error_capacity); result != kAccelOk) return result;
      DeviceInfo device;
      if (int result = query_device<GemmKernel>(device, error, error_capacity); result != kAccelOk) return result;
      arguments.hw_info.device_id = device.device;
      arguments.hw_info.sm_count = device.sm_count;
      arguments.hw_info.max_active_clusters = device.max_active_clusters;
      const size_t needed = Gemm::get_workspace_size(arguments);
      if (workspace_bytes < needed || (needed > 0 && workspace == nullptr))
        return accel_fail(kAccelInvalidArgument, error, error_capacity, "the workspace has %zu bytes at %p; this GEMM needs %zu",
                    workspace_bytes, workspace, needed);
      char problem[160];
      std::snprintf(problem, sizeof problem, "GEMM m=%lld n=%lld k=%lld (lda=%lld ldb=%lld ldc=%lld ldd=%lld)",
                    ll(call.m), ll(call.n), ll(call.k), ll(call.lda), ll(call.ldb), ll(call.ldc), ll(call.ldd));
      Gemm gemm;
      return launch(gemm, arguments, workspace, stream, problem, error, error_capacity);
  });
}
)cu";

// Checks of the operands the instance reads, in the rendered make_arguments().
std::string gemm_operand_checks(const GemmInstance& instance) {
  const EpilogueSpec& e = instance.epilogue;
  const bool a_row = instance.layout_a == Layout::row_major;
  const bool b_col = instance.layout_b == Layout::column_major;
  const bool c_row = instance.layout_c == Layout::row_major;
  const std::string_view c_extent = c_row ? "args.n" : "args.m";
  std::string out;
  const auto check = [&out](std::string_view name, std::string_view pointer, std::string_view ld,
                            std::string_view extent, std::string_view alignment) {
    out += fmt::format(
        "    if ((result = check_matrix(\"{0}\", {1}, \"{2}\", args.{2}, {3}, {4}, error, capacity)) != kAccelOk)\n"
        "      return result;\n",
        name, pointer, ld, extent, alignment);
  };
  check(a_row ? "A (m x k, row-major)" : "A (m x k, column-major)", "args.a", "lda", a_row ? "args.k" : "args.m",
        "AlignmentA");
  check(b_col ? "B (k x n, column-major)" : "B (k x n, row-major)", "args.b", "ldb", b_col ? "args.k" : "args.n",
        "AlignmentB");
  check("D", "args.d", "ldd", c_extent, "AlignmentD");
  if (e.source) {
    out +=
        "    // With beta 0 the kernel never reads C; an absent C then takes D's place so that its TMA descriptor\n"
        "    // still describes real memory.\n"
        "    if (args.c == nullptr && args.beta == 0.0f) {\n"
        "      args.c = args.d;\n"
        "      args.ldc = args.ldd;\n"
        "    }\n";
    check("C", "args.c", "ldc", c_extent, "AlignmentC");
  }
  if (e.residual) check("residual", "args.residual", "ldd", c_extent, "AlignmentD");
  const auto vector = [&out](std::string_view name, std::string_view pointer, std::string_view type) {
    out += fmt::format(
        "    if ({1} == nullptr) return accel_fail(kAccelInvalidArgument, error, capacity, \"{0} is null\");\n"
        "    if (reinterpret_cast<uintptr_t>({1}) % alignof({2}) != 0)\n"
        "      return accel_fail(kAccelInvalidArgument, error, capacity, \"{0} is not aligned to its element\");\n",
        name, pointer, type);
  };
  if (e.bias == BiasKind::per_row) vector("bias (m elements)", "args.bias", "ElementD");
  if (e.bias == BiasKind::per_column) vector("bias (n elements)", "args.bias", "ElementD");
  if (e.row_scale) vector("row_scale (m floats)", "args.row_scale", "float");
  if (e.col_scale) vector("col_scale (n floats)", "args.col_scale", "float");
  return out;
}

// -- grouped GEMM module -----------------------------------------------------------------------------------------

constexpr std::string_view kGroupedEntryPoints = R"cu(namespace accel_module {

using StrideA = typename GemmKernel::InternalStrideA;
using StrideB = typename GemmKernel::InternalStrideB;
using StrideC = typename GemmKernel::InternalStrideC;
using StrideD = typename GemmKernel::InternalStrideD;
using GroupShape = typename ProblemShape::UnderlyingProblemShape;  // (m, n, k) of one group

// The workspace: the per-group arrays the kernel reads (shapes, pointers, strides), then the kernel's own
// workspace. Offsets are from the first 256-byte boundary of the caller's workspace.
struct WorkspaceLayout {
  static constexpr size_t kAlignment = 256;
  static size_t round_up(size_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

  explicit WorkspaceLayout(size_t groups) {
    size_t at = 0;
    const auto place = [&at](size_t bytes) {
      const size_t offset = at;
      at = round_up(at + bytes);
      return offset;
    };
    shapes = place(groups * sizeof(GroupShape));
    ptr_a = place(groups * sizeof(ElementA const*));
    ptr_b = place(groups * sizeof(ElementB const*));
    ptr_c = place(groups * sizeof(ElementC const*));
    ptr_d = place(groups * sizeof(ElementD*));
    stride_a = place(groups * sizeof(StrideA));
    stride_b = place(groups * sizeof(StrideB));
    stride_c = place(groups * sizeof(StrideC));
    stride_d = place(groups * sizeof(StrideD));
    arrays_bytes = at;
  }

  size_t shapes, ptr_a, ptr_b, ptr_c, ptr_d, stride_a, stride_b, stride_c, stride_d;
  size_t arrays_bytes;  // the kernel's workspace starts here
};

// The call's arrays, checked, as the kernel takes them (on the host).
struct HostGroups {
  std::vector<GroupShape> shapes;
  std::vector<ElementA const*> ptr_a;
  std::vector<ElementB const*> ptr_b;
  std::vector<ElementC const*> ptr_c;
  std::vector<ElementD*> ptr_d;
  std::vector<StrideA> stride_a;
  std::vector<StrideB> stride_b;
  std::vector<StrideC> stride_c;
  std::vector<StrideD> stride_d;
  bool empty = true;  // no group has anything to compute
};

inline int read_groups(const AccelGroupedGemmArgs& args, bool check_operands, HostGroups& out, char* error,
                       size_t capacity) {
  if (args.groups <= 0)
    return accel_fail(kAccelInvalidArgument, error, capacity, "groups = %d; a grouped GEMM needs at least one",
                static_cast<int>(args.groups));
  if (args.m == nullptr || args.n == nullptr || args.k == nullptr)
    return accel_fail(kAccelInvalidArgument, error, capacity, "the host arrays m, n and k must not be null");
  if (check_operands && (args.a == nullptr || args.b == nullptr || args.d == nullptr || args.lda == nullptr ||
                         args.ldb == nullptr || args.ldd == nullptr))
    return accel_fail(kAccelInvalidArgument, error, capacity, "the host arrays a, b, d, lda, ldb and ldd must not be null");
  const bool c_from_d = args.c == nullptr || args.ldc == nullptr;
  if (check_operands && c_from_d && args.beta != 0.0f)
    return accel_fail(kAccelInvalidArgument, error, capacity, "beta is %g but the host arrays c or ldc are null",
                static_cast<double>(args.beta));
  const size_t groups = static_cast<size_t>(args.groups);
  out.shapes.resize(groups);
  if (check_operands) {
    out.ptr_a.resize(groups);
    out.ptr_b.resize(groups);
    out.ptr_c.resize(groups);
    out.ptr_d.resize(groups);
    out.stride_a.resize(groups);
    out.stride_b.resize(groups);
    out.stride_c.resize(groups);
    out.stride_d.resize(groups);
  }
  int result = kAccelOk;
  char name[96];
  char ld_name[32];
  for (size_t g = 0; g < groups; ++g) {
    const int64_t m = args.m[g], n = args.n[g], k = args.k[g];
    if (m < 0 || n < 0 || k < 0)
      return accel_fail(kAccelInvalidArgument, error, capacity, "group %zu: negative size m=%lld n=%lld k=%lld", g, ll(m),
                  ll(n), ll(k));
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX)
      return accel_fail(kAccelNotSupported, error, capacity, "group %zu: size m=%lld n=%lld k=%lld exceeds CUTLASS's int "
                  "extents", g, ll(m), ll(n), ll(k));
    const bool empty = m == 0 || n == 0;
    if (!empty && k == 0)
      return accel_fail(kAccelNotSupported, error, capacity, "group %zu: k = 0 (m=%lld n=%lld) is not supported by this "
                  "kernel", g, ll(m), ll(n));
    out.shapes[g] = GroupShape{static_cast<int>(m), static_cast<int>(n), static_cast<int>(k)};
    if (!empty) out.empty = false;
    if (!check_operands || empty) continue;  // an empty group's operands are never read
    const void* c = c_from_d ? args.d[g] : args.c[g];
    const int64_t ldc = c_from_d ? args.ldd[g] : args.ldc[g];
$GROUP_CHECKS$    out.ptr_a[g] = static_cast<ElementA const*>(args.a[g]);
    out.ptr_b[g] = static_cast<ElementB const*>(args.b[g]);
    out.ptr_c[g] = static_cast<ElementC const*>(c);
    out.ptr_d[g] = static_cast<ElementD*>(args.d[g]);
    out.stride_a[g] = $STRIDE_A$;
    out.stride_b[g] = $STRIDE_B$;
    out.stride_c[g] = $STRIDE_C$;
    out.stride_d[g] = $STRIDE_D$;
  }
  return kAccelOk;
}

// The kernel's arguments; `base` is the 256-byte aligned start of the workspace (null for size queries).
inline typename Gemm::Arguments make_arguments(const AccelGroupedGemmArgs& args, const HostGroups& groups,
                                               const WorkspaceLayout& layout, char* base, const DeviceInfo& device) {
  const auto at = [base](size_t offset) -> void* { return base == nullptr ? nullptr : base + offset; };
  typename Gemm::Arguments arguments{
      cutlass::gemm::GemmUniversalMode::kGrouped,
      {args.groups, static_cast<GroupShape*>(at(layout.shapes)), groups.shapes.data()},
      {static_cast<ElementA const**>(at(layout.ptr_a)), static_cast<StrideA*>(at(layout.stride_a)),
       static_cast<ElementB const**>(at(layout.ptr_b)), static_cast<StrideB*>(at(layout.stride_b))},
      {{}, static_cast<ElementC const**>(at(layout.ptr_c)), static_cast<StrideC*>(at(layout.stride_c)),
       static_cast<ElementD**>(at(layout.ptr_d)), static_cast<StrideD*>(at(layout.stride_d))}};
  auto& fusion = arguments.epilogue.thread;
  fusion.alpha = args.alpha;
  fusion.beta = args.beta;
  fusion.alpha_ptr = nullptr;
  fusion.beta_ptr = nullptr;
  fusion.alpha_ptr_array = nullptr;
  fusion.beta_ptr_array = nullptr;
  fusion.dAlpha = {cute::_0{}, cute::_0{}, 0};
  fusion.dBeta = {cute::_0{}, cute::_0{}, 0};
  arguments.hw_info.device_id = device.device;
  arguments.hw_info.sm_count = device.sm_count;
  arguments.hw_info.max_active_clusters = device.max_active_clusters;
  return arguments;
}

template <class T>
void pack(std::vector<char>& bytes, size_t offset, const std::vector<T>& values) {
  if (!values.empty()) std::memcpy(bytes.data() + offset, values.data(), values.size() * sizeof(T));
}

}  // namespace accel_module

extern "C" int accel_workspace_bytes(const void* args, size_t* bytes, char* error, size_t error_capacity) {
  using namespace accel_module;
  if (args == nullptr || bytes == nullptr)
    return accel_fail(kAccelInvalidArgument, error, error_capacity, "accel_workspace_bytes: args and bytes must not be null");
  return accel_guarded("accel_workspace_bytes", error, error_capacity, [&]() -> int {
      const AccelGroupedGemmArgs& call = *static_cast<const AccelGroupedGemmArgs*>(args);
      HostGroups groups;
      if (int result = read_groups(call, false, groups, error, error_capacity); result != kAccelOk) return result;
      DeviceInfo device;
      if (int result = query_device<GemmKernel>(device, error, error_capacity); result != kAccelOk) return result;
      const WorkspaceLayout layout(groups.shapes.size());
      const typename Gemm::Arguments arguments = make_arguments(call, groups, layout, nullptr, device);
      *bytes = WorkspaceLayout::kAlignment + layout.arrays_bytes + Gemm::get_workspace_size(arguments);
      return kAccelOk;
  });
}

extern "C" int accel_run(const void* args, void* workspace, size_t workspace_bytes, cudaStream_t stream,
                         char* error, size_t error_capacity) {
  using namespace accel_module;
  if (args == nullptr) return accel_fail(kAccelInvalidArgument, error, error_capacity, "accel_run: args is null");
  return accel_guarded("accel_run", error, error_capacity, [&]() -> int {
      const AccelGroupedGemmArgs& call = *static_cast<const AccelGroupedGemmArgs*>(args);
      HostGroups groups;
      if (int result = read_groups(call, true, groups, error, error_capacity); result != kAccelOk) return result;
      if (groups.empty) return kAccelOk;
      DeviceInfo device;
      if (int result = query_device<GemmKernel>(device, error, error_capacity); result != kAccelOk) return result;
      const WorkspaceLayout layout(groups.shapes.size());
      if (workspace == nullptr)
        return accel_fail(kAccelInvalidArgument, error, error_capacity, "a grouped GEMM needs a workspace (it holds the "
                    "per-group arrays)");
      const uintptr_t address = reinterpret_cast<uintptr_t>(workspace);
      const size_t padding = (WorkspaceLayout::kAlignment - address % WorkspaceLayout::kAlignment) %
                             WorkspaceLayout::kAlignment;
      char* base = static_cast<char*>(workspace) + padding;
      const typename Gemm::Arguments arguments = make_arguments(call, groups, layout, base, device);
      const size_t needed = padding + layout.arrays_bytes + Gemm::get_workspace_size(arguments);
      if (workspace_bytes < needed)
        return accel_fail(kAccelInvalidArgument, error, error_capacity, "the workspace has %zu bytes at %p; this grouped "
                    "GEMM needs %zu", workspace_bytes, workspace, needed);
      // The arrays go to the device in stream order. cudaMemcpyAsync stages pageable memory before it returns,
      // so the host copy may go away at once.
      std::vector<char> host(layout.arrays_bytes, 0);
      pack(host, layout.shapes, groups.shapes);
      pack(host, layout.ptr_a, groups.ptr_a);
      pack(host, layout.ptr_b, groups.ptr_b);
      pack(host, layout.ptr_c, groups.ptr_c);
      pack(host, layout.ptr_d, groups.ptr_d);
      pack(host, layout.stride_a, groups.stride_a);
      pack(host, layout.stride_b, groups.stride_b);
      pack(host, layout.stride_c, groups.stride_c);
      pack(host, layout.stride_d, groups.stride_d);
      const cudaError_t copied = cudaMemcpyAsync(base, host.data(), host.size(), cudaMemcpyHostToDevice, stream);
      if (copied != cudaSuccess)
        return accel_fail(kAccelCudaError, error, error_capacity, "copying the group arrays to the workspace: %s",
                    cudaGetErrorString(copied));
      char problem[96];
      std::snprintf(problem, sizeof problem, "grouped GEMM of %d groups", static_cast<int>(call.groups));
      Gemm gemm;
      return launch(gemm, arguments, base + layout.arrays_bytes, stream, problem, error, error_capacity);
  });
}
)cu";

std::string grouped_checks(const GroupedGemmInstance& instance) {
  const bool a_row = instance.layout_a == Layout::row_major;
  const bool b_col = instance.layout_b == Layout::column_major;
  const bool c_row = instance.layout_c == Layout::row_major;
  std::string out;
  const auto check = [&out](std::string_view name, std::string_view pointer, std::string_view ld_name,
                            std::string_view ld, std::string_view extent, std::string_view alignment) {
    out += fmt::format(
        "    std::snprintf(name, sizeof name, \"group %zu: {0}\", g);\n"
        "    std::snprintf(ld_name, sizeof ld_name, \"{1}[%zu]\", g);\n"
        "    if ((result = check_matrix(name, {2}, ld_name, {3}, {4}, {5}, error, capacity)) != kAccelOk) "
        "return result;\n",
        name, ld_name, pointer, ld, extent, alignment);
  };
  check(a_row ? "A (m x k, row-major)" : "A (m x k, column-major)", "args.a[g]", "lda", "args.lda[g]",
        a_row ? "k" : "m", "AlignmentA");
  check(b_col ? "B (k x n, column-major)" : "B (k x n, row-major)", "args.b[g]", "ldb", "args.ldb[g]",
        b_col ? "k" : "n", "AlignmentB");
  check("C", "c", "ldc", "ldc", c_row ? "n" : "m", "AlignmentD");
  check("D", "args.d[g]", "ldd", "args.ldd[g]", c_row ? "n" : "m", "AlignmentD");
  return out;
}

}  // namespace

Status validate_gemm(const GemmInstance& instance) {
  ACCEL_RETURN_IF_ERROR(validate_types("gemm", instance.arch, instance.input, instance.output, instance.layout_a,
                                       instance.layout_b, instance.tile));
  const EpilogueSpec& e = instance.epilogue;
  int row_vectors = 0;
  if (e.bias == BiasKind::per_column) row_vectors += instance.tile.tile_n * static_cast<int>(size_of(instance.output));
  if (e.col_scale) row_vectors += instance.tile.tile_n * 4;
  const int epilogue =
      epilogue_smem_bytes(instance.tile, instance.output,
                          EpilogueSmem{.source = e.source, .residual = e.residual, .row_vectors_bytes = row_vectors});
  return validate_tile("gemm", instance.input, instance.tile, epilogue, 0);
}

Status validate_grouped_gemm(const GroupedGemmInstance& instance) {
  ACCEL_RETURN_IF_ERROR(validate_types("grouped_gemm", instance.arch, instance.input, instance.output,
                                       instance.layout_a, instance.layout_b, instance.tile));
  const int epilogue = epilogue_smem_bytes(instance.tile, instance.output, EpilogueSmem{.source = true});
  // The pointer-array kernel keeps its tensor maps and a scheduler pipeline in shared memory too.
  return validate_tile("grouped_gemm", instance.input, instance.tile, epilogue, 1024);
}

std::string render_gemm(const GemmInstance& instance, std::string_view identity) {
  const EpilogueSpec& e = instance.epilogue;
  const bool c_row = instance.layout_c == Layout::row_major;
  std::string out = module_prologue(identity);
  out += kCommonHead;
  out += "// ---- The instance ----------------------------------------------------------------------------------\n";
  out += fmt::format("// {}\n", identity);
  out += "namespace accel_module {\nusing namespace cute;\n\n";
  out += common_aliases(instance.input, instance.output, instance.layout_a, instance.layout_b, instance.layout_c,
                        e.source, instance.tile, false);
  out += "\n";
  const RenderedEpilogue epilogue = render_epilogue(instance);
  out += epilogue.aliases;
  out += "\n";
  out += kernel_aliases(false);
  out += "\n}  // namespace accel_module\n\n";
  out += "// ---- Entry points ----------------------------------------------------------------------------------\n";
  out += substitute(
      kGemmEntryPoints,
      {
          {"EPILOGUE_ARGUMENTS", epilogue.arguments_body},
          {"OPERAND_CHECKS", gemm_operand_checks(instance)},
          {"STRIDE_A", stride_expression(instance.layout_a == Layout::column_major, "args.lda",
                                         instance.layout_a == Layout::row_major ? "args.m" : "args.k")},
          {"STRIDE_B", stride_expression(instance.layout_b == Layout::row_major, "args.ldb",
                                         instance.layout_b == Layout::column_major ? "args.n" : "args.k")},
          {"STRIDE_C", stride_expression(!c_row, e.source ? "args.ldc" : "args.ldd", c_row ? "args.m" : "args.n")},
          {"STRIDE_D", stride_expression(!c_row, "args.ldd", c_row ? "args.m" : "args.n")},
          {"C_POINTER", e.source ? "static_cast<ElementC const*>(args.c)" : "nullptr"},
      });
  return out;
}

std::string render_grouped_gemm(const GroupedGemmInstance& instance, std::string_view identity) {
  const bool c_row = instance.layout_c == Layout::row_major;
  // Per-group strides have no batch mode (a static 0).
  const auto stride = [](std::string_view type, bool contiguous_first, std::string_view ld) {
    if (contiguous_first) return fmt::format("{}{{cute::Int<1>{{}}, {}, cute::Int<0>{{}}}}", type, ld);
    return fmt::format("{}{{{}, cute::Int<1>{{}}, cute::Int<0>{{}}}}", type, ld);
  };
  std::string out = module_prologue(identity);
  out += kCommonHead;
  out += "// ---- The instance ----------------------------------------------------------------------------------\n";
  out += fmt::format("// {}\n", identity);
  out += "namespace accel_module {\nusing namespace cute;\n\n";
  out += "using ProblemShape = cutlass::gemm::GroupProblemShape<Shape<int, int, int>>;  // (m, n, k) per group\n";
  out += common_aliases(instance.input, instance.output, instance.layout_a, instance.layout_b, instance.layout_c, true,
                        instance.tile, true);
  out += "\n";
  out +=
      "// Epilogue: D_g = alpha * acc + beta * C_g (CUTLASS's linear combination; skips reading C when beta is 0).\n"
      "using EpilogueOp = cutlass::epilogue::fusion::LinearCombination<\n"
      "    ElementD, ElementCompute, ElementC, ElementScalar, RoundStyle>;\n\n";
  out += kernel_aliases(true);
  out += "\n}  // namespace accel_module\n\n";
  out += "// ---- Entry points ----------------------------------------------------------------------------------\n";
  out += substitute(kGroupedEntryPoints,
                    {
                        {"GROUP_CHECKS", grouped_checks(instance)},
                        {"STRIDE_A", stride("StrideA", instance.layout_a == Layout::column_major, "args.lda[g]")},
                        {"STRIDE_B", stride("StrideB", instance.layout_b == Layout::row_major, "args.ldb[g]")},
                        {"STRIDE_C", stride("StrideC", !c_row, "ldc")},
                        {"STRIDE_D", stride("StrideD", !c_row, "args.ldd[g]")},
                    });
  return out;
}

}  // namespace accel::jit::cutlass
