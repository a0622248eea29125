// The graph's matmuls of stored weights on the CPU through oneDNN (Debian's libdnnl, its OpenMP build: the same libgomp
// team as the other CPU kernels). A PackedMatmul is made once per weight matrix: oneDNN chooses the weights' layout for
// this CPU (format `any`), the weights are reordered into it once, and every later product only streams the
// activations. Each run's primitive is made for its row count with the weights' layout pinned (oneDNN's primitive
// cache makes the repeats a lookup). Bias and activation run as oneDNN post-ops on each output block while it is
// still in cache.
#pragma once

#include <cstdint>
#include <memory>

#include "accel/core/dtype.hpp"
#include "accel/core/epilogue.hpp"
#include "accel/core/result.hpp"

namespace accel::graph::cpu {

// The arithmetic of a packed matmul: f32 throughout, or bf16 weights and activations with f32 accumulation and
// f32 output (only on CPUs with avx512_bf16 or AMX; elsewhere make() refuses it).
enum class MatmulPrecision : std::uint8_t { f32, bf16 };

// Whether this CPU runs bf16 matmuls natively (avx512_bf16 or AMX), as oneDNN sees it.
[[nodiscard]] bool cpu_has_bf16();

// Whether oneDNN packs weights into a layout of its own on this CPU (its blocked brgemm kernels: AVX-512, AMX). Where
// it keeps them plain (AVX2 in oneDNN 2.6: its gemm:jit, which packs on every call like SGEMM) there is nothing to
// gain from packing once, and the graph keeps OpenBLAS's row-blocked SGEMM, measured faster there (2,000 texts on
// the 2-core AVX2 VM: 43.5 s OpenBLAS, 49.4 s oneDNN). Decided once per process.
[[nodiscard]] bool packed_matmul_pays();

class PackedMatmul {
 public:
  // W is k x n (n x k when transpose_w), stored as `w_dtype`: f32, or bf16 for MatmulPrecision::bf16 (packed as it
  // is, no rounding); bias has n f32 entries or is null. The weights are read here and only here.
  [[nodiscard]] static Result<std::unique_ptr<PackedMatmul>> make(const void* w, bool transpose_w, const float* bias,
                                                                  std::int64_t k, std::int64_t n, Activation activation,
                                                                  MatmulPrecision precision,
                                                                  DType w_dtype = DType::f32);
  ~PackedMatmul();
  PackedMatmul(const PackedMatmul&) = delete;
  PackedMatmul& operator=(const PackedMatmul&) = delete;

  // y = act(x W + bias) for `rows` rows of x (rows x k, row-major) into y (rows x n, row-major). In bf16, x is
  // rounded to bf16 (to nearest even) on its way in; the products are summed and y written in f32.
  [[nodiscard]] Status run(const float* x, std::int64_t rows, float* y) const;

  // Weight matrices packed by this process so far (tests count it: one per matmul per model, not per call).
  [[nodiscard]] static std::uint64_t packs_made() noexcept;

 private:
  struct State;
  explicit PackedMatmul(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace accel::graph::cpu
