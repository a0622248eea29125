/// @file
/// The sparse family's entry points: one function per request (accel/libs/sparse/*.hpp), each sent to `device` and
/// answered by its future, as Device::ask would.
///
/// @code
///   accel::sparse::spmv(device, {.a = matrix, .x = x, .y = y}).wait();  // y = A x
/// @endcode
#pragma once

#include "accel/device/device.hpp"
#include "accel/libs/sparse/requests.hpp"

namespace accel::sparse {

/// y = alpha op(A) x + beta y, A sparse: see SpMV.
inline Future<Done> spmv(const Device& device, SpMV request) { return device.ask(request); }
/// C = alpha op(A) op(B) + beta C, A sparse: see SpMM.
inline Future<Done> spmm(const Device& device, SpMM request) { return device.ask(request); }
/// Solves op(A) y = alpha x for y, A sparse and triangular: see SpSV.
inline Future<Done> spsv(const Device& device, SpSV request) { return device.ask(request); }
/// A sparse matrix written out dense: see ToDense.
inline Future<Done> to_dense(const Device& device, ToDense request) { return device.ask(request); }
/// CSR row offsets expanded to COO row indices: see CsrToCoo.
inline Future<Done> csr_to_coo(const Device& device, CsrToCoo request) { return device.ask(request); }
/// COO row indices compressed to CSR row offsets: see CooToCsr.
inline Future<Done> coo_to_csr(const Device& device, CooToCsr request) { return device.ask(request); }
/// C = alpha (op(A) op(B)) ∘ spy(C) + beta C, C sparse: see SDDMM.
inline Future<Done> sddmm(const Device& device, SDDMM request) { return device.ask(request); }
/// The entries of a sparse product C = A B, counted before its arrays are allocated: see SpGemmCount.
inline Future<Done> spgemm_count(const Device& device, SpGemmCount request) { return device.ask(request); }
/// C = A B, all sparse, into arrays sized by SpGemmCount: see SpGemm.
inline Future<Done> spgemm(const Device& device, SpGemm request) { return device.ask(request); }
/// The nonzeros of a dense matrix, counted per row before its CSR arrays are allocated: see DenseToCsrCount.
inline Future<Done> dense_to_csr_count(const Device& device, DenseToCsrCount request) { return device.ask(request); }
/// A dense matrix's nonzeros as CSR, into arrays sized by DenseToCsrCount: see DenseToCsr.
inline Future<Done> dense_to_csr(const Device& device, DenseToCsr request) { return device.ask(request); }

}  // namespace accel::sparse
