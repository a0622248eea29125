// Dense solver requests that are wrong are refused, naming what is wrong, before anything runs (the CPU device;
// the checks are the operation contract's, shared by every device).
#include <gtest/gtest.h>

#include <random>

#include "solver_testing.hpp"

namespace accel::solver {
namespace {

using accel::testing::IsOk;
using accel::testing::StatusIs;
using testing::download;
using testing::upload;

class SolverValidationTest : public ::testing::Test {
 protected:
  template <class Request>
  Status run(const Request& request) {
    return device_.ask(request).wait().status();
  }
  Getrf getrf() { return {.n = 4, .a = a_, .ipiv = ipiv_, .info = info_}; }
  Getrs getrs() { return {.n = 4, .nrhs = 2, .a = a_, .ipiv = ipiv_, .b = b_}; }
  Buffer<std::int32_t> pivots(std::int32_t p0, std::int32_t p1, std::int32_t p2, std::int32_t p3) {
    return upload(device_, std::vector<std::int32_t>{p0, p1, p2, p3});
  }

  System system_;
  Device device_ = *Device::open(system_, {.kind = DeviceKind::cpu});
  const std::vector<float> a_host_ = std::vector<float>(16, 1.5f);
  Buffer<float> a_ = upload(device_, a_host_);
  Buffer<float> b_ = upload(device_, std::vector<float>(8, 1.0f));
  Buffer<double> a64_ = upload(device_, std::vector<double>(16, 1.0));
  Buffer<std::int32_t> ipiv_ = upload(device_, std::vector<std::int32_t>(4));
  Buffer<std::int32_t> info_ = upload(device_, std::vector<std::int32_t>(1));
};

TEST_F(SolverValidationTest, DtypesOtherThanFloatingPointAreNotSupported) {
  for (DType dtype : {DType::i32, DType::f16, DType::bf16}) {
    Getrf request = getrf();
    request.dtype = dtype;
    EXPECT_THAT(run(request), StatusIs(Code::not_supported, "solver::Getrf: dtype " + std::string(to_string(dtype)) +
                                                                " is not supported; it takes f32, f64, c64 or c128"));
  }
}

// Every request takes c64 and c128: past the dtype check, the f32 buffers are what is wrong.
TEST_F(SolverValidationTest, ComplexDtypesPassEveryRequestsDtypeCheck) {
  for (DType dtype : {DType::c64, DType::c128}) {
    const std::string needs = "operand 'a' holds f32 but the request needs " + std::string(to_string(dtype));
    Getrf getrf_request = getrf();
    getrf_request.dtype = dtype;
    EXPECT_THAT(run(getrf_request), StatusIs(Code::invalid_argument, needs));
    Getrs getrs_request = getrs();
    getrs_request.dtype = dtype;
    EXPECT_THAT(run(getrs_request), StatusIs(Code::invalid_argument, needs));
    EXPECT_THAT(run(Potrf{.dtype = dtype, .n = 4, .a = a_}), StatusIs(Code::invalid_argument, needs));
    EXPECT_THAT(run(Potrs{.dtype = dtype, .n = 4, .nrhs = 2, .a = a_, .b = b_}),
                StatusIs(Code::invalid_argument, needs));
    Buffer<float> w = upload(device_, std::vector<float>(4));
    EXPECT_THAT(run(Syevd{.dtype = dtype, .n = 4, .a = a_, .w = w}), StatusIs(Code::invalid_argument, needs));
    EXPECT_THAT(run(Geqrf{.dtype = dtype, .m = 4, .n = 4, .a = a_, .tau = w}), StatusIs(Code::invalid_argument, needs));
    EXPECT_THAT(run(Orgqr{.dtype = dtype, .m = 4, .n = 4, .k = 4, .a = a_, .tau = w}),
                StatusIs(Code::invalid_argument, needs));
    EXPECT_THAT(run(Ormqr{.dtype = dtype, .m = 4, .n = 2, .k = 2, .a = a_, .tau = w, .c = b_}),
                StatusIs(Code::invalid_argument, needs));
    EXPECT_THAT(
        run(Gesvd{.dtype = dtype, .job_u = SvdJob::none, .job_vt = SvdJob::none, .m = 4, .n = 4, .a = a_, .s = w}),
        StatusIs(Code::invalid_argument, needs));
    EXPECT_THAT(run(Gels{.dtype = dtype, .m = 4, .n = 2, .nrhs = 2, .a = a_, .b = b_}),
                StatusIs(Code::invalid_argument, needs));
    EXPECT_THAT(run(Gesvdj{.dtype = dtype, .job = SvdJob::none, .m = 4, .n = 4, .a = a_, .s = w}),
                StatusIs(Code::invalid_argument, needs));
  }
  EXPECT_EQ(download(device_, a_), a_host_);
}

TEST_F(SolverValidationTest, SizesAndLeadingDimensionsAreChecked) {
  Getrf negative = getrf();
  negative.n = -1;
  EXPECT_THAT(run(negative), StatusIs(Code::invalid_argument, "solver::Getrf: n = -1 is negative"));
  Getrf short_lda = getrf();
  short_lda.lda = 3;
  EXPECT_THAT(run(short_lda), StatusIs(Code::invalid_argument, "lda = 3 is less than max(1, 4), the rows of a"));
  Getrs short_ldb = getrs();
  short_ldb.ldb = 2;
  EXPECT_THAT(run(short_ldb), StatusIs(Code::invalid_argument, "solver::Getrs: ldb = 2 is less than max(1, 4)"));
  Getrs negative_nrhs = getrs();
  negative_nrhs.nrhs = -2;
  EXPECT_THAT(run(negative_nrhs), StatusIs(Code::invalid_argument, "nrhs = -2 is negative"));
  Getrf huge = getrf();
  huge.n = std::int64_t{1} << 31;
  EXPECT_THAT(run(huge), StatusIs(Code::not_supported, "exceeds the 32-bit integers"));
  Potrf no_batch{.n = 4, .batch = 0, .a = a_};
  EXPECT_THAT(run(no_batch), StatusIs(Code::invalid_argument, "solver::Potrf: batch = 0 must be at least 1"));
  Potrf negative_stride{.n = 2, .batch = 2, .stride_a = -4, .a = a_};
  EXPECT_THAT(run(negative_stride), StatusIs(Code::invalid_argument, "stride_a = -4 is negative"));
}

TEST_F(SolverValidationTest, OverlappingMatricesOfAWrittenBatchAreRefused) {
  Potrf overlapping{.n = 2, .lda = 2, .batch = 3, .stride_a = 3, .a = a_};
  EXPECT_THAT(run(overlapping), StatusIs(Code::invalid_argument, "stride_a = 3 makes the 3 matrices of a overlap"));
  // Read matrices may share elements: Getrs's A.
  const Buffer<float> a = upload(device_, std::vector<float>{2, 1, 1, 3, 0});
  const Buffer<std::int32_t> ipiv = pivots(2, 2, 1, 2);
  EXPECT_THAT(run(Getrs{.n = 2, .nrhs = 1, .batch = 2, .stride_a = 1, .a = a, .ipiv = ipiv, .b = b_}), IsOk());
}

TEST_F(SolverValidationTest, EnumsOutsideTheirValuesAreRefused) {
  EXPECT_THAT(run(Potrf{.fill = static_cast<Fill>(7), .n = 4, .a = a_}),
              StatusIs(Code::invalid_argument, "solver::Potrf: fill = 7 is neither lower nor upper"));
  Getrs transpose = getrs();
  transpose.transpose = static_cast<Transpose>(9);
  EXPECT_THAT(run(transpose), StatusIs(Code::invalid_argument, "transpose = 9"));
  Buffer<float> w = upload(device_, std::vector<float>(4));
  EXPECT_THAT(run(Syevd{.job = static_cast<EigenJob>(5), .n = 4, .a = a_, .w = w}),
              StatusIs(Code::invalid_argument, "solver::Syevd: job = 5"));
}

TEST_F(SolverValidationTest, BuffersTooSmallOrOfTheWrongDtypeAreRefused) {
  Getrf small = getrf();
  small.n = 5;
  EXPECT_THAT(run(small), StatusIs(Code::invalid_argument, "operand 'a': elements [0, 0 + 25) lie outside"));
  Getrf wrong_a = getrf();
  wrong_a.a = a64_;
  EXPECT_THAT(run(wrong_a), StatusIs(Code::invalid_argument, "operand 'a' holds f64 but the request needs f32"));
  Getrf float_pivots = getrf();
  float_pivots.ipiv = b_;
  EXPECT_THAT(run(float_pivots),
              StatusIs(Code::invalid_argument, "operand 'ipiv' holds f32 but the request needs i32"));
  Getrf few_pivots = getrf();
  few_pivots.batch = 2;
  const Buffer<float> two = upload(device_, std::vector<float>(32));
  few_pivots.a = two;
  EXPECT_THAT(run(few_pivots), StatusIs(Code::invalid_argument, "operand 'ipiv'"));
  Getrf no_a = getrf();
  no_a.a = {};
  EXPECT_THAT(run(no_a), StatusIs(Code::invalid_argument, "operand 'a' is a null buffer handle"));
}

TEST_F(SolverValidationTest, OutputsSharingABufferAreRefusedAndNothingRuns) {
  Getrf shared_info = getrf();
  shared_info.info = ipiv_;
  EXPECT_THAT(run(shared_info), StatusIs(Code::invalid_argument, "aliases"));
  Getrs b_is_a = getrs();
  b_is_a.nrhs = 4;
  b_is_a.b = a_;
  EXPECT_THAT(run(b_is_a), StatusIs(Code::invalid_argument, "operand 'b' aliases operand 'a'"));
  Potrs potrs_b_is_a{.n = 4, .nrhs = 1, .a = a_, .b = a_};
  EXPECT_THAT(run(potrs_b_is_a), StatusIs(Code::invalid_argument, "aliases"));
  EXPECT_THAT(run(Syevd{.n = 4, .a = a_, .w = a_}), StatusIs(Code::invalid_argument, "aliases"));
  EXPECT_EQ(download(device_, a_), a_host_);
}

TEST_F(SolverValidationTest, PivotsOutsideTheMatrixAreRefusedOnTheCpu) {
  Getrs request = getrs();
  const Buffer<std::int32_t> outside = pivots(1, 2, 5, 4);
  request.ipiv = outside;
  EXPECT_THAT(run(request),
              StatusIs(Code::invalid_argument, "solver::Getrs: ipiv[2] = 5 is not a row of A (1 to 4): pass Getrf's"));
  request.ipiv = ipiv_;  // zeros: never written by a Getrf
  EXPECT_THAT(run(request), StatusIs(Code::invalid_argument, "ipiv[0] = 0 is not a row of A"));
}

TEST_F(SolverValidationTest, ABadPivotIsNamedByItsMatrixAndIndexAndNothingIsSolved) {
  // Two 2 x 2 matrices of a_: matrix 1's second pivot is 3. Checked even when there is nothing to solve.
  const Buffer<std::int32_t> ipiv = pivots(2, 2, 1, 3);
  Getrs request{.n = 2, .nrhs = 2, .batch = 2, .stride_a = 4, .stride_b = 4, .a = a_, .ipiv = ipiv, .b = b_};
  const std::string message =
      "solver::Getrs (matrix 1 of the batch of 2, from 0): ipiv[3] = 3 is not a row of A (1 to 2): pass Getrf's pivots";
  EXPECT_THAT(run(request), StatusIs(Code::invalid_argument, message));
  EXPECT_EQ(download(device_, b_), std::vector<float>(8, 1.0f));
  request.nrhs = 0;
  EXPECT_THAT(run(request), StatusIs(Code::invalid_argument, message));
}

TEST_F(SolverValidationTest, QrAndSvdShapesAndVectorsAreChecked) {
  Buffer<float> tau = upload(device_, std::vector<float>(4));
  EXPECT_THAT(run(Orgqr{.m = 2, .n = 3, .k = 1, .a = a_, .tau = tau}),
              StatusIs(Code::invalid_argument, "solver::Orgqr: needs m >= n >= k, not m = 2, n = 3, k = 1"));
  EXPECT_THAT(run(Orgqr{.m = 4, .n = 2, .k = 3, .a = a_, .tau = tau}), StatusIs(Code::invalid_argument, "k = 3"));
  EXPECT_THAT(run(Geqrf{.m = 4, .n = 4, .a = a_, .tau = a_}), StatusIs(Code::invalid_argument, "aliases"));
  Buffer<float> s = upload(device_, std::vector<float>(4)), u = upload(device_, std::vector<float>(16));
  EXPECT_THAT(run(Gesvd{.job_u = SvdJob::none, .m = 4, .n = 4, .a = a_, .s = s, .u = u}),
              StatusIs(Code::invalid_argument, "solver::Gesvd: a buffer was given for u but its job is none"));
  EXPECT_THAT(run(Gesvd{.job_vt = static_cast<SvdJob>(4), .m = 4, .n = 4, .a = a_, .s = s, .u = u}),
              StatusIs(Code::invalid_argument, "job_vt = 4 is neither none, thin nor full"));
  // Full U of a 4 x 2 matrix is 4 x 4: 16 elements; Vᵀ (thin) is 2 x 2.
  Buffer<float> small_u = upload(device_, std::vector<float>(8)), vt = upload(device_, std::vector<float>(4));
  EXPECT_THAT(run(Gesvd{.job_u = SvdJob::full, .m = 4, .n = 2, .a = a_, .s = s, .u = small_u, .vt = vt}),
              StatusIs(Code::invalid_argument, "operand 'u': elements [0, 0 + 16) lie outside"));
  EXPECT_THAT(run(Gesvd{.job_u = SvdJob::full, .m = 4, .n = 2, .a = a_, .s = s, .u = u, .vt = vt}), IsOk());
}

// Each refused Ormqr or Gels leaves every buffer as it was: nothing ran.
TEST_F(SolverValidationTest, OrmqrShapesLeadingDimensionsBuffersAndDtypesAreChecked) {
  Buffer<float> tau = upload(device_, std::vector<float>(4)), c = upload(device_, std::vector<float>(8, 2.0f));
  const Ormqr good{.m = 4, .n = 2, .k = 2, .a = a_, .tau = tau, .c = c};  // A 4 x 2 of a_'s 16, C 4 x 2
  Ormqr request = good;
  request.k = 5;
  EXPECT_THAT(run(request),
              StatusIs(Code::invalid_argument, "solver::Ormqr: needs k <= m (Q is 4 x 4 on the left), not k = 5"));
  request = good;
  request.side = Side::right;
  request.k = 3;
  EXPECT_THAT(run(request),
              StatusIs(Code::invalid_argument, "solver::Ormqr: needs k <= n (Q is 2 x 2 on the right), not k = 3"));
  request = good;
  request.lda = 3;
  EXPECT_THAT(run(request),
              StatusIs(Code::invalid_argument, "solver::Ormqr: lda = 3 is less than max(1, 4), the rows of a"));
  request = good;
  request.ldc = 2;
  EXPECT_THAT(run(request), StatusIs(Code::invalid_argument, "solver::Ormqr: ldc = 2 is less than max(1, 4)"));
  request = good;
  request.n = 3;  // C 4 x 3: 12 elements of 8
  EXPECT_THAT(run(request), StatusIs(Code::invalid_argument, "operand 'c': elements [0, 0 + 12) lie outside"));
  request = good;
  request.dtype = DType::f64;
  EXPECT_THAT(run(request), StatusIs(Code::invalid_argument, "operand 'a' holds f32 but the request needs f64"));
  request = good;
  request.dtype = DType::i32;
  EXPECT_THAT(run(request), StatusIs(Code::not_supported, "solver::Ormqr: dtype i32 is not supported"));
  request = good;
  request.side = static_cast<Side>(3);
  EXPECT_THAT(run(request), StatusIs(Code::invalid_argument, "solver::Ormqr: side = 3 is neither left nor right"));
  request = good;
  request.transpose = static_cast<Transpose>(2);
  EXPECT_THAT(run(request), StatusIs(Code::invalid_argument, "transpose = 2 is neither none nor transpose"));
  request = good;
  request.c = a_;
  EXPECT_THAT(run(request), StatusIs(Code::invalid_argument, "aliases"));
  EXPECT_EQ(download(device_, c), std::vector<float>(8, 2.0f));
  EXPECT_EQ(download(device_, a_), a_host_);
  EXPECT_THAT(run(good), IsOk());
}

TEST_F(SolverValidationTest, GelsShapesLeadingDimensionsBuffersAndDtypesAreChecked) {
  const Gels good{.m = 4, .n = 2, .nrhs = 2, .a = a_, .b = b_};  // A 4 x 2 of a_'s 16, B 4 x 2
  Gels request = good;
  request.m = 2;
  request.n = 3;
  EXPECT_THAT(run(request), StatusIs(Code::not_supported,
                                     "solver::Gels: m = 2 < n = 3: the minimum-norm solution of an underdetermined "
                                     "system is not supported"));
  request = good;
  request.lda = 2;
  EXPECT_THAT(run(request),
              StatusIs(Code::invalid_argument, "solver::Gels: lda = 2 is less than max(1, 4), the rows of a"));
  request = good;
  request.ldb = 3;
  EXPECT_THAT(run(request),
              StatusIs(Code::invalid_argument, "solver::Gels: ldb = 3 is less than max(1, 4), the rows of b"));
  request = good;
  request.nrhs = 3;  // B 4 x 3: 12 elements of 8
  EXPECT_THAT(run(request), StatusIs(Code::invalid_argument, "operand 'b': elements [0, 0 + 12) lie outside"));
  request = good;
  request.nrhs = -1;
  EXPECT_THAT(run(request), StatusIs(Code::invalid_argument, "solver::Gels: nrhs = -1 is negative"));
  request = good;
  request.a = a64_;
  EXPECT_THAT(run(request), StatusIs(Code::invalid_argument, "operand 'a' holds f64 but the request needs f32"));
  request = good;
  request.dtype = DType::i32;
  EXPECT_THAT(run(request), StatusIs(Code::not_supported, "solver::Gels: dtype i32 is not supported"));
  request = good;
  request.batch = 2;
  request.stride_b = 3;
  EXPECT_THAT(run(request), StatusIs(Code::invalid_argument, "stride_b = 3 makes the 2 matrices of b overlap"));
  request = good;
  request.info = ipiv_;
  request.b = a_;
  EXPECT_THAT(run(request), StatusIs(Code::invalid_argument, "aliases"));
  EXPECT_EQ(download(device_, b_), std::vector<float>(8, 1.0f));
  EXPECT_EQ(download(device_, a_), a_host_);
}

TEST_F(SolverValidationTest, JacobiStoppingRulesAndVectorsAreChecked) {
  Buffer<float> s = upload(device_, std::vector<float>(4)), u = upload(device_, std::vector<float>(16));
  Buffer<float> v = upload(device_, std::vector<float>(16));
  const Gesvdj good{.m = 4, .n = 4, .a = a_, .s = s, .u = u, .v = v};
  Gesvdj request = good;
  request.tolerance = -1e-3;
  EXPECT_THAT(run(request),
              StatusIs(Code::invalid_argument, "solver::Gesvdj: tolerance = -0.001 is not a finite number >= 0"));
  request.tolerance = NAN;
  EXPECT_THAT(run(request), StatusIs(Code::invalid_argument, "tolerance = nan"));
  request = good;
  request.max_sweeps = 0;
  EXPECT_THAT(run(request), StatusIs(Code::invalid_argument, "solver::Gesvdj: max_sweeps = 0 must be at least 1"));
  request = good;
  request.job = SvdJob::none;
  EXPECT_THAT(run(request),
              StatusIs(Code::invalid_argument, "solver::Gesvdj: a buffer was given for u but the job is none"));
  // Full V of a 2 x 5 matrix is 5 x 5: 25 elements.
  EXPECT_THAT(run(Gesvdj{.job = SvdJob::full, .m = 2, .n = 5, .a = a_, .s = s, .u = u, .v = v}),
              StatusIs(Code::invalid_argument, "operand 'v': elements [0, 0 + 25) lie outside"));
  EXPECT_THAT(run(Gesvdj{.m = 4, .n = 4, .a = a_, .s = s, .u = u, .v = u}),
              StatusIs(Code::invalid_argument, "aliases"));
  EXPECT_THAT(run(good), IsOk());
}

TEST_F(SolverValidationTest, TheInfoBufferIsOptional) {
  Buffer<float> spd = upload(device_, std::vector<float>{4, 1, 1, 3});
  EXPECT_THAT(run(Potrf{.n = 2, .a = spd}), IsOk());
  Buffer<float> indefinite = upload(device_, std::vector<float>{1, 2, 2, 1});
  EXPECT_THAT(run(Potrf{.n = 2, .a = indefinite}),
              StatusIs(Code::failed_precondition, "the leading minor of order 2 is not positive definite"));
}

TEST_F(SolverValidationTest, NaNInputsAreRefusedByLapacke) {
  Buffer<float> nan = upload(device_, std::vector<float>{1, NAN, 2, 1});
  EXPECT_THAT(run(Getrf{.n = 2, .a = nan, .ipiv = ipiv_}),
              StatusIs(Code::invalid_argument, "solver::Getrf: LAPACKE refused argument 4: a matrix holds NaN"));
}

}  // namespace
}  // namespace accel::solver
