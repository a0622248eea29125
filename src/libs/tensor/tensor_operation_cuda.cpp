#include "libs/tensor/tensor_operation_cuda.hpp"

namespace accel {
namespace {

using tensor::Contract;
using tensor::ElementwiseBinary;
using tensor::ElementwiseTrinary;
using tensor::Kind;
using tensor::Permute;
using tensor::PlanSpec;
using tensor::Reduce;
using tensor::RunArgs;
using tensor::Tensor;

Tensor without_buffer(Tensor tensor) {
  tensor.buffer = {};
  return tensor;
}

PlanSpec spec_of(const Contract& r) {
  return {.kind = Kind::contract,
          .dtype = r.dtype,
          .compute = tensor::resolved(r.compute, r.dtype),
          .tensors = {without_buffer(r.a), without_buffer(r.b), without_buffer(r.d)}};
}

PlanSpec spec_of(const ElementwiseBinary& r) {
  return {.kind = Kind::binary,
          .dtype = r.dtype,
          .compute = tensor::resolved(r.compute, r.dtype),
          .unary = {r.op_a, tensor::Unary::identity, r.op_c},
          .binary = {r.op, tensor::Binary::add},
          .tensors = {without_buffer(r.a), Tensor{}, without_buffer(r.d)}};
}

PlanSpec spec_of(const ElementwiseTrinary& r) {
  return {.kind = Kind::trinary,
          .dtype = r.dtype,
          .compute = tensor::resolved(r.compute, r.dtype),
          .unary = {r.op_a, r.op_b, r.op_c},
          .binary = {r.op_ab, r.op_abc},
          .tensors = {without_buffer(r.a), without_buffer(r.b), without_buffer(r.d)}};
}

PlanSpec spec_of(const Reduce& r) {
  return {.kind = Kind::reduce,
          .dtype = r.dtype,
          .compute = tensor::resolved(r.compute, r.dtype),
          .unary = {r.op_a, tensor::Unary::identity, tensor::Unary::identity},
          .binary = {r.op, tensor::Binary::add},
          .tensors = {without_buffer(r.a), Tensor{}, without_buffer(r.d)}};
}

PlanSpec spec_of(const Permute& r) {
  return {.kind = Kind::permute,
          .dtype = r.dtype,
          .compute = tensor::resolved(r.compute, r.dtype),
          .unary = {r.op_a, tensor::Unary::identity, tensor::Unary::identity},
          .tensors = {without_buffer(r.a), Tensor{}, without_buffer(r.b)}};
}

// C: the buffer `c`, or D read in place.
const void* addend(const BufferView& c, const BufferView& d) { return c.data != nullptr ? c.data : d.data; }

RunArgs args_of(const Contract& r, std::span<const BufferView> v) {
  using Op = Operation<Contract>;
  return {.alpha = r.alpha,
          .beta = r.beta,
          .a = v[Op::a].data,
          .b = v[Op::b].data,
          .c = addend(v[Op::c], v[Op::d]),
          .d = v[Op::d].data};
}

RunArgs args_of(const ElementwiseBinary& r, std::span<const BufferView> v) {
  using Op = Operation<ElementwiseBinary>;
  return {.alpha = r.alpha, .gamma = r.gamma, .a = v[Op::a].data, .c = addend(v[Op::c], v[Op::d]), .d = v[Op::d].data};
}

RunArgs args_of(const ElementwiseTrinary& r, std::span<const BufferView> v) {
  using Op = Operation<ElementwiseTrinary>;
  return {.alpha = r.alpha,
          .beta = r.beta,
          .gamma = r.gamma,
          .a = v[Op::a].data,
          .b = v[Op::b].data,
          .c = addend(v[Op::c], v[Op::d]),
          .d = v[Op::d].data};
}

RunArgs args_of(const Reduce& r, std::span<const BufferView> v) {
  using Op = Operation<Reduce>;
  return {.alpha = r.alpha, .beta = r.beta, .a = v[Op::a].data, .c = addend(v[Op::c], v[Op::d]), .d = v[Op::d].data};
}

RunArgs args_of(const Permute& r, std::span<const BufferView> v) {
  using Op = Operation<Permute>;
  return {.alpha = r.alpha, .a = v[Op::a].data, .d = v[Op::b].data};
}

}  // namespace

template <class Request>
Result<tensor::TensorPlan> TensorCudaOperation<Request>::plan(const Request& request, const Checked&,
                                                              CudaTarget& target) {
  return tensor::plan_cutensor(target, spec_of(request));
}

template <class Request>
Status TensorCudaOperation<Request>::run(const Request& request, const Checked&, const Plan& plan,
                                         std::span<const BufferView> views, CudaRun& run) {
  return tensor::run_cutensor(plan, args_of(request, views), run);
}

template struct TensorCudaOperation<Contract>;
template struct TensorCudaOperation<ElementwiseBinary>;
template struct TensorCudaOperation<ElementwiseTrinary>;
template struct TensorCudaOperation<Reduce>;
template struct TensorCudaOperation<Permute>;

}  // namespace accel
