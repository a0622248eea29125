#include "libs/tensor/tensor_operation.hpp"

#include "libs/tensor/cpu_tensor.hpp"

namespace accel {

using tensor::Contract;
using tensor::ElementwiseBinary;
using tensor::ElementwiseTrinary;
using tensor::Kind;
using tensor::Named;
using tensor::Permute;
using tensor::Reduce;

namespace {

void describe(LibraryReport& report) {
  for (LibraryVersion& library : tensor::cpu_tensor_libraries()) report.report(std::move(library));
}

}  // namespace

Result<tensor::Counts> Operation<Contract>::validate(const Contract& r) {
  constexpr std::string_view name = Contract::kName;
  ACCEL_RETURN_IF_ERROR(tensor::check_types(name, Kind::contract, r.dtype, r.compute));
  tensor::Counts counts;
  ACCEL_ASSIGN_OR_RETURN(counts.a, tensor::check_tensor(name, {"a", r.a}));
  ACCEL_ASSIGN_OR_RETURN(counts.b, tensor::check_tensor(name, {"b", r.b}));
  ACCEL_ASSIGN_OR_RETURN(counts.d, tensor::check_tensor(name, {"d", r.d}));
  ACCEL_RETURN_IF_ERROR(tensor::check_extents_agree(name, {{"a", r.a}, {"b", r.b}, {"d", r.d}}));
  ACCEL_RETURN_IF_ERROR(tensor::check_modes_within(name, {"a", r.a}, {{"b", r.b}, {"d", r.d}}));
  ACCEL_RETURN_IF_ERROR(tensor::check_modes_within(name, {"b", r.b}, {{"a", r.a}, {"d", r.d}}));
  ACCEL_RETURN_IF_ERROR(tensor::check_modes_within(name, {"d", r.d}, {{"a", r.a}, {"b", r.b}}));
  return counts;
}

void Operation<Contract>::operands(const Contract& r, const Checked& counts, Operands& operands) {
  tensor::read_tensor(operands, r.a, "a", r.dtype, counts.a);
  tensor::read_tensor(operands, r.b, "b", r.dtype, counts.b);
  tensor::read_addend(operands, r.c, r.dtype, counts.d);
  tensor::write_tensor(operands, r.d, "d", r.dtype, counts.d);
}

Status Operation<Contract>::run_cpu(const Contract& r, const Checked&, std::span<const BufferView> views,
                                    const CpuTarget&) {
  return tensor::cpu_contract(r, views[a], views[b], views[c], views[d]);
}

void Operation<Contract>::describe_cpu(LibraryReport& report) { describe(report); }

Result<tensor::Counts> Operation<ElementwiseBinary>::validate(const ElementwiseBinary& r) {
  constexpr std::string_view name = ElementwiseBinary::kName;
  ACCEL_RETURN_IF_ERROR(tensor::check_types(name, Kind::binary, r.dtype, r.compute));
  ACCEL_RETURN_IF_ERROR(tensor::check_unary(name, "op_a", r.op_a));
  ACCEL_RETURN_IF_ERROR(tensor::check_unary(name, "op_c", r.op_c));
  ACCEL_RETURN_IF_ERROR(tensor::check_binary(name, "op", r.op));
  tensor::Counts counts;
  ACCEL_ASSIGN_OR_RETURN(counts.a, tensor::check_tensor(name, {"a", r.a}));
  ACCEL_ASSIGN_OR_RETURN(counts.d, tensor::check_tensor(name, {"d", r.d}));
  ACCEL_RETURN_IF_ERROR(tensor::check_extents_agree(name, {{"a", r.a}, {"d", r.d}}));
  ACCEL_RETURN_IF_ERROR(tensor::check_modes_within(name, {"a", r.a}, {{"d", r.d}}));
  return counts;
}

void Operation<ElementwiseBinary>::operands(const ElementwiseBinary& r, const Checked& counts, Operands& operands) {
  tensor::read_tensor(operands, r.a, "a", r.dtype, counts.a);
  tensor::read_addend(operands, r.c, r.dtype, counts.d);
  tensor::write_tensor(operands, r.d, "d", r.dtype, counts.d);
}

Status Operation<ElementwiseBinary>::run_cpu(const ElementwiseBinary& r, const Checked&,
                                             std::span<const BufferView> views, const CpuTarget&) {
  return tensor::cpu_binary(r, views[a], views[c], views[d]);
}

void Operation<ElementwiseBinary>::describe_cpu(LibraryReport& report) { describe(report); }

Result<tensor::Counts> Operation<ElementwiseTrinary>::validate(const ElementwiseTrinary& r) {
  constexpr std::string_view name = ElementwiseTrinary::kName;
  ACCEL_RETURN_IF_ERROR(tensor::check_types(name, Kind::trinary, r.dtype, r.compute));
  ACCEL_RETURN_IF_ERROR(tensor::check_unary(name, "op_a", r.op_a));
  ACCEL_RETURN_IF_ERROR(tensor::check_unary(name, "op_b", r.op_b));
  ACCEL_RETURN_IF_ERROR(tensor::check_unary(name, "op_c", r.op_c));
  ACCEL_RETURN_IF_ERROR(tensor::check_binary(name, "op_ab", r.op_ab));
  ACCEL_RETURN_IF_ERROR(tensor::check_binary(name, "op_abc", r.op_abc));
  tensor::Counts counts;
  ACCEL_ASSIGN_OR_RETURN(counts.a, tensor::check_tensor(name, {"a", r.a}));
  ACCEL_ASSIGN_OR_RETURN(counts.b, tensor::check_tensor(name, {"b", r.b}));
  ACCEL_ASSIGN_OR_RETURN(counts.d, tensor::check_tensor(name, {"d", r.d}));
  ACCEL_RETURN_IF_ERROR(tensor::check_extents_agree(name, {{"a", r.a}, {"b", r.b}, {"d", r.d}}));
  ACCEL_RETURN_IF_ERROR(tensor::check_modes_within(name, {"a", r.a}, {{"d", r.d}}));
  ACCEL_RETURN_IF_ERROR(tensor::check_modes_within(name, {"b", r.b}, {{"d", r.d}}));
  return counts;
}

void Operation<ElementwiseTrinary>::operands(const ElementwiseTrinary& r, const Checked& counts, Operands& operands) {
  tensor::read_tensor(operands, r.a, "a", r.dtype, counts.a);
  tensor::read_tensor(operands, r.b, "b", r.dtype, counts.b);
  tensor::read_addend(operands, r.c, r.dtype, counts.d);
  tensor::write_tensor(operands, r.d, "d", r.dtype, counts.d);
}

Status Operation<ElementwiseTrinary>::run_cpu(const ElementwiseTrinary& r, const Checked&,
                                              std::span<const BufferView> views, const CpuTarget&) {
  return tensor::cpu_trinary(r, views[a], views[b], views[c], views[d]);
}

void Operation<ElementwiseTrinary>::describe_cpu(LibraryReport& report) { describe(report); }

Result<tensor::Counts> Operation<Reduce>::validate(const Reduce& r) {
  constexpr std::string_view name = Reduce::kName;
  ACCEL_RETURN_IF_ERROR(tensor::check_types(name, Kind::reduce, r.dtype, r.compute));
  ACCEL_RETURN_IF_ERROR(tensor::check_unary(name, "op_a", r.op_a));
  ACCEL_RETURN_IF_ERROR(tensor::check_binary(name, "op", r.op));
  tensor::Counts counts;
  ACCEL_ASSIGN_OR_RETURN(counts.a, tensor::check_tensor(name, {"a", r.a}));
  ACCEL_ASSIGN_OR_RETURN(counts.d, tensor::check_tensor(name, {"d", r.d}));
  ACCEL_RETURN_IF_ERROR(tensor::check_extents_agree(name, {{"a", r.a}, {"d", r.d}}));
  ACCEL_RETURN_IF_ERROR(tensor::check_modes_within(name, {"d", r.d}, {{"a", r.a}}));
  return counts;
}

void Operation<Reduce>::operands(const Reduce& r, const Checked& counts, Operands& operands) {
  tensor::read_tensor(operands, r.a, "a", r.dtype, counts.a);
  tensor::read_addend(operands, r.c, r.dtype, counts.d);
  tensor::write_tensor(operands, r.d, "d", r.dtype, counts.d);
}

Status Operation<Reduce>::run_cpu(const Reduce& r, const Checked&, std::span<const BufferView> views,
                                  const CpuTarget&) {
  return tensor::cpu_reduce(r, views[a], views[c], views[d]);
}

void Operation<Reduce>::describe_cpu(LibraryReport& report) { describe(report); }

Result<tensor::Counts> Operation<Permute>::validate(const Permute& r) {
  constexpr std::string_view name = Permute::kName;
  ACCEL_RETURN_IF_ERROR(tensor::check_types(name, Kind::permute, r.dtype, r.compute));
  ACCEL_RETURN_IF_ERROR(tensor::check_unary(name, "op_a", r.op_a));
  tensor::Counts counts;
  ACCEL_ASSIGN_OR_RETURN(counts.a, tensor::check_tensor(name, {"a", r.a}));
  ACCEL_ASSIGN_OR_RETURN(counts.d, tensor::check_tensor(name, {"b", r.b}));
  ACCEL_RETURN_IF_ERROR(tensor::check_extents_agree(name, {{"a", r.a}, {"b", r.b}}));
  ACCEL_RETURN_IF_ERROR(tensor::check_modes_within(name, {"a", r.a}, {{"b", r.b}}));
  return counts;
}

void Operation<Permute>::operands(const Permute& r, const Checked& counts, Operands& operands) {
  tensor::read_tensor(operands, r.a, "a", r.dtype, counts.a);
  tensor::write_tensor(operands, r.b, "b", r.dtype, counts.d);
}

Status Operation<Permute>::run_cpu(const Permute& r, const Checked&, std::span<const BufferView> views,
                                   const CpuTarget&) {
  return tensor::cpu_permute(r, views[a], views[b]);
}

void Operation<Permute>::describe_cpu(LibraryReport& report) { describe(report); }

}  // namespace accel
