// The CudaStream's run-time compiled requests: NVRTC kernels and CUTLASS modules (see jit_kernels.hpp).
#include <fmt/format.h>

#include <cstring>

#include "device/cuda/cuda_status.hpp"
#include "device/cuda/cuda_stream.hpp"
#include "jit/cutlass/module_abi.hpp"
#include "jit/cutlass_operands.hpp"
#include "jit/cutlass_requests.hpp"

namespace accel::device::cuda {
namespace {

constexpr std::uint32_t kMaxThreadsPerBlock = 1024;
constexpr std::uint32_t kDefaultSharedMemory = 48 * 1024;

Status check_launch_shape(const LaunchKernel& r) {
  const auto zero = [](const Dim3& d) { return d.x == 0 || d.y == 0 || d.z == 0; };
  if (zero(r.grid) || zero(r.block)) {
    return invalid_argument(fmt::format("LaunchKernel {}: grid ({}, {}, {}) and block ({}, {}, {}) must be positive",
                                        r.kernel, r.grid.x, r.grid.y, r.grid.z, r.block.x, r.block.y, r.block.z));
  }
  const std::uint64_t threads = std::uint64_t{r.block.x} * r.block.y * r.block.z;
  if (threads > kMaxThreadsPerBlock) {
    return invalid_argument(
        fmt::format("LaunchKernel {}: a block of {} threads (at most {})", r.kernel, threads, kMaxThreadsPerBlock));
  }
  return Status();
}

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

// Buffers named more than once are used once, as written if any use writes.
void add_use(std::vector<CudaStream::Use>& uses, const BufferHandle& buffer, Access access) {
  for (CudaStream::Use& use : uses) {
    if (use.buffer == buffer) {
      if (access == Access::write) use.access = Access::write;
      return;
    }
  }
  uses.push_back({buffer, access});
}

}  // namespace

Result<Submitted> CudaStream::enqueue(LaunchKernel& request) {
  if (request.program == nullptr) return invalid_argument("LaunchKernel without a program");
  ACCEL_RETURN_IF_ERROR(check_launch_shape(request));
  ACCEL_RETURN_IF_ERROR(context_->check_healthy());
  ACCEL_ASSIGN_OR_RETURN(const std::shared_ptr<const LoadedProgram> program, context_->jit().program(request.program));
  ACCEL_ASSIGN_OR_RETURN(const LoadedKernel* kernel, program->kernel(request.kernel, request.program->name));
  if (kernel->parameter_sizes.size() != request.args.size()) {
    return invalid_argument(fmt::format("LaunchKernel {}: the kernel takes {} parameters, the request passes {}",
                                        request.kernel, kernel->parameter_sizes.size(), request.args.size()));
  }
  for (std::size_t i = 0; i < request.args.size(); ++i) {
    const KernelArg& arg = request.args[i];
    if (arg.size() != kernel->parameter_sizes[i]) {
      return invalid_argument(
          fmt::format("LaunchKernel {}: argument {} is a {} of {} bytes, the kernel's parameter {} "
                      "takes {} bytes",
                      request.kernel, i, kind_name(arg.kind), arg.size(), i, kernel->parameter_sizes[i]));
    }
  }
  std::vector<std::uint64_t> values(request.args.size());
  std::vector<void*> pointers(request.args.size());
  std::vector<Use> uses;
  std::lock_guard lock(context_->buffers_mutex());
  ACCEL_RETURN_IF_ERROR(context_->check_healthy());
  for (std::size_t i = 0; i < request.args.size(); ++i) {
    const KernelArg& arg = request.args[i];
    values[i] = arg.bits;
    if (arg.kind == KernelArg::Kind::buffer) {
      ACCEL_ASSIGN_OR_RETURN(const BufferView view,
                             context_->table().resolve_range(arg.buffer, fmt::format("argument {}", i), arg.offset, 0));
      const auto address = reinterpret_cast<std::uintptr_t>(view.data) + arg.offset * size_of(view.dtype);
      values[i] = static_cast<std::uint64_t>(address);
      add_use(uses, arg.buffer, arg.access == ArgAccess::read ? Access::read : Access::write);
    }
    pointers[i] = &values[i];
  }
  const auto* function = reinterpret_cast<const void*>(kernel->kernel);
  return ordered(std::span<const Use>(uses), [&]() -> Result<Submitted> {
    cudaError_t error = cudaSuccess;
    if (request.shared_memory_bytes > kDefaultSharedMemory) {
      error = cudaFuncSetAttribute(function, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   static_cast<int>(request.shared_memory_bytes));
    }
    if (error == cudaSuccess) {
      error = cudaLaunchKernel(function, dim3(request.grid.x, request.grid.y, request.grid.z),
                               dim3(request.block.x, request.block.y, request.block.z), pointers.data(),
                               request.shared_memory_bytes, stream_);
    }
    if (error == cudaSuccess) return Submitted{};
    if (is_sticky(error)) return context_->check(error, fmt::format("launching {}", request.kernel));
    cudaGetLastError();  // a refused launch configuration leaves the context usable
    return invalid_argument(
        fmt::format("LaunchKernel {} (grid {}x{}x{}, block {}x{}x{}, {} bytes of shared memory): {}", request.kernel,
                    request.grid.x, request.grid.y, request.grid.z, request.block.x, request.block.y, request.block.z,
                    request.shared_memory_bytes, cudaGetErrorString(error)));
  });
}

template <class LibraryCanAnswer>
Result<std::shared_ptr<const CutlassModule>> CudaStream::cutlass_module(const jit::cutlass::Instance& instance,
                                                                        WhenCompiling when,
                                                                        LibraryCanAnswer&& library_can_answer) {
  JitKernels& jit = context_->jit();
  // Asked "if ready" only when something else can be done meanwhile, so that "jit-binaries" not_ready counts
  // the answers given without the kernel (library fallbacks and `unavailable`).
  if (when == WhenCompiling::wait) return jit.cutlass_module(instance, true, shared_->keep_alive);
  ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<const CutlassModule> module,
                         jit.cutlass_module(instance, false, shared_->keep_alive));
  if (module != nullptr) return module;
  if (when == WhenCompiling::unavailable) {
    return Status(Code::unavailable, fmt::format("the CUTLASS kernel [{}] is compiling; ask again later",
                                                 jit::cutlass::identity(instance)));
  }
  if (library_can_answer()) return module;
  return jit.cutlass_module(instance, true, shared_->keep_alive);
}

Result<Submitted> CudaStream::run_module(const CutlassModule& module, const void* args, std::span<const Use> uses) {
  ACCEL_ASSIGN_OR_RETURN(const std::size_t workspace, module.workspace_bytes(args));
  return ordered(uses, [&]() -> Result<Submitted> {
    ACCEL_RETURN_IF_ERROR(reserve_workspace(workspace));
    Status launched = module.run(args, scratch_, scratch_bytes_, stream_);
    if (!launched.ok()) {
      if (cudaError_t pending = cudaPeekAtLastError(); is_sticky(pending)) return context_->check(pending, "CUTLASS");
      return launched;
    }
    return Submitted{};
  });
}

Result<Submitted> CudaStream::enqueue(CutlassGemm& request) {
  ACCEL_ASSIGN_OR_RETURN(const jit::CutlassGemmGeometry geometry, jit::check_cutlass_gemm(request));
  std::optional<GemmGeometry> library;
  auto library_can_answer = [&] {
    const bool c_is_d = request.c == request.d && geometry.c.ld == geometry.d.ld;
    const std::optional<GemmShape> shape =
        jit::library_equivalent(request.input, request.output, request.activation, geometry, c_is_d);
    if (!shape) return false;
    Result<GemmGeometry> planned = plan_gemm_geometry(*shape);
    if (!planned.ok() || !blas::check_cublaslt_support(*planned, context_->compute_capability()).ok()) return false;
    library = *planned;
    return true;
  };
  ACCEL_ASSIGN_OR_RETURN(const std::shared_ptr<const CutlassModule> module,
                         cutlass_module(jit::gemm_instance(request, geometry, context_->compute_capability()),
                                        request.when_compiling, library_can_answer));
  std::lock_guard lock(context_->buffers_mutex());
  ACCEL_RETURN_IF_ERROR(context_->check_healthy());
  ACCEL_ASSIGN_OR_RETURN(const jit::CutlassGemmOperands o,
                         jit::resolve_cutlass_gemm(request, geometry, context_->table()));
  std::vector<Use> uses;
  for (const BufferHandle& read :
       {request.a, request.b, request.c, request.bias, request.row_scale, request.col_scale, request.residual}) {
    if (!read.is_null()) add_use(uses, read, Access::read);
  }
  add_use(uses, request.d, Access::write);
  if (module == nullptr) {
    return ordered(std::span<const Use>(uses), [&]() -> Result<Submitted> {
      ACCEL_RETURN_IF_ERROR(gemm_->enqueue(*library, {.a = o.a, .b = o.b, .c = o.d, .bias = o.bias}, request.alpha,
                                           geometry.epilogue.source ? request.beta : 0.0, stream_));
      return Submitted{};
    });
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
                           .beta = geometry.epilogue.source ? request.beta : 0.0f,
                           .bias = o.bias,
                           .row_scale = reinterpret_cast<const float*>(o.row_scale),
                           .col_scale = reinterpret_cast<const float*>(o.col_scale),
                           .residual = o.residual};
  return run_module(*module, &args, uses);
}

Result<Submitted> CudaStream::enqueue(CutlassGroupedGemm& request) {
  ACCEL_ASSIGN_OR_RETURN(const std::vector<jit::CutlassGemmGeometry> groups, jit::check_cutlass_grouped_gemm(request));
  ACCEL_ASSIGN_OR_RETURN(const std::shared_ptr<const CutlassModule> module,
                         cutlass_module(jit::grouped_gemm_instance(request, context_->compute_capability()),
                                        request.when_compiling, [] { return false; }));
  std::lock_guard lock(context_->buffers_mutex());
  ACCEL_RETURN_IF_ERROR(context_->check_healthy());
  ACCEL_ASSIGN_OR_RETURN(const std::vector<jit::CutlassGemmOperands> operands,
                         jit::resolve_cutlass_grouped_gemm(request, groups, context_->table()));
  const std::size_t count = groups.size();
  std::vector<std::int64_t> m(count), n(count), k(count), lda(count), ldb(count), ldc(count), ldd(count);
  std::vector<const void*> a(count), b(count), c(count);
  std::vector<void*> d(count);
  std::vector<Use> uses;
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
    const GemmGroup& group = request.groups[i];
    add_use(uses, group.a.buffer, Access::read);
    add_use(uses, group.b.buffer, Access::read);
    if (g.epilogue.source) add_use(uses, group.c.buffer, Access::read);
    add_use(uses, group.d.buffer, Access::write);
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
  return run_module(*module, &args, uses);
}

Result<Submitted> CudaStream::enqueue(CutlassConv& request) {
  ACCEL_RETURN_IF_ERROR(jit::check_cutlass_conv(request));
  const ConvShape& s = request.shape;
  ACCEL_ASSIGN_OR_RETURN(const jit::ConvExtents extents, jit::conv_extents(s));
  ACCEL_ASSIGN_OR_RETURN(
      const std::shared_ptr<const CutlassModule> module,
      cutlass_module(jit::conv_instance(request, context_->compute_capability()), request.when_compiling,
                     [&] { return request.alpha == 1.0f && request.beta == 0.0f; }));
  if (module == nullptr) {
    jit::LibraryConv conv = jit::library_conv(request);
    return std::visit([&](auto& library) { return enqueue(library); }, conv);
  }
  std::lock_guard lock(context_->buffers_mutex());
  ACCEL_RETURN_IF_ERROR(context_->check_healthy());
  ACCEL_ASSIGN_OR_RETURN(const jit::CutlassConvOperands o,
                         jit::resolve_cutlass_conv(request, extents, context_->table()));
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
                           .x_in = o.x,
                           .x_out = o.x,
                           .w_in = o.w,
                           .w_out = o.w,
                           .y_in = o.y,
                           .y_out = o.y,
                           .alpha = request.alpha,
                           .beta = request.beta};
  const Access x_access = request.pass == ConvPass::dgrad ? Access::write : Access::read;
  const Access w_access = request.pass == ConvPass::wgrad ? Access::write : Access::read;
  const Access y_access = request.pass == ConvPass::fprop ? Access::write : Access::read;
  const Use uses[] = {{request.x, x_access}, {request.w, w_access}, {request.y, y_access}};
  return run_module(*module, &args, uses);
}

}  // namespace accel::device::cuda
