#include "graph/kernels/cpu_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <span>
#include <vector>

#include "core/float_arrays.hpp"
#include "graph/kernels/cpu_vector_math.hpp"

namespace accel::graph::cpu {
namespace {

// Below this many elements a pass over memory is quicker than waking the thread team.
constexpr std::int64_t kParallelElements = std::int64_t{1} << 15;

float apply(BinaryOp op, float a, float b) {
  switch (op) {
    case BinaryOp::add: return a + b;
    case BinaryOp::sub: return a - b;
    case BinaryOp::mul: return a * b;
    case BinaryOp::div: return a / b;
  }
  return a;
}

// h = x + residual into `h`; the shared first step of the norms.
void add_residual(const float* x, const float* residual, std::int64_t width, float* h) {
  if (!residual) {
    if (h != x) std::copy_n(x, width, h);
    return;
  }
#pragma omp simd
  for (std::int64_t c = 0; c < width; ++c) h[c] = x[c] + residual[c];
}

// LayerNorm of one row `h` into y (which may be h), two passes over h for the statistics (the mean first keeps the
// variance exact when the mean is large against the spread).
void normalize_row(const float* h, const float* gamma, const float* beta, std::int64_t width, float eps, float* y) {
  float mean = 0;
#pragma omp simd reduction(+ : mean)
  for (std::int64_t c = 0; c < width; ++c) mean += h[c];
  mean /= static_cast<float>(width);
  float variance = 0;
#pragma omp simd reduction(+ : variance)
  for (std::int64_t c = 0; c < width; ++c) variance += (h[c] - mean) * (h[c] - mean);
  variance /= static_cast<float>(width);
  const float inverse = 1.0f / std::sqrt(variance + eps);
  if (beta) {
#pragma omp simd
    for (std::int64_t c = 0; c < width; ++c) y[c] = (h[c] - mean) * inverse * gamma[c] + beta[c];
  } else {
#pragma omp simd
    for (std::int64_t c = 0; c < width; ++c) y[c] = (h[c] - mean) * inverse * gamma[c];
  }
}

}  // namespace

void gather_rows(const float* table, std::int64_t table_rows, std::int64_t width, const std::int32_t* indices,
                 std::int64_t rows, float* out) {
  for (std::int64_t r = 0; r < rows; ++r) {
    float* row = out + r * width;
    const std::int32_t index = indices[r];
    if (index >= 0 && index < table_rows)
      std::memcpy(row, table + index * width, static_cast<std::size_t>(width) * sizeof(float));
    else
      std::fill_n(row, width, 0.0f);
  }
}

void sequence_positions(const std::int32_t* offsets, std::int64_t sequences, std::int64_t rows,
                        std::int32_t* positions) {
  std::fill_n(positions, rows, 0);
  for (std::int64_t s = 0; s < sequences; ++s)
    for (std::int64_t r = offsets[s]; r < std::min<std::int64_t>(offsets[s + 1], rows); ++r)
      positions[r] = static_cast<std::int32_t>(r - offsets[s]);
}

void unary(Activation activation, const float* x, float* y, std::int64_t count) {
  bias_activation(x, nullptr, 1, count, activation, y);
}

void bias_activation(const float* x, const float* bias, std::int64_t rows, std::int64_t width, Activation activation,
                     float* y) {
  // Blocks of about a row of a wide layer each, so one long row (a unary over a whole tensor) spreads too.
  const std::int64_t count = rows * width, block = bias ? width : std::min<std::int64_t>(count, 4096);
  const std::int64_t blocks = block == 0 ? 0 : (count + block - 1) / block;
#pragma omp parallel for schedule(static) if (count >= kParallelElements)
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::int64_t begin = b * block, n = std::min(block, count - begin);
    if (x != y) std::copy_n(x + begin, n, y + begin);
    bias_activate_row(y + begin, bias, n, activation);
  }
}

void binary(BinaryOp op, const float* a, const float* b, Broadcast b_shape, std::int64_t rows, std::int64_t width,
            float* out, Activation a_activation) {
  // An activated a goes through a chunk of the row on the stack (out may alias a or b), activated there by the
  // vector math of bias_activate_row.
  constexpr std::int64_t kChunk = 1024;
#pragma omp parallel for schedule(static) if (rows * width >= kParallelElements)
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* b_row = b_shape == Broadcast::row ? b : b + r * width;
    const float* a_row = a + r * width;
    float* out_row = out + r * width;
    if (a_activation == Activation::identity) {
      for (std::int64_t c = 0; c < width; ++c) out_row[c] = apply(op, a_row[c], b_row[c]);
      continue;
    }
    float activated[kChunk];
    for (std::int64_t first = 0; first < width; first += kChunk) {
      const std::int64_t n = std::min(kChunk, width - first);
      std::copy_n(a_row + first, n, activated);
      bias_activate_row(activated, nullptr, n, a_activation);
      for (std::int64_t c = 0; c < n; ++c) out_row[first + c] = apply(op, activated[c], b_row[first + c]);
    }
  }
}

void gated(const float* x, std::int64_t rows, std::int64_t width, Activation activation, float* y) {
  constexpr std::int64_t kChunk = 1024;
#pragma omp parallel for schedule(static) if (rows * width >= kParallelElements)
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* gate = x + r * 2 * width;
    const float* up = gate + width;
    float* out = y + r * width;
    float activated[kChunk];
    for (std::int64_t first = 0; first < width; first += kChunk) {
      const std::int64_t n = std::min(kChunk, width - first);
      std::copy_n(gate + first, n, activated);
      bias_activate_row(activated, nullptr, n, activation);
      for (std::int64_t c = 0; c < n; ++c) out[first + c] = activated[c] * up[first + c];
    }
  }
}

// The norms write h into `sum` when asked for it, else into y, and normalise it there: a row of y is read only
// after its own h is complete, so x or residual may alias y.
void layer_norm(const float* x, const float* residual, const float* gamma, const float* beta, std::int64_t rows,
                std::int64_t width, float eps, float* y, float* sum) {
#pragma omp parallel for schedule(static) if (rows * width >= kParallelElements)
  for (std::int64_t r = 0; r < rows; ++r) {
    float* h = (sum ? sum : y) + r * width;
    add_residual(x + r * width, residual ? residual + r * width : nullptr, width, h);
    normalize_row(h, gamma, beta, width, eps, y + r * width);
  }
}

void rms_norm(const float* x, const float* residual, const float* gamma, std::int64_t rows, std::int64_t width,
              float eps, float* y, float* sum) {
#pragma omp parallel for schedule(static) if (rows * width >= kParallelElements)
  for (std::int64_t r = 0; r < rows; ++r) {
    float* h = (sum ? sum : y) + r * width;
    add_residual(x + r * width, residual ? residual + r * width : nullptr, width, h);
    float squares = 0;
#pragma omp simd reduction(+ : squares)
    for (std::int64_t c = 0; c < width; ++c) squares += h[c] * h[c];
    const float inverse = 1.0f / std::sqrt(squares / static_cast<float>(width) + eps);
    float* out = y + r * width;
#pragma omp simd
    for (std::int64_t c = 0; c < width; ++c) out[c] = h[c] * inverse * gamma[c];
  }
}

void embedding_layer_norm(const float* word_table, std::int64_t word_rows, const float* position_table,
                          std::int64_t position_rows, const float* type_row, const std::int32_t* ids,
                          const std::int32_t* offsets, std::int64_t sequences, std::int64_t rows, std::int64_t width,
                          const float* gamma, const float* beta, float eps, float* y) {
  std::fill_n(y, rows * width, 0.0f);
  std::vector<float> h(static_cast<std::size_t>(width));
  for (std::int64_t s = 0; s < sequences; ++s) {
    for (std::int64_t r = offsets[s]; r < std::min<std::int64_t>(offsets[s + 1], rows); ++r) {
      const std::int64_t id = ids[r];
      const std::int64_t position = r - offsets[s];
      for (std::int64_t c = 0; c < width; ++c) {
        float value = id >= 0 && id < word_rows ? word_table[id * width + c] : 0.0f;
        if (position < position_rows) value += position_table[position * width + c];
        if (type_row) value += type_row[c];
        h[static_cast<std::size_t>(c)] = value;
      }
      normalize_row(h.data(), gamma, beta, width, eps, y + r * width);
    }
  }
}

void pool(PoolMode mode, const float* x, std::int64_t width, const std::int32_t* offsets, std::int64_t sequences,
          float* out) {
  for (std::int64_t s = 0; s < sequences; ++s) {
    float* pooled = out + s * width;
    std::fill_n(pooled, width, 0.0f);
    const std::int64_t begin = offsets[s], count = offsets[s + 1] - offsets[s];
    if (count <= 0) continue;
    if (mode == PoolMode::first || mode == PoolMode::last) {
      std::copy_n(x + (mode == PoolMode::first ? begin : begin + count - 1) * width, width, pooled);
      continue;
    }
    if (mode == PoolMode::max) std::copy_n(x + begin * width, width, pooled);
    for (std::int64_t i = 0; i < count; ++i) {
      const float* row = x + (begin + i) * width;
      const float weight = mode == PoolMode::weighted_mean ? static_cast<float>(i + 1) : 1.0f;
      for (std::int64_t c = 0; c < width; ++c)
        pooled[c] = mode == PoolMode::max ? std::max(pooled[c], row[c]) : pooled[c] + weight * row[c];
    }
    const auto n = static_cast<float>(count);  // weighted_mean's weights 1..n sum to n (n + 1) / 2
    const float scale = mode == PoolMode::mean               ? 1.0f / n
                        : mode == PoolMode::mean_sqrt_length ? 1.0f / std::sqrt(n)
                        : mode == PoolMode::weighted_mean    ? 2.0f / (n * (n + 1.0f))
                                                             : 1.0f;
    for (std::int64_t c = 0; c < width; ++c) pooled[c] *= scale;
  }
}

void l2_normalize(const float* x, std::int64_t rows, std::int64_t width, float eps, float* y) {
  for (std::int64_t r = 0; r < rows; ++r) {
    float squares = 0;
    for (std::int64_t c = 0; c < width; ++c) squares += x[r * width + c] * x[r * width + c];
    const float inverse = 1.0f / std::max(std::sqrt(squares), eps);
    for (std::int64_t c = 0; c < width; ++c) y[r * width + c] = x[r * width + c] * inverse;
  }
}

bool cast(DType from, const void* x, DType to, void* y, std::int64_t count) {
  const auto is_float = [](DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16; };
  if (!is_float(from) || !is_float(to)) return false;
  // Through the array conversions (core/float_arrays.hpp), a chunk at a time through f32 between two 16-bit types.
  constexpr std::int64_t kChunk = 1024;
  float widened[kChunk];
  for (std::int64_t first = 0; first < count; first += kChunk) {
    const auto n = static_cast<std::size_t>(std::min(kChunk, count - first));
    float* values = to == DType::f32 ? static_cast<float*>(y) + first : widened;
    if (from == DType::f16) {
      to_floats(std::span<const Half>(static_cast<const Half*>(x) + first, n), values);
    } else if (from == DType::bf16) {
      to_floats(std::span<const BFloat16>(static_cast<const BFloat16*>(x) + first, n), values);
    } else {
      std::memmove(values, static_cast<const float*>(x) + first, n * sizeof(float));  // x may be y
    }
    if (to == DType::f16) {
      to_halves(std::span<const float>(values, n), static_cast<Half*>(y) + first);
    } else if (to == DType::bf16) {
      to_bfloat16s(std::span<const float>(values, n), static_cast<BFloat16*>(y) + first);
    }
  }
  return true;
}

void strided_copy(const float* x, const StridedLayout& layout, float* y) {
  std::int64_t shape[4] = {1, 1, 1, 1};
  std::int64_t strides[4] = {0, 0, 0, 0};
  // Right-aligned into four dimensions, so one loop nest serves every rank.
  for (int d = 0; d < layout.rank; ++d) {
    shape[4 - layout.rank + d] = layout.shape[d];
    strides[4 - layout.rank + d] = layout.strides[d];
  }
  for (std::int64_t i0 = 0; i0 < shape[0]; ++i0)
    for (std::int64_t i1 = 0; i1 < shape[1]; ++i1)
      for (std::int64_t i2 = 0; i2 < shape[2]; ++i2)
        for (std::int64_t i3 = 0; i3 < shape[3]; ++i3)
          *y++ = x[i0 * strides[0] + i1 * strides[1] + i2 * strides[2] + i3 * strides[3]];
}

}  // namespace accel::graph::cpu
