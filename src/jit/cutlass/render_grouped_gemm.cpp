// The grouped GEMM's module: CUTLASS's pointer-array GemmUniversal kernel for sm_90 with a linear-combination
// epilogue, its per-group arrays in the caller's workspace (render_gemm.cpp says what the GEMM families share).
#include <fmt/format.h>

#include <string>
#include <vector>

#include "jit/cutlass/render_gemm_parts.hpp"
#include "jit/cutlass/render_parts.hpp"

namespace accel::jit::cutlass {
namespace {

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

Status validate_grouped_gemm(const GroupedGemmInstance& instance) {
  ACCEL_RETURN_IF_ERROR(validate_types("grouped_gemm", instance.arch, instance.input, instance.output,
                                       instance.layout_a, instance.layout_b, instance.tile));
  const int epilogue = epilogue_smem_bytes(instance.tile, instance.output, EpilogueSmem{.source = true});
  // The pointer-array kernel keeps its tensor maps and a scheduler pipeline in shared memory too.
  return validate_tile("grouped_gemm", instance.input, instance.tile, epilogue, 1024);
}

std::string render_grouped_gemm(const GroupedGemmInstance& instance, std::string_view identity) {
  const bool c_row = instance.layout_c == Layout::row_major;
  // Per-group strides have no batch mode (a static 0).
  const auto stride = [](std::string_view type, bool contiguous_first, std::string_view ld) {
    if (contiguous_first) return fmt::format("{}{{cute::Int<1>{{}}, {}, cute::Int<0>{{}}}}", type, ld);
    return fmt::format("{}{{{}, cute::Int<1>{{}}, cute::Int<0>{{}}}}", type, ld);
  };
  std::string out = module_prologue(identity);
  out += gemm_common_head();
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
