// Tensor requests refused before anything runs, on the CPU device, each with the named error a caller can act on:
// letters, repeated modes, extents that disagree, modes an operation does not allow, dtypes and compute types,
// operators, buffers too small, of another dtype, or shared by an output.
#include <gtest/gtest.h>

#include <string>

#include "tensor_testing.hpp"

namespace accel::tensor {
namespace {

using accel::testing::StatusIs;

class TensorValidationTest : public ::testing::Test {
 protected:
  BufferHandle buffer(DType dtype, std::uint64_t count) {
    return *device_.ask(Allocate{.dtype = dtype, .count = count}).wait();
  }
  template <class Request>
  Status ask(const Request& request) {
    return device_.ask(request).wait().status();
  }
  // D[i,j] = A[i,k] B[k,j], 3 x 4 x 5, all f32.
  Contract matmul() { return {.a = make(a_, "ik", {3, 4}), .b = make(b_, "kj", {4, 5}), .d = make(d_, "ij", {3, 5})}; }

  System system_;
  Device device_ = *Device::open(system_, {.kind = DeviceKind::cpu});
  BufferHandle a_ = buffer(DType::f32, 12), b_ = buffer(DType::f32, 20), d_ = buffer(DType::f32, 15);
};

TEST_F(TensorValidationTest, AWellFormedRequestRuns) { EXPECT_THAT(ask(matmul()), accel::testing::IsOk()); }

TEST_F(TensorValidationTest, ModesAndExtentsThatDoNotPairUpAreRefused) {
  Contract c = matmul();
  c.a = make(a_, "ik", {3});
  EXPECT_THAT(ask(c), StatusIs(Code::invalid_argument, "tensor a has no valid modes"));
  c.a = make(a_, "abcdefghijklm", {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1});
  EXPECT_THAT(ask(c), StatusIs(Code::invalid_argument, "tensor a has no valid modes"));
}

TEST_F(TensorValidationTest, LettersRepeatsAndExtentsAreChecked) {
  Contract c = matmul();
  c.a = make(a_, "i1", {3, 4});
  EXPECT_THAT(ask(c), StatusIs(Code::invalid_argument, "not a letter"));
  c.a = make(a_, "ii", {3, 4});
  EXPECT_THAT(ask(c), StatusIs(Code::invalid_argument, "has mode 'i' twice"));
  c.a = make(a_, "ik", {3, 0});
  EXPECT_THAT(ask(c), StatusIs(Code::invalid_argument, "extent 0"));
  c.a = make(a_, "ik", {3, 6});
  EXPECT_THAT(ask(c), StatusIs(Code::invalid_argument, "mode 'k' has extent 6 in a but 4 in b"));
}

TEST_F(TensorValidationTest, ModesAnOperationDoesNotAllowAreRefused) {
  Contract c = matmul();
  c.d = make(d_, "iz", {3, 5});
  EXPECT_THAT(ask(c), StatusIs(Code::invalid_argument, "mode 'j' of b ('kj') is in neither a"));
  c.d = make(d_, "ij", {3, 5});
  c.a = make(a_, "iky", {3, 4, 1});
  EXPECT_THAT(ask(c), StatusIs(Code::invalid_argument, "mode 'y' of a ('iky') is in neither b"));

  ElementwiseBinary e{.a = make(a_, "iz", {3, 4}), .d = make(d_, "ij", {3, 5})};
  EXPECT_THAT(ask(e), StatusIs(Code::invalid_argument, "mode 'z' of a ('iz') is not in d"));
  Reduce r{.a = make(a_, "ik", {3, 4}), .d = make(d_, "ij", {3, 5})};
  EXPECT_THAT(ask(r), StatusIs(Code::invalid_argument, "mode 'j' of d ('ij') is not in a"));
  Permute p{.a = make(a_, "ikz", {3, 4, 1}), .b = make(d_, "ik", {3, 4})};
  EXPECT_THAT(ask(p), StatusIs(Code::invalid_argument, "mode 'z' of a ('ikz') is not in b"));
}

TEST_F(TensorValidationTest, DtypesAndComputeTypesAreCuTensors) {
  Contract c = matmul();
  c.dtype = DType::i32;
  EXPECT_THAT(ask(c), StatusIs(Code::not_supported, "dtype i32 is not supported"));
  c.dtype = DType::f64;
  c.compute = Compute::tf32;
  EXPECT_THAT(ask(c), StatusIs(Code::not_supported, "contractions of f64 tensors do not compute in tf32"));
  c.compute = static_cast<Compute>(42);
  EXPECT_THAT(ask(c), StatusIs(Code::invalid_argument, "names no compute type"));
  ElementwiseBinary e{.compute = Compute::f16, .a = make(a_, "ij", {3, 5}), .d = make(d_, "ij", {3, 5})};
  EXPECT_THAT(ask(e), StatusIs(Code::not_supported, "elementwise operations of f32 tensors"));
}

TEST_F(TensorValidationTest, OperatorsOutOfRangeAreRefused) {
  ElementwiseBinary e{.op_a = static_cast<Unary>(99), .a = make(a_, "ij", {3, 5}), .d = make(d_, "ij", {3, 5})};
  EXPECT_THAT(ask(e), StatusIs(Code::invalid_argument, "op_a = 99 names no unary operator"));
  Reduce r{.op = static_cast<Binary>(7), .a = make(a_, "ij", {3, 4}), .d = make(d_, "i", {3})};
  EXPECT_THAT(ask(r), StatusIs(Code::invalid_argument, "op = 7 names no binary operator"));
}

TEST_F(TensorValidationTest, BuffersMustHoldTheirTensors) {
  Contract c = matmul();
  c.d = make(d_, "ij", {3, 5});
  c.a = make(buffer(DType::f32, 11), "ik", {3, 4});
  EXPECT_THAT(ask(c), StatusIs(Code::invalid_argument, "a"));
  c.a = make(buffer(DType::f64, 12), "ik", {3, 4});
  EXPECT_THAT(ask(c), StatusIs(Code::invalid_argument, "a"));
  c = matmul();
  c.c = buffer(DType::f32, 14);
  c.beta = 1.0;
  EXPECT_THAT(ask(c), StatusIs(Code::invalid_argument, "c"));
}

TEST_F(TensorValidationTest, AnOutputSharesItsBufferWithNothing) {
  Contract c = matmul();
  c.d = make(a_, "ij", {3, 4});
  c.b = make(b_, "kj", {4, 4});
  EXPECT_THAT(ask(c), StatusIs(Code::invalid_argument, "d"));
  c = matmul();
  c.c = d_;
  EXPECT_THAT(ask(c), StatusIs(Code::invalid_argument, "d"));
}

}  // namespace
}  // namespace accel::tensor
