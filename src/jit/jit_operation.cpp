#include "jit/jit_operation.hpp"

#include <fmt/format.h>

#include "dnn/graph_operation.hpp"

namespace accel {
namespace {

constexpr std::uint32_t kMaxThreadsPerBlock = 1024;

Status damaged(std::string_view request) {
  return internal_error(fmt::format("the staged encoding of a {} request is damaged", request));
}

}  // namespace

Result<Operation<LaunchKernel>::Checked> Operation<LaunchKernel>::validate(const LaunchKernel& r) {
  if (r.program == nullptr) return invalid_argument("LaunchKernel without a program");
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
  for (std::size_t i = 0; i < r.args.size(); ++i) {
    if (r.args[i].kind > KernelArg::Kind::f64 || r.args[i].access > ArgAccess::read_write) {
      return invalid_argument(fmt::format("LaunchKernel {}: argument {} has no known kind", r.kernel, i));
    }
  }
  return Checked{};
}

void Operation<LaunchKernel>::operands(const LaunchKernel& r, const Checked&, Operands& operands) {
  for (std::size_t i = 0; i < r.args.size(); ++i) {
    const KernelArg& arg = r.args[i];
    if (arg.kind != KernelArg::Kind::buffer) continue;
    operands.range(arg.buffer, fmt::format("argument {}", i),
                   arg.access == ArgAccess::read ? Access::read : Access::write, arg.offset, 0);
  }
}

void Operation<LaunchKernel>::encode(ByteWriter& out, const LaunchKernel& request) {
  const jit::Program& program = *request.program;
  out.string(program.name).string(program.source);
  out.pod(static_cast<std::uint64_t>(program.headers.size()));
  for (const jit::Header& header : program.headers) out.string(header.name).string(header.contents);
  out.strings(program.options).strings(program.name_expressions).pod(program.code);
  out.string(request.kernel).pod(request.grid).pod(request.block).pod(request.shared_memory_bytes).pods(request.args);
}

Result<LaunchKernel> Operation<LaunchKernel>::decode(ByteReader& in) {
  auto program = std::make_shared<jit::Program>();
  LaunchKernel launch;
  std::uint64_t headers = 0;
  in.string(program->name).string(program->source).count(headers, 2 * sizeof(std::uint32_t));
  program->headers.resize(headers);
  for (jit::Header& header : program->headers) in.string(header.name).string(header.contents);
  in.strings(program->options).strings(program->name_expressions).pod(program->code);
  in.string(launch.kernel).pod(launch.grid).pod(launch.block).pod(launch.shared_memory_bytes).pods(launch.args);
  if (!in.finished() || (program->code != jit::CodeKind::cubin && program->code != jit::CodeKind::ptx)) {
    return damaged(LaunchKernel::kName);
  }
  for (const KernelArg& arg : launch.args) {
    if (arg.kind > KernelArg::Kind::f64 || arg.access > ArgAccess::read_write) return damaged(LaunchKernel::kName);
  }
  launch.program = std::move(program);
  return launch;
}

Status Operation<CutlassGemm>::run_cpu(const CutlassGemm& request, const Checked& checked,
                                       std::span<const BufferView> views, const CpuTarget&) {
  jit::reference_gemm(request, checked, jit::cutlass_gemm_addresses(views, checked));
  return Status();
}

Status Operation<CutlassGroupedGemm>::run_cpu(const CutlassGroupedGemm& request, const Checked& checked,
                                              std::span<const BufferView> views, const CpuTarget&) {
  jit::reference_grouped_gemm(request, checked, jit::cutlass_grouped_gemm_addresses(views, checked));
  return Status();
}

void Operation<CutlassGroupedGemm>::encode(ByteWriter& out, const CutlassGroupedGemm& request) {
  out.pod(request.input).pod(request.output).pod(request.layout_a).pod(request.layout_b).pod(request.layout_c);
  out.pods(request.groups).pod(request.alpha).pod(request.beta).pod(request.tile).pod(request.when_compiling);
}

Result<CutlassGroupedGemm> Operation<CutlassGroupedGemm>::decode(ByteReader& in) {
  CutlassGroupedGemm grouped;
  in.pod(grouped.input).pod(grouped.output).pod(grouped.layout_a).pod(grouped.layout_b).pod(grouped.layout_c);
  in.pods(grouped.groups).pod(grouped.alpha).pod(grouped.beta).pod(grouped.tile).pod(grouped.when_compiling);
  if (!in.finished()) return damaged(CutlassGroupedGemm::kName);
  return grouped;
}

Result<jit::ConvExtents> Operation<CutlassConv>::validate(const CutlassConv& request) {
  ACCEL_RETURN_IF_ERROR(jit::check_cutlass_conv(request));
  return jit::conv_extents(request.shape);
}

namespace jit {

std::vector<BufferView> library_conv_views(const CutlassConv& request, std::span<const dnn::TensorBinding> bindings,
                                           std::span<const BufferView> views) {
  std::vector<BufferView> mapped;
  mapped.reserve(bindings.size());
  for (const dnn::TensorBinding& binding : bindings) {
    const std::size_t slot = binding.buffer == request.x   ? Operation<CutlassConv>::x
                             : binding.buffer == request.w ? Operation<CutlassConv>::w
                                                           : Operation<CutlassConv>::y;
    mapped.push_back(views[slot]);
  }
  return mapped;
}

}  // namespace jit

Status Operation<CutlassConv>::run_cpu(const CutlassConv& request, const Checked& extents,
                                       std::span<const BufferView> views, const CpuTarget&) {
  const auto [slot, count] = request.pass == ConvPass::fprop   ? std::pair{y, extents.y}
                             : request.pass == ConvPass::dgrad ? std::pair{x, extents.x}
                                                               : std::pair{w, extents.w};
  const BufferView& out = views[slot];
  std::vector<std::byte> before;
  const bool blend = request.alpha != 1.0f || request.beta != 0.0f;
  if (blend) {
    const auto* first = static_cast<const std::byte*>(out.data);
    before.assign(first, first + count * size_of(out.dtype));
  }
  ACCEL_RETURN_IF_ERROR(std::visit(
      [&](const auto& conv) -> Status {
        ACCEL_ASSIGN_OR_RETURN(const dnn::CheckedGraph checked,
                               Operation<std::decay_t<decltype(conv)>>::validate(conv));
        return dnn::GraphOperation::run_cpu(checked, jit::library_conv_views(request, checked.bindings, views));
      },
      jit::library_conv(request)));
  if (blend) jit::blend(out.data, before.data(), out.dtype, count, request.alpha, request.beta);
  return Status();
}

}  // namespace accel
