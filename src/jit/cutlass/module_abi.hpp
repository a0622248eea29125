// The C interface between accel and a CUTLASS module: a shared object that nvcc builds at run time from one
// rendered instantiation (render.hpp), holding both the kernel and the host code that sets up its parameters, so
// host and device code always come from the same template types (see docs/ARCHITECTURE.md, "JIT").
//
// The structs are defined once, here, and the same text is written into every rendered module
// (kCutlassModuleAbiSource), so the module and the runtime cannot disagree on a layout; the module also reports
// sizeof of each struct, which the runtime checks when it loads the module.
//
// Entry points every module exports (extern "C"); `error` receives a message of at most `error_capacity` bytes
// when the result is not kAccelOk:
//   int accel_module_abi(void);                       // kAccelCutlassAbiVersion
//   const char* accel_module_identity(void);          // the instantiation identity the module was rendered from
//   void accel_module_layout(AccelAbiLayout* out);    // sizeof of each struct as the module sees it
//   int accel_workspace_bytes(const void* args, size_t* bytes, char* error, size_t error_capacity);
//   int accel_run(const void* args, void* workspace, size_t workspace_bytes, cudaStream_t stream,
//                 char* error, size_t error_capacity);
// `args` points to the struct of the module's family: AccelGemmArgs, AccelGroupedGemmArgs or AccelConvArgs.
// Pointers inside args are device pointers unless the field says "host". The module enqueues on `stream` only;
// it never synchronizes, allocates or frees.
#pragma once

#include <cstddef>
#include <cstdint>

#define ACCEL_CUTLASS_ABI(...)                                          \
  __VA_ARGS__                                                           \
  namespace accel::jit::cutlass {                                       \
  inline constexpr const char kCutlassModuleAbiSource[] = #__VA_ARGS__; \
  }

// clang-format off
ACCEL_CUTLASS_ABI(
extern "C" {

enum AccelResult { kAccelOk = 0, kAccelInvalidArgument = 1, kAccelNotSupported = 2, kAccelCudaError = 3,
                   kAccelInternal = 4 };

enum { kAccelCutlassAbiVersion = 1 };

struct AccelAbiLayout {
  size_t gemm_args;
  size_t grouped_gemm_args;
  size_t conv_args;
};

/* D = activation(alpha * acc * row_scale[m] * col_scale[n] + beta * C + bias) + residual.
   Absent operands are null; the rendered epilogue says which are used. Element types are the instance's:
   A, B of the input type; C, D, bias and residual of the output type; row_scale and col_scale f32.
   Leading dimensions in elements, of each matrix in its own layout. */
struct AccelGemmArgs {
  int64_t m, n, k;
  const void* a;
  const void* b;
  const void* c;
  void* d;
  int64_t lda, ldb, ldc, ldd;
  float alpha, beta;
  const void* bias;       /* m elements (per row) or n (per column) */
  const float* row_scale; /* m elements */
  const float* col_scale; /* n elements */
  const void* residual;   /* m x n in D's layout, leading dimension ldd */
};

/* One GEMM per group, D_g = alpha * A_g B_g + beta * C_g, every group of the instance's types and layouts.
   Arrays are host memory, `groups` entries each; the module copies what the kernel needs into the workspace. */
struct AccelGroupedGemmArgs {
  int32_t groups;
  const int64_t* m; /* host */
  const int64_t* n; /* host */
  const int64_t* k; /* host */
  const void* const* a; /* host arrays of device pointers */
  const void* const* b;
  const void* const* c;
  void* const* d;
  const int64_t* lda; /* host */
  const int64_t* ldb;
  const int64_t* ldc;
  const int64_t* ldd;
  float alpha, beta;
};

/* A 2-D convolution, NHWC activations and KRSC filters, packed. The instance says which of fprop
   (y = conv(x, w)), dgrad (dx from dy and w) or wgrad (dw from x and dy); `x`, `w` and `y` are always the
   activation, the filter and the output of the forward convolution, whichever of them the direction writes.
   out = alpha * result + beta * out. */
struct AccelConvArgs {
  int64_t n, h, w, c;   /* x: n x h x w x c */
  int64_t k, r, s;      /* w: k x r x s x c */
  int64_t p, q;         /* y: n x p x q x k */
  int32_t pad_h, pad_w, stride_h, stride_w, dilation_h, dilation_w;
  const void* x_in; void* x_out;  /* x_out for dgrad, x_in otherwise */
  const void* w_in; void* w_out;  /* w_out for wgrad */
  const void* y_in; void* y_out;  /* y_out for fprop */
  float alpha, beta;
};

}
)
// clang-format on
