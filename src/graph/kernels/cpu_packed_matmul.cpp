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

// The row count the weights' layout is chosen for: a batch of a few sequences.
constexpr std::int64_t kTypicalRows = 512;

// One engine for the process: the CPU, on the OpenMP runtime oneDNN was built with.
const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// log1p_relu runs as our own pass after the product: its zeros must stay exactly 0 (SPLADE's weights are sparse),
// and oneDNN's vector log of 1 is not exactly 0.
bool activation_after(Activation activation) { return activation == Activation::log1p_relu; }

// The activation as oneDNN post-ops after the bias.
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
    case Activation::log1p_relu: break;  // activation_after
  }
  return ops;
}

Status dnnl_failure(const char* what, const dnnl::error& e) {
  return internal_error(fmt::format("oneDNN matmul: {}: {} (status {})", what, e.what(), static_cast<int>(e.status)));
}

}  // namespace

struct PackedMatmul::State {
  dnnl::primitive_attr attr;
  memory weights;  // in the layout oneDNN chose for this CPU, reordered once
  memory bias;     // empty without a bias
  std::int64_t k = 0, n = 0;
  MatmulPrecision precision = MatmulPrecision::f32;
  Activation after = Activation::identity;  // applied by us after oneDNN's product (activation_after)
};

bool cpu_has_bf16() {
  const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  return isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
}

bool packed_matmul_pays() {
  static const bool pays = [] {
    try {
      const std::int64_t width = 384;  // a typical encoder's hidden width
      const dnnl::matmul::primitive_desc typical(
          dnnl::matmul::desc(memory::desc({kTypicalRows, width}, Type::f32, Tag::ab),
                             memory::desc({width, width}, Type::f32, Tag::any),
                             memory::desc({kTypicalRows, width}, Type::f32, Tag::ab)),
          cpu_engine());
      return typical.weights_desc() != memory::desc({width, width}, Type::f32, Tag::ab);
    } catch (const dnnl::error&) {
      return false;
    }
  }();
  return pays;
}

std::uint64_t PackedMatmul::packs_made() noexcept { return packs.load(std::memory_order_relaxed); }

PackedMatmul::PackedMatmul(std::unique_ptr<State> state) : state_(std::move(state)) {}
PackedMatmul::~PackedMatmul() = default;

Result<std::unique_ptr<PackedMatmul>> PackedMatmul::make(const void* w, bool transpose_w, const float* bias,
                                                         std::int64_t k, std::int64_t n, Activation activation,
                                                         MatmulPrecision precision, DType w_dtype) {
  if (precision == MatmulPrecision::bf16 && !cpu_has_bf16())
    return not_supported("bf16 matmuls need a CPU with avx512_bf16 or AMX; this one has neither (use f32)");
  if (w_dtype != DType::f32 && !(w_dtype == DType::bf16 && precision == MatmulPrecision::bf16))
    return invalid_argument(fmt::format("packed matmul: weights stored as {} for a {} product (f32, or bf16 for bf16)",
                                        to_string(w_dtype), precision == MatmulPrecision::bf16 ? "bf16" : "f32"));
  const Type compute = precision == MatmulPrecision::bf16 ? Type::bf16 : Type::f32;
  try {
    const dnnl::engine& engine = cpu_engine();
    auto state = std::make_unique<State>();
    state->k = k;
    state->n = n;
    state->precision = precision;
    state->after = activation_after(activation) ? activation : Activation::identity;
    state->attr.set_post_ops(activation_post_ops(activation));
    // Each call brings its own scratchpad, so calls from several threads never share oneDNN's.
    state->attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    // The weights' layout is chosen once, for a typical batch. oneDNN's blocked (brgemm) kernels on AVX-512 and
    // AMX want their own blocking of the weights and a known row count (run-time rows fall back to its plain
    // GEMM), so each run makes the primitive of its row count with the weights pinned to this layout; oneDNN's
    // primitive cache makes the repeats a lookup.
    const dnnl::matmul::primitive_desc typical(
        dnnl::matmul::desc(memory::desc({kTypicalRows, k}, compute, Tag::ab), memory::desc({k, n}, compute, Tag::any),
                           memory::desc({kTypicalRows, n}, Type::f32, Tag::ab)),
        state->attr, engine);
    // The caller's weights as they are stored (f32 or bf16, k x n or its transpose), reordered (and converted to
    // bf16 where asked) into that layout.
    const memory::desc stored({k, n}, w_dtype == DType::bf16 ? Type::bf16 : Type::f32, transpose_w ? Tag::ba : Tag::ab);
    memory source(stored, engine, const_cast<void*>(w));
    state->weights = memory(typical.weights_desc(), engine);
    dnnl::stream stream(engine);
    dnnl::reorder(source, state->weights).execute(stream, source, state->weights);
    if (bias) {
      state->bias = memory(memory::desc({1, n}, Type::f32, Tag::ab), engine);
      std::copy_n(bias, n, static_cast<float*>(state->bias.get_data_handle()));
    }
    stream.wait();
    packs.fetch_add(1, std::memory_order_relaxed);
    return std::unique_ptr<PackedMatmul>(new PackedMatmul(std::move(state)));
  } catch (const dnnl::error& e) {
    return dnnl_failure("packing the weights", e);
  }
}

Status PackedMatmul::run(const float* x, std::int64_t rows, float* y) const {
  if (rows == 0) return Status();
  const State& s = *state_;
  try {
    const dnnl::engine& engine = cpu_engine();
    dnnl::stream stream(engine);
    const Type compute = s.precision == MatmulPrecision::bf16 ? Type::bf16 : Type::f32;
    const memory::desc src_desc({rows, s.k}, compute, Tag::ab), dst_desc({rows, s.n}, Type::f32, Tag::ab);
    // bf16: x rounded by oneDNN's reorder (vectorised, on its threads; a scalar pass cost as much as a sixth of the
    // product at an encoder's widths).
    std::vector<std::uint16_t> x_bf16;
    const void* source = x;
    if (s.precision == MatmulPrecision::bf16) {
      x_bf16.resize(static_cast<std::size_t>(rows * s.k));
      memory from(memory::desc({rows, s.k}, Type::f32, Tag::ab), engine, const_cast<float*>(x));
      memory to(src_desc, engine, x_bf16.data());
      dnnl::reorder(from, to).execute(stream, from, to);
      source = x_bf16.data();
    }
    const memory::desc weights_desc = s.weights.get_desc();
    const dnnl::matmul::primitive_desc descriptor(
        s.bias ? dnnl::matmul::desc(src_desc, weights_desc, s.bias.get_desc(), dst_desc)
               : dnnl::matmul::desc(src_desc, weights_desc, dst_desc),
        s.attr, engine);
    std::vector<std::byte> scratch(descriptor.scratchpad_desc().get_size());
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, memory(src_desc, engine, const_cast<void*>(source))},
        {DNNL_ARG_WEIGHTS, s.weights},
        {DNNL_ARG_DST, memory(dst_desc, engine, y)},
        {DNNL_ARG_SCRATCHPAD, memory(descriptor.scratchpad_desc(), engine, scratch.data())}};
    if (s.bias) args.emplace(DNNL_ARG_BIAS, s.bias);
    dnnl::matmul(descriptor).execute(stream, args);
    stream.wait();
    if (s.after != Activation::identity) unary(s.after, y, y, rows * s.n);
    return Status();
  } catch (const dnnl::error& e) {
    return dnnl_failure("running", e);
  }
}

}  // namespace accel::graph::cpu
