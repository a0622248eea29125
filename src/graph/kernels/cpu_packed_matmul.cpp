// PackedMatmul over oneDNN's matmul primitive. oneDNN reports failures as exceptions (dnnl::error); they are caught
// here and returned as Status values, so nothing thrown leaves this file.
#include "graph/kernels/cpu_packed_matmul.hpp"

#include <fmt/format.h>

#include <atomic>
#include <oneapi/dnnl/dnnl.hpp>
#include <vector>

#include "graph/kernels/cpu_kernels.hpp"

namespace accel::graph::cpu {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;
using Type = memory::data_type;

std::atomic<std::uint64_t> packs{0};

// One engine for the process: the CPU, on the OpenMP runtime oneDNN was built with.
const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// The activation as oneDNN post-ops after the bias; log1p_relu is relu, then x + 1, then log.
dnnl::post_ops activation_post_ops(Activation activation) {
  dnnl::post_ops ops;
  using A = dnnl::algorithm;
  switch (activation) {
    case Activation::identity: break;
    case Activation::relu: ops.append_eltwise(1.0f, A::eltwise_relu, 0.0f, 0.0f); break;
    case Activation::gelu_tanh: ops.append_eltwise(1.0f, A::eltwise_gelu_tanh, 0.0f, 0.0f); break;
    case Activation::gelu_erf: ops.append_eltwise(1.0f, A::eltwise_gelu_erf, 0.0f, 0.0f); break;
    case Activation::silu: ops.append_eltwise(1.0f, A::eltwise_swish, 1.0f, 0.0f); break;
    case Activation::sigmoid: ops.append_eltwise(1.0f, A::eltwise_logistic, 0.0f, 0.0f); break;
    case Activation::tanh: ops.append_eltwise(1.0f, A::eltwise_tanh, 0.0f, 0.0f); break;
    case Activation::log1p_relu:
      ops.append_eltwise(1.0f, A::eltwise_relu, 0.0f, 0.0f);
      ops.append_eltwise(1.0f, A::eltwise_linear, 1.0f, 1.0f);
      ops.append_eltwise(1.0f, A::eltwise_log, 0.0f, 0.0f);
      break;
  }
  return ops;
}

Status dnnl_failure(const char* what, const dnnl::error& e) {
  return internal_error(fmt::format("oneDNN matmul: {}: {} (status {})", what, e.what(), static_cast<int>(e.status)));
}

}  // namespace

struct PackedMatmul::State {
  dnnl::matmul primitive;
  dnnl::matmul::primitive_desc descriptor;
  memory weights;  // in the layout the primitive chose, reordered once
  memory bias;     // empty without a bias
  std::int64_t k = 0, n = 0;
  MatmulPrecision precision = MatmulPrecision::f32;
};

bool cpu_has_bf16() {
  const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  return isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
}

std::uint64_t PackedMatmul::packs_made() noexcept { return packs.load(std::memory_order_relaxed); }

PackedMatmul::PackedMatmul(std::unique_ptr<State> state) : state_(std::move(state)) {}
PackedMatmul::~PackedMatmul() = default;

Result<std::unique_ptr<PackedMatmul>> PackedMatmul::make(const float* w, bool transpose_w, const float* bias,
                                                         std::int64_t k, std::int64_t n, Activation activation,
                                                         MatmulPrecision precision) {
  if (precision == MatmulPrecision::bf16 && !cpu_has_bf16())
    return not_supported("bf16 matmuls need a CPU with avx512_bf16 or AMX; this one has neither (use f32)");
  const Type compute = precision == MatmulPrecision::bf16 ? Type::bf16 : Type::f32;
  try {
    const dnnl::engine& engine = cpu_engine();
    auto state = std::make_unique<State>();
    state->k = k;
    state->n = n;
    state->precision = precision;
    // Rows are a run-time dimension: one primitive and one packed copy of the weights for every batch.
    const memory::desc src({DNNL_RUNTIME_DIM_VAL, k}, compute, Tag::ab);
    const memory::desc dst({DNNL_RUNTIME_DIM_VAL, n}, Type::f32, Tag::ab);
    const memory::desc chosen_weights({k, n}, compute, Tag::any);
    const memory::desc bias_desc({1, n}, Type::f32, Tag::ab);
    dnnl::primitive_attr attr;
    attr.set_post_ops(activation_post_ops(activation));
    // Each call brings its own scratchpad, so calls from several threads never share oneDNN's.
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    const dnnl::matmul::desc desc =
        bias ? dnnl::matmul::desc(src, chosen_weights, bias_desc, dst) : dnnl::matmul::desc(src, chosen_weights, dst);
    state->descriptor = dnnl::matmul::primitive_desc(desc, attr, engine);
    state->primitive = dnnl::matmul(state->descriptor);

    // The caller's weights as they are stored (f32, k x n or its transpose), reordered (and converted to bf16
    // where asked) into the primitive's layout.
    const memory::desc stored({k, n}, Type::f32, transpose_w ? Tag::ba : Tag::ab);
    const memory source(stored, engine, const_cast<float*>(w));
    state->weights = memory(state->descriptor.weights_desc(), engine);
    dnnl::stream stream(engine);
    dnnl::reorder(source, state->weights).execute(stream, const_cast<memory&>(source), state->weights);
    if (bias) {
      state->bias = memory(bias_desc, engine);
      std::copy_n(bias, n, static_cast<float*>(state->bias.get_data_handle()));
    }
    stream.wait();
    packs.fetch_add(1, std::memory_order_relaxed);
    return std::unique_ptr<PackedMatmul>(new PackedMatmul(std::move(state)));
  } catch (const dnnl::error& e) {
    return dnnl_failure("making the primitive", e);
  }
}

Status PackedMatmul::run(const float* x, std::int64_t rows, float* y) const {
  if (rows == 0) return Status();
  const State& s = *state_;
  try {
    const dnnl::engine& engine = cpu_engine();
    std::vector<std::uint16_t> x_bf16;
    const void* source = x;
    if (s.precision == MatmulPrecision::bf16) {
      x_bf16.resize(static_cast<std::size_t>(rows * s.k));
      cast(DType::f32, x, DType::bf16, x_bf16.data(), rows * s.k);
      source = x_bf16.data();
    }
    const Type compute = s.precision == MatmulPrecision::bf16 ? Type::bf16 : Type::f32;
    memory src({{rows, s.k}, compute, Tag::ab}, engine, const_cast<void*>(source));
    memory dst({{rows, s.n}, Type::f32, Tag::ab}, engine, y);
    std::vector<std::byte> scratch(s.descriptor.scratchpad_desc().get_size());
    memory scratchpad(s.descriptor.scratchpad_desc(), engine, scratch.data());
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, s.weights}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, scratchpad}};
    if (s.bias) args.emplace(DNNL_ARG_BIAS, s.bias);
    dnnl::stream stream(engine);
    s.primitive.execute(stream, args);
    stream.wait();
    return Status();
  } catch (const dnnl::error& e) {
    return dnnl_failure("running", e);
  }
}

}  // namespace accel::graph::cpu
