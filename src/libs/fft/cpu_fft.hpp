// FFTs on the CPU through FFTW: the embedded default without a GPU and the reference in GPU tests. FFTW has no half
// precision: f16 requests run FFTW's f32 transform on widened copies and round the output to f16 once.
//
// Plans are kept in one process-wide cache (FFTW's planner state is process-wide too), keyed by everything a
// plan depends on: type, precision, sign, sizes, strides and distances, in place or not, and the SIMD alignment
// of the arrays, which FFTW requires of the arrays a plan is later executed on.
//
// Plans are made with FFTW_ESTIMATE. FFTW_MEASURE would time candidate algorithms on the arrays themselves, which
// overwrites them while planning (the caller's input, or scratch arrays as large as the transform) and takes from
// milliseconds to seconds per shape; a request must neither lose its input nor stall the device's one thread for
// that long. ESTIMATE reads nothing and writes nothing of the arrays.
#pragma once

#include "accel/core/cache_stats.hpp"
#include "accel/core/library_version.hpp"
#include "accel/libs/fft/fft.hpp"
#include "libs/fft/fft_operation.hpp"

namespace accel::fft {

// Runs a checked FFT (plan_fft_geometry, then Operation<Fft>::operands resolved) on host memory, then its
// normalisation. not_supported if FFTW has no plan for it.
[[nodiscard]] Status run_cpu_fft(const FftGeometry& geometry, const FftOperands& operands);

// "fftw-plans", the process's.
[[nodiscard]] CacheStats fftw_plan_stats();

[[nodiscard]] LibraryVersion fftw_library();

}  // namespace accel::fft
