// The families' entry points (accel/blas.hpp, fft.hpp, ...): each sends its own request, whose answer names it, and
// the typed BLAS level-1 forms compute what BLAS does on the CPU device.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <functional>
#include <string>
#include <vector>

#include "accel/blas.hpp"
#include "accel/dnn.hpp"
#include "accel/fft.hpp"
#include "accel/graph.hpp"
#include "accel/jit.hpp"
#include "accel/rand.hpp"
#include "accel/solver.hpp"
#include "accel/sparse.hpp"
#include "accel/tensor.hpp"
#include "testing/status_matchers.hpp"

namespace accel {
namespace {

using testing::IsOk;
using testing::StatusIs;

class FamilyEntryPointsTest : public ::testing::Test {
 protected:
  template <class T>
  Buffer<T> holding(const std::vector<T>& values) {
    Buffer<T> buffer = *device_.allocate<T>(values.size()).wait();
    EXPECT_THAT(device_.upload(std::span<const T>(values), buffer).wait(), IsOk());
    return buffer;
  }
  template <class T>
  std::vector<T> read(const Buffer<T>& buffer) {
    std::vector<T> values(buffer.size());
    EXPECT_THAT(device_.download(buffer, std::span<T>(values)).wait(), IsOk());
    return values;
  }
  System system_;
  Device device_ = *Device::open(system_, {.kind = DeviceKind::cpu});
};

// An empty request through each entry point is refused before anything runs, by the request the entry point is
// named for: its message starts with that request's name (so no entry point sends another's request).
TEST_F(FamilyEntryPointsTest, EachEntryPointSendsItsOwnRequest) {
  struct Case {
    std::string request;
    std::function<Future<Done>(const Device&)> call;
  };
  const std::vector<Case> cases = {
      {Gemm::kName, [](const Device& d) { return blas::gemm(d, {}); }},
      {blas::Axpy::kName, [](const Device& d) { return blas::axpy(d, blas::Axpy{}); }},
      {blas::Scal::kName, [](const Device& d) { return blas::scal(d, blas::Scal{}); }},
      {blas::Dot::kName, [](const Device& d) { return blas::dot(d, blas::Dot{}); }},
      {blas::Nrm2::kName, [](const Device& d) { return blas::nrm2(d, blas::Nrm2{}); }},
      {blas::Asum::kName, [](const Device& d) { return blas::asum(d, blas::Asum{}); }},
      {blas::Iamax::kName, [](const Device& d) { return blas::iamax(d, blas::Iamax{}); }},
      {blas::Copy::kName, [](const Device& d) { return blas::copy(d, blas::Copy{}); }},
      {blas::Swap::kName, [](const Device& d) { return blas::swap(d, blas::Swap{}); }},
      {blas::Rot::kName, [](const Device& d) { return blas::rot(d, blas::Rot{}); }},
      {blas::Iamin::kName, [](const Device& d) { return blas::iamin(d, blas::Iamin{}); }},
      {blas::Gemv::kName, [](const Device& d) { return blas::gemv(d, {}); }},
      {blas::Ger::kName, [](const Device& d) { return blas::ger(d, {}); }},
      {blas::Trsv::kName, [](const Device& d) { return blas::trsv(d, {}); }},
      {blas::Symv::kName, [](const Device& d) { return blas::symv(d, {}); }},
      {blas::Trsm::kName, [](const Device& d) { return blas::trsm(d, {}); }},
      {blas::Syrk::kName, [](const Device& d) { return blas::syrk(d, {}); }},
      {blas::Symm::kName, [](const Device& d) { return blas::symm(d, {}); }},
      {blas::Trmm::kName, [](const Device& d) { return blas::trmm(d, {}); }},
      {blas::Geam::kName, [](const Device& d) { return blas::geam(d, {}); }},
      {Fft::kName, [](const Device& d) { return fft::fft(d, {}); }},
      {rand::Generate::kName, [](const Device& d) { return rand::generate(d, {}); }},
      {solver::Getrf::kName, [](const Device& d) { return solver::getrf(d, {}); }},
      {solver::Getrs::kName, [](const Device& d) { return solver::getrs(d, {}); }},
      {solver::Potrf::kName, [](const Device& d) { return solver::potrf(d, {}); }},
      {solver::Potrs::kName, [](const Device& d) { return solver::potrs(d, {}); }},
      {solver::Syevd::kName, [](const Device& d) { return solver::syevd(d, {}); }},
      {solver::Geqrf::kName, [](const Device& d) { return solver::geqrf(d, {}); }},
      {solver::Orgqr::kName, [](const Device& d) { return solver::orgqr(d, {}); }},
      {solver::Gesvd::kName, [](const Device& d) { return solver::gesvd(d, {}); }},
      {solver::Gesvdj::kName, [](const Device& d) { return solver::gesvdj(d, {}); }},
      {solver::Ormqr::kName, [](const Device& d) { return solver::ormqr(d, {}); }},
      {solver::Gels::kName, [](const Device& d) { return solver::gels(d, {}); }},
      {sparse::SpMV::kName, [](const Device& d) { return sparse::spmv(d, {}); }},
      {sparse::SpMM::kName, [](const Device& d) { return sparse::spmm(d, {}); }},
      {sparse::SpSV::kName, [](const Device& d) { return sparse::spsv(d, {}); }},
      {sparse::ToDense::kName, [](const Device& d) { return sparse::to_dense(d, {}); }},
      {sparse::CsrToCoo::kName, [](const Device& d) { return sparse::csr_to_coo(d, {}); }},
      {sparse::CooToCsr::kName, [](const Device& d) { return sparse::coo_to_csr(d, {}); }},
      {sparse::SDDMM::kName, [](const Device& d) { return sparse::sddmm(d, {}); }},
      {sparse::SpGemmCount::kName, [](const Device& d) { return sparse::spgemm_count(d, {}); }},
      {sparse::SpGemm::kName, [](const Device& d) { return sparse::spgemm(d, {}); }},
      {sparse::DenseToCsrCount::kName, [](const Device& d) { return sparse::dense_to_csr_count(d, {}); }},
      {sparse::DenseToCsr::kName, [](const Device& d) { return sparse::dense_to_csr(d, {}); }},
      {tensor::Contract::kName, [](const Device& d) { return tensor::contract(d, {}); }},
      {tensor::ElementwiseBinary::kName, [](const Device& d) { return tensor::elementwise_binary(d, {}); }},
      {tensor::ElementwiseTrinary::kName, [](const Device& d) { return tensor::elementwise_trinary(d, {}); }},
      {tensor::Reduce::kName, [](const Device& d) { return tensor::reduce(d, {}); }},
      {tensor::Permute::kName, [](const Device& d) { return tensor::permute(d, {}); }},
      {ConvFwd::kName, [](const Device& d) { return dnn::conv_fwd(d, {}); }},
      {ConvBwdData::kName, [](const Device& d) { return dnn::conv_bwd_data(d, {}); }},
      {ConvBwdFilter::kName, [](const Device& d) { return dnn::conv_bwd_filter(d, {}); }},
      {RunGraph::kName, [](const Device& d) { return dnn::run_graph(d, {}); }},
      {LaunchKernel::kName, [](const Device& d) { return jit::launch_kernel(d, {}); }},
      {CutlassGemm::kName, [](const Device& d) { return jit::cutlass_gemm(d, {}); }},
      {CutlassGroupedGemm::kName, [](const Device& d) { return jit::cutlass_grouped_gemm(d, {}); }},
      {CutlassConv::kName, [](const Device& d) { return jit::cutlass_conv(d, {}); }},
      {graph::Execute::kName, [](const Device& d) { return graph::execute(d, {}); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.request);
    const Status answer = c.call(device_).wait().status();
    ASSERT_FALSE(answer.ok());
    EXPECT_EQ(answer.message().substr(0, c.request.size()), c.request) << answer.to_string();
  }
}

TEST_F(FamilyEntryPointsTest, TypedLevelOneComputesOnWholeBuffers) {
  const std::vector<double> xs = {1.5, -2.0, 3.25, 0.5, -7.0};
  const std::vector<double> ys = {0.25, 4.0, -1.0, 2.0, 1.0};
  Buffer<double> x = holding(xs), y = holding(ys), result = holding(std::vector<double>{0.0});

  ASSERT_THAT(blas::dot(device_, x, y, result).wait(), IsOk());
  double dot = 0, sum = 0, squares = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) dot += xs[i] * ys[i], sum += std::abs(xs[i]), squares += xs[i] * xs[i];
  EXPECT_DOUBLE_EQ(read(result)[0], dot);
  ASSERT_THAT(blas::asum(device_, x, result).wait(), IsOk());
  EXPECT_DOUBLE_EQ(read(result)[0], sum);
  ASSERT_THAT(blas::nrm2(device_, x, result).wait(), IsOk());
  EXPECT_NEAR(read(result)[0], std::sqrt(squares), 1e-15 * std::sqrt(squares));
  Buffer<std::int32_t> index = holding(std::vector<std::int32_t>{-1});
  ASSERT_THAT(blas::iamax(device_, x, index).wait(), IsOk());
  EXPECT_EQ(read(index)[0], 5);  // |-7| at the fifth element, 1-based

  ASSERT_THAT(blas::axpy(device_, 2.0, x, y).wait(), IsOk());
  ASSERT_THAT(blas::scal(device_, -0.5, y).wait(), IsOk());
  const std::vector<double> got = read(y);
  for (std::size_t i = 0; i < xs.size(); ++i) EXPECT_DOUBLE_EQ(got[i], -0.5 * (2.0 * xs[i] + ys[i])) << i;
}

TEST_F(FamilyEntryPointsTest, TypedLevelOneTakesFloatBuffersToo) {
  Buffer<float> x = holding(std::vector<float>{3.0f, 4.0f}), norm = holding(std::vector<float>{0.0f});
  ASSERT_THAT(blas::nrm2(device_, x, norm).wait(), IsOk());
  EXPECT_FLOAT_EQ(read(norm)[0], 5.0f);
}

// Complex vectors: a complex alpha, dot unconjugated and dotc conjugated, nrm2 and asum into (and as) the real type.
TEST_F(FamilyEntryPointsTest, TypedLevelOneTakesComplexBuffers) {
  using C = std::complex<double>;
  const std::vector<C> xs = {{1, 2}, {-3, 0.5}, {0, -4}}, ys = {{0.5, -1}, {2, 2}, {-1, 0}};
  Buffer<C> x = holding(xs), y = holding(ys), result = holding(std::vector<C>{0});
  C dotu = 0, dotc = 0;
  double squares = 0, sum = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    dotu += xs[i] * ys[i], dotc += std::conj(xs[i]) * ys[i];
    squares += std::norm(xs[i]), sum += std::abs(xs[i].real()) + std::abs(xs[i].imag());
  }
  ASSERT_THAT(blas::dot(device_, x, y, result).wait(), IsOk());
  EXPECT_EQ(read(result)[0], dotu);
  ASSERT_THAT(blas::dotc(device_, x, y, result).wait(), IsOk());
  EXPECT_EQ(read(result)[0], dotc);
  EXPECT_EQ(*blas::dotc(device_, x, y).wait(), dotc);
  Buffer<double> norm = holding(std::vector<double>{0});
  ASSERT_THAT(blas::nrm2(device_, x, norm).wait(), IsOk());
  EXPECT_NEAR(read(norm)[0], std::sqrt(squares), 1e-15 * std::sqrt(squares));
  EXPECT_EQ(*blas::asum(device_, x).wait(), sum);
  EXPECT_EQ(*blas::iamax(device_, x).wait(), 3);  // |0| + |-4|: the largest sum of the parts' magnitudes

  ASSERT_THAT(blas::axpy(device_, C(0.5, -1), x, y).wait(), IsOk());
  ASSERT_THAT(blas::scal(device_, C(0, 2), y).wait(), IsOk());
  const std::vector<C> got = read(y);
  for (std::size_t i = 0; i < xs.size(); ++i) EXPECT_EQ(got[i], C(0, 2) * (C(0.5, -1) * xs[i] + ys[i])) << i;
}

// 16-bit vectors: a float alpha, results of the element type (values chosen exact in f16, so the answers are too).
TEST_F(FamilyEntryPointsTest, TypedLevelOneTakesSixteenBitBuffers) {
  const std::vector<float> xs = {1.5f, -2.0f, 0.25f}, ys = {4.0f, 0.5f, -1.0f};
  std::vector<Half> x16, y16;
  for (std::size_t i = 0; i < xs.size(); ++i) x16.push_back(to_half(xs[i])), y16.push_back(to_half(ys[i]));
  Buffer<Half> x = holding(x16), y = holding(y16), norm = holding(std::vector<Half>{Half{0}});
  EXPECT_EQ(to_float(*blas::dot(device_, x, y).wait()), 4.75f);
  EXPECT_EQ(to_float(*blas::asum(device_, x).wait()), 3.75f);
  EXPECT_EQ(*blas::iamax(device_, x).wait(), 2);
  ASSERT_THAT(blas::nrm2(device_, x, norm).wait(), IsOk());
  EXPECT_EQ(read(norm)[0].bits, to_half(std::sqrt(6.3125f)).bits);

  ASSERT_THAT(blas::axpy(device_, 2.0f, x, y).wait(), IsOk());
  ASSERT_THAT(blas::scal(device_, -0.5f, y).wait(), IsOk());
  const std::vector<Half> got = read(y);
  for (std::size_t i = 0; i < xs.size(); ++i) EXPECT_EQ(to_float(got[i]), -0.5f * (2.0f * xs[i] + ys[i])) << i;

  Buffer<BFloat16> b = holding(std::vector<BFloat16>{to_bfloat16(3.0f), to_bfloat16(4.0f)});
  EXPECT_EQ(to_float(*blas::nrm2(device_, b).wait()), 5.0f);
}

// Vectors of two lengths are refused by name before anything runs: y keeps its values.
TEST_F(FamilyEntryPointsTest, TypedLevelOneRefusesVectorsOfTwoLengths) {
  Buffer<double> x = holding(std::vector<double>{1, 2, 3}), y = holding(std::vector<double>{5, 6});
  Buffer<double> result = holding(std::vector<double>{0.0});
  const Status axpy = blas::axpy(device_, 1.0, x, y).wait().status();
  EXPECT_THAT(axpy, StatusIs(Code::invalid_argument));
  EXPECT_EQ(axpy.message(), "blas::axpy: x holds 3 elements and y 2; the typed form takes vectors of one length");
  EXPECT_THAT(blas::dot(device_, x, y, result).wait().status(), StatusIs(Code::invalid_argument));
  EXPECT_EQ(read(y), (std::vector<double>{5, 6}));
}

// dot, nrm2, asum and iamax as host values: the same numbers as into a buffer; a refused request or a freed
// operand answers the future with its error.
TEST_F(FamilyEntryPointsTest, TypedLevelOneAnswersScalarsAsHostValues) {
  const std::vector<double> xs = {1.5, -2.0, 3.25, 0.5, -7.0};
  const std::vector<double> ys = {0.25, 4.0, -1.0, 2.0, 1.0};
  Buffer<double> x = holding(xs), y = holding(ys), result = holding(std::vector<double>{0.0});
  const auto value = []<class T>(Future<T> future) {
    Result<T> got = future.wait();
    EXPECT_THAT(got, IsOk());
    return got.ok() ? *got : T{-1};
  };
  ASSERT_THAT(blas::nrm2(device_, x, result).wait(), IsOk());
  EXPECT_EQ(value(blas::nrm2(device_, x)), read(result)[0]);
  ASSERT_THAT(blas::asum(device_, x, result).wait(), IsOk());
  EXPECT_EQ(value(blas::asum(device_, x)), read(result)[0]);
  EXPECT_EQ(value(blas::iamax(device_, x)), 5);
  Buffer<float> f = holding(std::vector<float>{3.0f, 4.0f});
  EXPECT_EQ(value(blas::nrm2(device_, f)), 5.0f);
  ASSERT_THAT(blas::dot(device_, x, y, result).wait(), IsOk());
  const double dot = read(result)[0];
  std::vector<Future<double>> many;  // sent back to back, none waited for until all were sent
  for (int i = 0; i < 50; ++i) many.push_back(blas::dot(device_, x, y));
  for (Future<double>& each : many) EXPECT_EQ(value(std::move(each)), dot);

  Buffer<double> shorter = holding(std::vector<double>{1, 2});
  EXPECT_THAT(blas::dot(device_, x, shorter).wait().status(),
              StatusIs(Code::invalid_argument, "blas::dot: x holds 5 elements and y 2"));
  ASSERT_THAT(device_.free(y).wait(), IsOk());
  EXPECT_THAT(blas::dot(device_, x, y).wait().status(), StatusIs(Code::stale_handle));
}

// A typed call on a freed buffer meets the device's generation check like any request.
TEST_F(FamilyEntryPointsTest, TypedLevelOneOnAFreedBufferIsStale) {
  Buffer<double> x = holding(std::vector<double>{1, 2, 3});
  ASSERT_THAT(device_.free(x).wait(), IsOk());
  EXPECT_THAT(blas::scal(device_, 2.0, x).wait().status(), StatusIs(Code::stale_handle));
}

}  // namespace
}  // namespace accel
