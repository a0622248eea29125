#include "jit/cuda/jit_operation_cuda.hpp"

#include <fmt/format.h>

#include "jit/cutlass/module_abi.hpp"
#include "operation/cuda_status.hpp"

namespace accel {
namespace jit {
namespace {

constexpr std::uint32_t kDefaultSharedMemory = 48 * 1024;

std::string_view kind_name(KernelArg::Kind kind) {
  switch (kind) {
    case KernelArg::Kind::buffer: return "buffer";
    case KernelArg::Kind::i32: return "int32";
    case KernelArg::Kind::u32: return "uint32";
    case KernelArg::Kind::i64: return "int64";
    case KernelArg::Kind::u64: return "uint64";
    case KernelArg::Kind::f32: return "float";
    case KernelArg::Kind::f64: return "double";
  }
  return "?";
}

Result<JitKernels*> kernels_of(CudaTarget& target) {
  ACCEL_ASSIGN_OR_RETURN(JitState * state, target.context_state<JitState>());
  return &state->kernels();
}

// The module of `instance`; nullopt when it is still compiling, the request asked for a library fallback and
// `library_can_answer()` (asked only then, off the path of a loaded module) says a library can.
template <class LibraryCanAnswer>
Result<std::shared_ptr<const CutlassModule>> module_or_fallback(CudaTarget& target, const cutlass::Instance& instance,
                                                                WhenCompiling when,
                                                                LibraryCanAnswer&& library_can_answer) {
  ACCEL_ASSIGN_OR_RETURN(JitKernels * jit, kernels_of(target));
  const std::function<void()> keep_alive = [&target] { target.keep_alive(); };
  // Asked "if ready" only when something else can be done meanwhile, so that "jit-binaries" not_ready counts
  // the answers given without the kernel (library fallbacks and `unavailable`).
  if (when == WhenCompiling::wait) return jit->cutlass_module(instance, true, keep_alive);
  ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<const CutlassModule> module, jit->cutlass_module(instance, false, keep_alive));
  if (module != nullptr) return module;
  if (when == WhenCompiling::unavailable) {
    return Status(Code::unavailable,
                  fmt::format("the CUTLASS kernel [{}] is compiling; ask again later", cutlass::identity(instance)));
  }
  if (library_can_answer()) return module;
  return jit->cutlass_module(instance, true, keep_alive);
}

Status run_module(const CutlassModule& module, const void* args, CudaRun& run) {
  ACCEL_ASSIGN_OR_RETURN(const std::size_t bytes, module.workspace_bytes(args));
  ACCEL_ASSIGN_OR_RETURN(void* workspace, run.target.workspace(bytes));
  return launch_status(run.target, module.run(args, workspace, bytes, run.target.stream()), "CUTLASS");
}

}  // namespace

Result<std::unique_ptr<JitState>> JitState::open(CudaTarget& target) {
  const jit::Options& options = target.jit_options();
  ACCEL_ASSIGN_OR_RETURN(std::unique_ptr<JitKernels> kernels,
                         JitKernels::open({.persistent = options.persistent_kernels,
                                           .directory = options.kernel_directory,
                                           .directory_bytes = options.kernel_directory_bytes,
                                           .compile_threads = static_cast<int>(options.compile_threads),
                                           .compute_capability = target.compute_capability()}));
  return std::make_unique<JitState>(std::move(kernels));
}

void describe_jit(CudaTarget& target, LibraryReport& report) {
  if (JitState* state = target.existing_context_state<JitState>()) {
    for (CacheStats& stats : state->kernels().stats()) report.report(std::move(stats));
  }
}

}  // namespace jit

// -- LaunchKernel -----------------------------------------------------------------------------------------

Result<jit::KernelPlan> CudaOperation<LaunchKernel>::plan(const LaunchKernel& request,
                                                          const Operation<LaunchKernel>::Checked&, CudaTarget& target) {
  ACCEL_ASSIGN_OR_RETURN(jit::JitKernels * kernels, jit::kernels_of(target));
  jit::KernelPlan plan;
  ACCEL_ASSIGN_OR_RETURN(plan.program, kernels->program(request.program));
  ACCEL_ASSIGN_OR_RETURN(plan.kernel, plan.program->kernel(request.kernel, request.program->name));
  const std::vector<std::size_t>& sizes = plan.kernel->parameter_sizes;
  if (sizes.size() != request.args.size()) {
    return invalid_argument(fmt::format("LaunchKernel {}: the kernel takes {} parameters, the request passes {}",
                                        request.kernel, sizes.size(), request.args.size()));
  }
  for (std::size_t i = 0; i < request.args.size(); ++i) {
    const KernelArg& arg = request.args[i];
    if (arg.size() != sizes[i]) {
      return invalid_argument(
          fmt::format("LaunchKernel {}: argument {} is a {} of {} bytes, the kernel's parameter {} "
                      "takes {} bytes",
                      request.kernel, i, jit::kind_name(arg.kind), arg.size(), i, sizes[i]));
    }
  }
  return plan;
}

Status CudaOperation<LaunchKernel>::run(const LaunchKernel& request, const Operation<LaunchKernel>::Checked&,
                                        const Plan& plan, std::span<const BufferView> views, CudaRun& run) {
  std::vector<std::uint64_t> values(request.args.size());
  std::vector<void*> pointers(request.args.size());
  std::size_t next_view = 0;
  for (std::size_t i = 0; i < request.args.size(); ++i) {
    const KernelArg& arg = request.args[i];
    values[i] = arg.kind == KernelArg::Kind::buffer
                    ? static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(views[next_view++].at(arg.offset)))
                    : arg.bits;
    pointers[i] = &values[i];
  }
  const auto* function = reinterpret_cast<const void*>(plan.kernel->kernel);
  cudaError_t error = cudaSuccess;
  if (request.shared_memory_bytes > jit::kDefaultSharedMemory) {
    error = cudaFuncSetAttribute(function, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 static_cast<int>(request.shared_memory_bytes));
  }
  if (error == cudaSuccess) {
    error = cudaLaunchKernel(function, dim3(request.grid.x, request.grid.y, request.grid.z),
                             dim3(request.block.x, request.block.y, request.block.z), pointers.data(),
                             request.shared_memory_bytes, run.target.stream());
  }
  if (error == cudaSuccess) return Status();
  if (is_sticky(error)) return run.target.check(error, fmt::format("launching {}", request.kernel));
  cudaGetLastError();  // a refused launch configuration leaves the context usable
  return invalid_argument(fmt::format("LaunchKernel {} (grid {}x{}x{}, block {}x{}x{}, {} bytes of shared memory): {}",
                                      request.kernel, request.grid.x, request.grid.y, request.grid.z, request.block.x,
                                      request.block.y, request.block.z, request.shared_memory_bytes,
                                      cudaGetErrorString(error)));
}

// -- CutlassGemm ------------------------------------------------------------------------------------------

Result<CudaOperation<CutlassGemm>::Plan> CudaOperation<CutlassGemm>::plan(const CutlassGemm& request,
                                                                          const jit::CutlassGemmGeometry& geometry,
                                                                          CudaTarget& target) {
  std::optional<jit::LibraryGemm> library;
  auto library_can_answer = [&]() -> bool {
    const bool c_is_d = request.c == request.d && geometry.c.ld == geometry.d.ld;
    const std::optional<GemmShape> shape = jit::library_equivalent(request.input, request.output, geometry, c_is_d);
    if (!shape) return false;
    Result<GemmGeometry> planned = plan_gemm_geometry(*shape);
    if (!planned.ok()) return false;
    Result<CudaOperation<Gemm>::Plan> gemm = CudaOperation<Gemm>::plan(Gemm{.shape = *shape}, *planned, target);
    if (!gemm.ok()) return false;
    library = jit::LibraryGemm{.geometry = *planned, .plan = *gemm};
    return true;
  };
  ACCEL_ASSIGN_OR_RETURN(
      std::shared_ptr<const jit::CutlassModule> module,
      jit::module_or_fallback(target, jit::gemm_instance(request, geometry, target.compute_capability()),
                              request.when_compiling, library_can_answer));
  if (module == nullptr) return Plan(std::move(*library));
  return Plan(std::move(module));
}

Status CudaOperation<CutlassGemm>::run(const CutlassGemm& request, const jit::CutlassGemmGeometry& geometry,
                                       const Plan& plan, std::span<const BufferView> views, CudaRun& run) {
  const jit::CutlassGemmOperands o = jit::cutlass_gemm_addresses(views, geometry);
  const float beta = geometry.epilogue.source ? request.beta : 0.0f;
  if (const auto* library = std::get_if<jit::LibraryGemm>(&plan)) {
    const Gemm gemm{.shape = library->geometry.shape, .alpha = request.alpha, .beta = beta};
    const BufferView library_views[] = {{o.a}, {o.b}, {o.d}, {o.bias}};
    return CudaOperation<Gemm>::run(gemm, library->geometry, library->plan, library_views, run);
  }
  const AccelGemmArgs args{.m = request.m,
                           .n = request.n,
                           .k = request.k,
                           .a = o.a,
                           .b = o.b,
                           .c = o.c,
                           .d = o.d,
                           .lda = geometry.a.ld,
                           .ldb = geometry.b.ld,
                           .ldc = geometry.epilogue.source ? geometry.c.ld : geometry.d.ld,
                           .ldd = geometry.d.ld,
                           .alpha = request.alpha,
                           .beta = beta,
                           .bias = o.bias,
                           .row_scale = reinterpret_cast<const float*>(o.row_scale),
                           .col_scale = reinterpret_cast<const float*>(o.col_scale),
                           .residual = o.residual};
  return jit::run_module(*std::get<std::shared_ptr<const jit::CutlassModule>>(plan), &args, run);
}

// -- CutlassGroupedGemm -----------------------------------------------------------------------------------

Result<CudaOperation<CutlassGroupedGemm>::Plan> CudaOperation<CutlassGroupedGemm>::plan(
    const CutlassGroupedGemm& request, const std::vector<jit::CutlassGemmGeometry>&, CudaTarget& target) {
  return jit::module_or_fallback(target, jit::grouped_gemm_instance(request, target.compute_capability()),
                                 request.when_compiling, [] { return false; });
}

Status CudaOperation<CutlassGroupedGemm>::run(const CutlassGroupedGemm& request,
                                              const std::vector<jit::CutlassGemmGeometry>& groups, const Plan& plan,
                                              std::span<const BufferView> views, CudaRun& run) {
  const std::vector<jit::CutlassGemmOperands> operands = jit::cutlass_grouped_gemm_addresses(views, groups);
  const std::size_t count = groups.size();
  std::vector<std::int64_t> m(count), n(count), k(count), lda(count), ldb(count), ldc(count), ldd(count);
  std::vector<const void*> a(count), b(count), c(count);
  std::vector<void*> d(count);
  for (std::size_t i = 0; i < count; ++i) {
    const jit::CutlassGemmGeometry& g = groups[i];
    m[i] = g.d.rows;
    n[i] = g.d.cols;
    k[i] = g.a.cols;
    a[i] = operands[i].a;
    b[i] = operands[i].b;
    d[i] = operands[i].d;
    c[i] = g.epilogue.source ? operands[i].c : operands[i].d;
    lda[i] = g.a.ld;
    ldb[i] = g.b.ld;
    ldd[i] = g.d.ld;
    ldc[i] = g.epilogue.source ? g.c.ld : g.d.ld;
  }
  const AccelGroupedGemmArgs args{.groups = static_cast<std::int32_t>(count),
                                  .m = m.data(),
                                  .n = n.data(),
                                  .k = k.data(),
                                  .a = a.data(),
                                  .b = b.data(),
                                  .c = c.data(),
                                  .d = d.data(),
                                  .lda = lda.data(),
                                  .ldb = ldb.data(),
                                  .ldc = ldc.data(),
                                  .ldd = ldd.data(),
                                  .alpha = request.alpha,
                                  .beta = request.beta};
  return jit::run_module(*plan, &args, run);
}

// -- CutlassConv ------------------------------------------------------------------------------------------

Result<CudaOperation<CutlassConv>::Plan> CudaOperation<CutlassConv>::plan(const CutlassConv& request,
                                                                          const jit::ConvExtents&, CudaTarget& target) {
  ACCEL_ASSIGN_OR_RETURN(
      std::shared_ptr<const jit::CutlassModule> module,
      jit::module_or_fallback(target, jit::conv_instance(request, target.compute_capability()), request.when_compiling,
                              [&] { return request.alpha == 1.0f && request.beta == 0.0f; }));
  if (module != nullptr) return Plan(std::move(module));
  return std::visit(
      [&](const auto& conv) -> Result<Plan> {
        ACCEL_ASSIGN_OR_RETURN(dnn::CheckedGraph checked, Operation<std::decay_t<decltype(conv)>>::validate(conv));
        ACCEL_ASSIGN_OR_RETURN(dnn::cudnn::CudnnGraphOperation::Plan planned,
                               dnn::cudnn::CudnnGraphOperation::plan(checked, target));
        return Plan(jit::LibraryConvPlan{.checked = std::move(checked), .plan = std::move(planned)});
      },
      jit::library_conv(request));
}

std::uint64_t CudaOperation<CutlassConv>::workspace_bytes(const Plan& plan) {
  const auto* library = std::get_if<jit::LibraryConvPlan>(&plan);
  return library == nullptr ? 0 : dnn::cudnn::CudnnGraphOperation::workspace_bytes(library->plan);
}

Status CudaOperation<CutlassConv>::run(const CutlassConv& request, const jit::ConvExtents& extents, const Plan& plan,
                                       std::span<const BufferView> views, CudaRun& run) {
  if (const auto* library = std::get_if<jit::LibraryConvPlan>(&plan)) {
    const std::vector<BufferView> mapped = jit::library_conv_views(request, library->checked.bindings, views);
    return dnn::cudnn::CudnnGraphOperation::run(library->checked, library->plan, mapped, run);
  }
  using Slot = Operation<CutlassConv>::Slot;
  const ConvShape& s = request.shape;
  void* x = views[Slot::x].data;
  void* w = views[Slot::w].data;
  void* y = views[Slot::y].data;
  const AccelConvArgs args{.n = s.n,
                           .h = s.input[0],
                           .w = s.input[1],
                           .c = s.c,
                           .k = s.k,
                           .r = s.filter[0],
                           .s = s.filter[1],
                           .p = extents.p,
                           .q = extents.q,
                           .pad_h = s.pre_padding[0],
                           .pad_w = s.pre_padding[1],
                           .stride_h = s.stride[0],
                           .stride_w = s.stride[1],
                           .dilation_h = s.dilation[0],
                           .dilation_w = s.dilation[1],
                           .x_in = x,
                           .x_out = x,
                           .w_in = w,
                           .w_out = w,
                           .y_in = y,
                           .y_out = y,
                           .alpha = request.alpha,
                           .beta = request.beta};
  return jit::run_module(*std::get<std::shared_ptr<const jit::CutlassModule>>(plan), &args, run);
}

}  // namespace accel
