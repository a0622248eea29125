/// @file
/// The tensor family's entry points: one function per request (accel/libs/tensor/tensor.hpp, cuTENSOR's
/// operations), each sent to `device` and answered by its future, as Device::ask would.
///
/// @code
///   namespace t = accel::tensor;
///   t::contract(device, {.a = t::make(a, "mk", {m, k}), .b = t::make(b, "kn", {k, n}),
///                        .d = t::make(d, "mn", {m, n})}).wait();  // D = A B
/// @endcode
#pragma once

#include "accel/device/device.hpp"
#include "accel/libs/tensor/requests.hpp"

namespace accel::tensor {

/// D = alpha A·B + beta C over the modes A and B share: see Contract.
inline Future<Done> contract(const Device& device, Contract request) { return device.ask(request); }
/// D = op(alpha op_a(A), gamma op_c(C)), A broadcast over D's other modes: see ElementwiseBinary.
inline Future<Done> elementwise_binary(const Device& device, ElementwiseBinary request) { return device.ask(request); }
/// D = op_abc(op_ab(alpha op_a(A), beta op_b(B)), gamma op_c(C)): see ElementwiseTrinary.
inline Future<Done> elementwise_trinary(const Device& device, ElementwiseTrinary request) {
  return device.ask(request);
}
/// D = alpha op(A reduced over the modes D lacks) + beta C: see Reduce.
inline Future<Done> reduce(const Device& device, Reduce request) { return device.ask(request); }
/// B = alpha op_a(A) with B's modes in its own order: see Permute.
inline Future<Done> permute(const Device& device, Permute request) { return device.ask(request); }

}  // namespace accel::tensor
