// BLAS level 1 on 16-bit floats (f16, bf16) on the CPU device, where cblas has no routines: each element is widened
// to f32, computed on in f32 and rounded back once (to nearest even), as cuBLAS's Ex routines compute in f32 and
// round at the end; the reductions (Dot, Nrm2, Asum) sum in double and round their result to the element type. alpha
// is taken as an f32, Rot's c and s as the element type (as cublasRotEx takes them). Copy and Swap move the bits
// untouched; Iamax and Iamin compare as BLAS's reference does (the first of equal magnitudes wins; a NaN never does,
// unless it is first).
#pragma once

#include <span>

#include "accel/libs/blas/level1.hpp"
#include "libs/blas/narrow_floats.hpp"
#include "operation/operation.hpp"

namespace accel::blas {

// Each runs a validated request whose dtype is_narrow_float, on its views in the request's slot order.
void run_narrow(const Axpy& request, std::span<const BufferView> views);
void run_narrow(const Scal& request, std::span<const BufferView> views);
void run_narrow(const Dot& request, std::span<const BufferView> views);
void run_narrow(const Nrm2& request, std::span<const BufferView> views);
void run_narrow(const Asum& request, std::span<const BufferView> views);
void run_narrow(const Iamax& request, std::span<const BufferView> views);
void run_narrow(const Iamin& request, std::span<const BufferView> views);
void run_narrow(const Copy& request, std::span<const BufferView> views);
void run_narrow(const Swap& request, std::span<const BufferView> views);
void run_narrow(const Rot& request, std::span<const BufferView> views);

}  // namespace accel::blas
