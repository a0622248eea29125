// Sparse requests that are wrong are refused, naming what is wrong, before anything computes (the CPU device; the
// checks are the operation contract's, shared by every device, and the structural check is the one CUDA runs as a
// kernel): malformed index arrays, nnz against the buffers, buffer sizes and dtypes, stale handles, malformed
// blocked-ELL descriptors.
#include <gtest/gtest.h>

#include "sparse_cases.hpp"

namespace accel::sparse {
namespace {

using accel::testing::IsOk;
using accel::testing::StatusIs;
using namespace testing;  // NOLINT(google-build-using-namespace): the sparse test helpers

// A 3 x 4 CSR matrix: [[1 0 2 0] [0 0 0 0] [0 3 0 4]].
class SparseValidationTest : public ::testing::Test {
 protected:
  Status spmv(const Matrix& a) { return spmv(a, x_, y_); }
  Status spmv(const Matrix& a, BufferHandle x, BufferHandle y) {
    return device_.ask(SpMV{.a = a, .x = x, .y = y}).wait().status();
  }
  Matrix with_offsets(std::vector<std::int32_t> offsets) {
    Matrix a = a_;
    keep_.push_back(upload(device_, offsets));
    a.offsets = keep_.back();
    return a;
  }
  Matrix with_indices(std::vector<std::int32_t> indices) {
    Matrix a = a_;
    keep_.push_back(upload(device_, indices));
    a.indices = keep_.back();
    return a;
  }

  System system_;
  Device device_ = *Device::open(system_, {.kind = DeviceKind::cpu});
  Buffer<std::int32_t> offsets_ = upload(device_, std::vector<std::int32_t>{0, 2, 2, 4});
  Buffer<std::int32_t> indices_ = upload(device_, std::vector<std::int32_t>{0, 2, 1, 3});
  Buffer<float> values_ = upload(device_, std::vector<float>{1, 2, 3, 4});
  Buffer<float> x_ = upload(device_, std::vector<float>{1, 1, 1, 1});
  Buffer<float> y_ = upload(device_, std::vector<float>{0, 0, 0});
  Matrix a_{.rows = 3, .cols = 4, .nnz = 4, .offsets = offsets_, .indices = indices_, .values = values_};
  std::vector<Buffer<std::int32_t>> keep_;
};

TEST_F(SparseValidationTest, AWellFormedMatrixRuns) {
  ASSERT_THAT(spmv(a_), IsOk());
  EXPECT_EQ(download(device_, y_), (std::vector<float>{3, 0, 7}));
}

TEST_F(SparseValidationTest, NonMonotoneOffsetsAreAMalformedMatrix) {
  EXPECT_THAT(spmv(with_offsets({0, 3, 2, 4})),
              StatusIs(Code::failed_precondition, "sparse::SpMV: a is malformed: row offsets decrease at row 1"));
  EXPECT_THAT(spmv(with_offsets({1, 2, 2, 4})),
              StatusIs(Code::failed_precondition, "a is malformed: its first row offset is not 0"));
  EXPECT_THAT(spmv(with_offsets({0, 2, 2, 3})),
              StatusIs(Code::failed_precondition, "a is malformed: its last row offset is not nnz = 4"));
}

TEST_F(SparseValidationTest, OutOfRangeColumnsAreAMalformedMatrix) {
  EXPECT_THAT(spmv(with_indices({0, 2, 1, 4})),
              StatusIs(Code::failed_precondition, "a is malformed: the column of entry 3 is outside [0, 4)"));
  EXPECT_THAT(spmv(with_indices({0, -1, 1, 3})),
              StatusIs(Code::failed_precondition, "the column of entry 1 is outside [0, 4)"));
  // As CSC, the same arrays are a 4 x 3 matrix whose entries' rows must lie in [0, 4); in a 3 x 3 one, row 3 does not.
  Matrix csc = a_;
  csc.format = Format::csc;
  csc.rows = 4;
  csc.cols = 3;
  EXPECT_THAT(spmv(csc, y_, x_), IsOk());
  csc.rows = 3;
  Buffer<float> y3 = upload(device_, std::vector<float>{0, 0, 0});
  EXPECT_THAT(spmv(csc, y_, y3), StatusIs(Code::failed_precondition, "the row of entry 3 is outside [0, 3)"));
}

TEST_F(SparseValidationTest, CooRowsOutOfRangeOrUnsortedAreAMalformedMatrix) {
  Matrix coo = a_;
  coo.format = Format::coo;
  keep_.push_back(upload(device_, std::vector<std::int32_t>{0, 0, 2, 3}));
  coo.offsets = keep_.back();
  EXPECT_THAT(spmv(coo), StatusIs(Code::failed_precondition, "the row of entry 3 is outside [0, 3)"));
  keep_.push_back(upload(device_, std::vector<std::int32_t>{0, 2, 0, 2}));
  coo.offsets = keep_.back();
  EXPECT_THAT(spmv(coo), StatusIs(Code::failed_precondition, "its rows are not sorted: entry 2"));
}

TEST_F(SparseValidationTest, NnzMustMatchTheBuffers) {
  Matrix more = a_;
  more.nnz = 5;
  EXPECT_THAT(spmv(more), StatusIs(Code::invalid_argument, "a.indices"));
  Matrix too_many = a_;
  too_many.nnz = 13;
  EXPECT_THAT(spmv(too_many), StatusIs(Code::invalid_argument, "a.nnz = 13 exceeds the 3 x 4 entries"));
  Matrix fewer = a_;  // the offsets still end at 4: the structure says so
  fewer.nnz = 3;
  EXPECT_THAT(spmv(fewer), StatusIs(Code::failed_precondition, "its last row offset is not nnz = 3"));
  Matrix negative = a_;
  negative.rows = -1;
  EXPECT_THAT(spmv(negative), StatusIs(Code::invalid_argument, "sparse::SpMV: a.rows = -1 is negative"));
}

TEST_F(SparseValidationTest, BufferSizesAndDtypesAreChecked) {
  EXPECT_THAT(spmv(a_, y_, y_), StatusIs(Code::invalid_argument, "x"));  // x has 3 elements, not 4
  EXPECT_THAT(spmv(a_, x_, x_), StatusIs(Code::invalid_argument));       // y shares x's buffer
  Matrix wide = a_;
  wide.index = DType::i64;
  EXPECT_THAT(spmv(wide), StatusIs(Code::invalid_argument, "a.offsets"));
  Matrix doubles = a_;
  doubles.dtype = DType::f64;
  EXPECT_THAT(spmv(doubles), StatusIs(Code::invalid_argument, "a.values"));
  Matrix float_index = a_;
  float_index.index = DType::f32;
  EXPECT_THAT(spmv(float_index), StatusIs(Code::not_supported, "a.index = f32 is not supported"));
  Matrix half = a_;
  half.dtype = DType::f16;
  EXPECT_THAT(device_.ask(SpSV{.a = half, .x = x_, .y = y_}).wait().status(),
              StatusIs(Code::not_supported, "a.dtype = f16"));
}

TEST_F(SparseValidationTest, HalfPrecisionRunsOnCudaOnly) {
  Matrix half = a_;
  half.dtype = DType::f16;
  half.values = upload(device_, std::vector<Half>(4));
  Buffer<Half> x = upload(device_, std::vector<Half>(4)), y = upload(device_, std::vector<Half>(3));
  EXPECT_THAT(spmv(half, x, y), StatusIs(Code::not_supported, "the CPU device computes in f32 or f64, not f16"));
}

TEST_F(SparseValidationTest, StaleHandlesAreRefused) {
  Buffer<std::int32_t> gone = upload(device_, std::vector<std::int32_t>{0, 2, 2, 4});
  Matrix a = a_;
  a.offsets = gone;
  ASSERT_THAT(device_.free(gone).wait(), IsOk());
  EXPECT_THAT(spmv(a), StatusIs(Code::stale_handle));
}

TEST_F(SparseValidationTest, SpsvTakesSquareCsrWithItsDiagonal) {
  EXPECT_THAT(device_.ask(SpSV{.a = a_, .x = x_, .y = y_}).wait().status(),
              StatusIs(Code::invalid_argument, "a is 3 x 4, not square"));
  Matrix coo = a_;
  coo.format = Format::coo;
  EXPECT_THAT(device_.ask(SpSV{.a = coo, .x = x_, .y = y_}).wait().status(),
              StatusIs(Code::invalid_argument, "a is coo; this request takes csr"));
  Matrix square = a_;
  square.cols = 3;
  keep_.push_back(upload(device_, std::vector<std::int32_t>{0, 2, 1, 2}));
  square.indices = keep_.back();
  Buffer<float> x3 = upload(device_, std::vector<float>{1, 1, 1});
  EXPECT_THAT(device_.ask(SpSV{.a = square, .x = x3, .y = y_}).wait().status(),
              StatusIs(Code::failed_precondition, "a stores no diagonal entry in row 1"));
}

// A 4 x 6 blocked-ELL matrix of 2 x 2 blocks, two per block row: [[blocks 0 and 2] [block 1, padding]].
TEST_F(SparseValidationTest, MalformedBlockedEllIsANamedError) {
  Buffer<std::int32_t> blocks = upload(device_, std::vector<std::int32_t>{0, 2, 1, -1});
  Buffer<float> values = upload(device_, std::vector<float>(16, 1.0f));
  Buffer<float> b = upload(device_, std::vector<float>(6, 1.0f)), c = upload(device_, std::vector<float>(4));
  auto spmm = [&](const Matrix& a) {
    return device_
        .ask(SpMM{.a = a, .b = {.rows = a.cols, .cols = 1, .data = b}, .c = {.rows = a.rows, .cols = 1, .data = c}})
        .wait()
        .status();
  };
  const Matrix good = blocked_ell(4, 6, 2, 4, blocks, values);
  ASSERT_THAT(spmm(good), IsOk());
  EXPECT_EQ(download(device_, c), (std::vector<float>{4, 4, 2, 2}));
  Matrix m = good;
  m.ell_block_size = 0;
  EXPECT_THAT(spmm(m), StatusIs(Code::invalid_argument, "a.ell_block_size = 0 is not positive"));
  m = good;
  m.ell_block_size = 4;
  EXPECT_THAT(spmm(m), StatusIs(Code::invalid_argument, "a.cols = 6 is not a multiple of its ell_block_size 4"));
  m = good;
  m.nnz = 18;
  EXPECT_THAT(spmm(m), StatusIs(Code::invalid_argument, "a.nnz = 18 is not rows x ell_cols"));
  m = blocked_ell(4, 6, 2, 8, blocks, values);
  EXPECT_THAT(spmm(m), StatusIs(Code::invalid_argument, "ell_cols (nnz / rows) = 8 exceeds its 6 columns"));
  m = good;
  m.offsets = blocks;
  EXPECT_THAT(spmm(m), StatusIs(Code::invalid_argument, "a blocked_ell matrix has no offsets"));
  m = blocked_ell(4, 6, 2, 6, blocks, values);
  EXPECT_THAT(spmm(m), StatusIs(Code::invalid_argument, "a.indices"));  // 6 slots of blocks, 4 given
  Buffer<std::int32_t> wild = upload(device_, std::vector<std::int32_t>{0, 2, 3, -1});
  m = good;
  m.indices = wild;
  EXPECT_THAT(spmm(m),
              StatusIs(Code::failed_precondition,
                       "sparse::SpMM: a is malformed: the column block of slot 2 is neither -1 nor inside [0, 3)"));
  Buffer<std::int32_t> below = upload(device_, std::vector<std::int32_t>{0, -2, 1, -1});
  m.indices = below;
  EXPECT_THAT(spmm(m), StatusIs(Code::failed_precondition, "the column block of slot 1"));
  EXPECT_THAT(device_.ask(SpMV{.a = good, .x = b, .y = c}).wait().status(),
              StatusIs(Code::not_supported, "sparse::SpMV: a is blocked_ell, which only sparse::SpMM takes"));
  Matrix csr = a_;
  csr.ell_block_size = 2;
  EXPECT_THAT(spmv(csr), StatusIs(Code::invalid_argument, "a is csr, but its ell_block_size = 2 is set"));
}

}  // namespace
}  // namespace accel::sparse
