// SDDMM, the two-phase SpGEMM and the dense-to-CSR conversion on the CPU device against dense references in double,
// on random matrices with empty rows and a huge row; and their refusals, named before anything computes.
#include <gtest/gtest.h>

#include <algorithm>

#include "sparse_product_cases.hpp"
#include "testing/test_seed.hpp"

namespace accel::sparse {
namespace {

using accel::testing::IsOk;
using accel::testing::StatusIs;
using namespace testing;  // NOLINT(google-build-using-namespace): the sparse test helpers

class SparseProductTest : public ::testing::Test {
 protected:
  template <class I, class T>
  void sddmm(const Shape& shape, std::int64_t k) {
    const Entries c = random_entries(shape, rng_);
    for (MatrixOrder order : {MatrixOrder::column_major, MatrixOrder::row_major})
      for (Transpose op_a : {Transpose::none, Transpose::transpose})
        for (Transpose op_b : {Transpose::none, Transpose::transpose})
          for (auto [alpha, beta] : {std::pair{1.0, 0.0}, {-0.5, 2.0}}) {
            SCOPED_TRACE(fmt::format("{} {} {}x{} nnz={} k={} {} op_a={} op_b={} beta={}", to_string(dtype_of<I>()),
                                     to_string(dtype_of<T>()), c.rows, c.cols, c.nnz(), k, to_string(order),
                                     to_string(op_a), to_string(op_b), beta));
            const std::vector<T> a = random_dense<T>(c.rows, k, rng_), b = random_dense<T>(k, c.cols, rng_);
            const Outcome out = run_sddmm<I, T>(cpu_, c, op_a, op_b, order, k, alpha, beta, a, b);
            ASSERT_THAT(out.status, IsOk());
            EXPECT_LE(relative(out.out, sddmm_reference(c, op_a, op_b, order, k, alpha, beta, a, b)), tolerance<T>(k));
          }
  }

  template <class I, class T>
  void spgemm(const Shape& a_shape, std::int64_t n, double b_density) {
    const Entries a = random_entries(a_shape, rng_);
    const Entries b = random_entries({.rows = a_shape.cols, .cols = n, .density = b_density, .empty_every = 5}, rng_);
    SCOPED_TRACE(fmt::format("{} {} {}x{} nnz={} times {}x{} nnz={}", to_string(dtype_of<I>()),
                             to_string(dtype_of<T>()), a.rows, a.cols, a.nnz(), b.rows, b.cols, b.nnz()));
    const Csr<I> c = run_spgemm<I, T>(cpu_, a, b, -1.5);
    ASSERT_THAT(c.count, IsOk());
    ASSERT_THAT(c.fill, IsOk());
    const auto [offsets, indices] = product_structure(a, b);
    EXPECT_EQ(widened(c.offsets), offsets);
    EXPECT_EQ(widened(c.indices), indices);
    EXPECT_LE(relative(c.dense, -1.5 * a.dense() * b.dense()), tolerance<T>(a.cols));
  }

  template <class I, class T>
  void dense_to_csr(const Shape& shape) {
    const Entries e = random_entries(shape, rng_);
    for (MatrixOrder order : {MatrixOrder::column_major, MatrixOrder::row_major}) {
      SCOPED_TRACE(fmt::format("{} {} {}x{} nnz={} {}", to_string(dtype_of<I>()), to_string(dtype_of<T>()), e.rows,
                               e.cols, e.nnz(), to_string(order)));
      const Csr<I> csr = run_dense_to_csr<I, T>(cpu_, e, order);
      ASSERT_THAT(csr.count, IsOk());
      ASSERT_THAT(csr.fill, IsOk());
      const Arrays<I, T> expected = arrays<I, T>(e, Format::csr);
      EXPECT_EQ(csr.offsets, expected.offsets);
      EXPECT_EQ(csr.indices, expected.indices);
      EXPECT_LE(relative(csr.dense, e.dense()), tolerance<T>(1));
    }
  }

  System system_;
  Device cpu_ = *Device::open(system_, {.kind = DeviceKind::cpu});
  std::mt19937_64 rng_{accel::testing::test_seed()};
};

TEST_F(SparseProductTest, SddmmMatchesTheDenseReference) {
  sddmm<std::int32_t, float>({.rows = 40, .cols = 30, .density = 0.2, .empty_every = 4}, 9);
  sddmm<std::int64_t, double>({.rows = 25, .cols = 60, .density = 0.05, .huge_row = true}, 4);
  sddmm<std::int32_t, double>({.rows = 12, .cols = 9, .density = 0.0}, 3);
}

TEST_F(SparseProductTest, SpgemmMatchesTheDenseProduct) {
  spgemm<std::int32_t, float>({.rows = 50, .cols = 40, .density = 0.1, .empty_every = 3}, 30, 0.1);
  spgemm<std::int64_t, double>({.rows = 30, .cols = 80, .density = 0.02, .huge_row = true}, 45, 0.05);
  spgemm<std::int32_t, double>({.rows = 20, .cols = 20, .density = 0.0}, 10, 0.3);
  spgemm<std::int64_t, float>({.rows = 1, .cols = 1, .density = 1.0}, 1, 1.0);
}

TEST_F(SparseProductTest, SpgemmWithoutItsCountCountsAgain) {
  const Entries a = random_entries({.rows = 30, .cols = 20, .density = 0.2}, rng_);
  const Entries b = random_entries({.rows = 20, .cols = 25, .density = 0.2}, rng_);
  const auto [offsets, indices] = product_structure(a, b);
  DeviceMatrix<std::int32_t, double> da = upload_matrix<std::int32_t, double>(cpu_, a, Format::csr);
  DeviceMatrix<std::int32_t, double> db = upload_matrix<std::int32_t, double>(cpu_, b, Format::csr);
  const auto nnz = static_cast<std::int64_t>(indices.size());
  Buffer<std::int32_t> c_offsets = upload(cpu_, std::vector<std::int32_t>(31, 0));
  Buffer<std::int32_t> c_indices = upload(cpu_, std::vector<std::int32_t>(static_cast<std::size_t>(nnz + 1)));
  Buffer<double> c_values = upload(cpu_, std::vector<double>(static_cast<std::size_t>(nnz + 1)));
  Matrix c{.dtype = DType::f64,
           .rows = 30,
           .cols = 25,
           .nnz = nnz + 1,
           .offsets = c_offsets,
           .indices = c_indices,
           .values = c_values};
  EXPECT_THAT(cpu_.ask(SpGemm{.a = da.matrix, .b = db.matrix, .c = c}).wait(),
              StatusIs(Code::failed_precondition,
                       fmt::format("sparse::SpGemm: c.nnz = {}, but the result has {}", nnz + 1, nnz)));
  c.nnz = nnz;
  ASSERT_THAT(cpu_.ask(SpGemm{.a = da.matrix, .b = db.matrix, .c = c}).wait(), IsOk());
  EXPECT_EQ(widened(download(cpu_, c_offsets)), offsets);
  EXPECT_LE(relative(dense_of(30, 25, download(cpu_, c_offsets), download(cpu_, c_indices), download(cpu_, c_values)),
                     a.dense() * b.dense()),
            1e-12);
}

TEST_F(SparseProductTest, DenseToCsrMatchesTheEntries) {
  dense_to_csr<std::int32_t, float>({.rows = 30, .cols = 20, .density = 0.2, .empty_every = 5});
  dense_to_csr<std::int64_t, double>({.rows = 17, .cols = 70, .density = 0.05, .huge_row = true});
  dense_to_csr<std::int32_t, double>({.rows = 8, .cols = 8, .density = 0.0});
}

TEST_F(SparseProductTest, WrongRequestsAreRefusedByName) {
  const Entries e = random_entries({.rows = 4, .cols = 3, .density = 0.5}, rng_);
  DeviceMatrix<std::int32_t, float> a = upload_matrix<std::int32_t, float>(cpu_, e, Format::csr);
  Buffer<std::int32_t> offsets = upload(cpu_, std::vector<std::int32_t>(5));
  EXPECT_THAT(cpu_.ask(SpGemmCount{.a = a.matrix, .b = a.matrix, .c_offsets = offsets}).wait(),
              StatusIs(Code::invalid_argument, "sparse::SpGemmCount: a is 4 x 3 and b 4 x 3"));
  Matrix csc = a.matrix;
  csc.format = Format::csc;
  csc.rows = 3;
  csc.cols = 4;
  EXPECT_THAT(cpu_.ask(SpGemmCount{.a = a.matrix, .b = csc, .c_offsets = offsets}).wait(),
              StatusIs(Code::invalid_argument, "b is csc; this request takes csr"));
  Buffer<float> dense = upload(cpu_, std::vector<float>(12));
  EXPECT_THAT(cpu_.ask(SDDMM{.a = {.rows = 4, .cols = 2, .data = dense},
                             .b = {.order = MatrixOrder::row_major, .rows = 2, .cols = 3, .data = dense},
                             .c = a.matrix})
                  .wait(),
              StatusIs(Code::invalid_argument, "sparse::SDDMM: a is column_major and b row_major"));
  EXPECT_THAT(
      cpu_.ask(DenseToCsrCount{.a = {.rows = 4, .cols = 3, .data = dense}, .dtype = DType::f16, .offsets = offsets})
          .wait(),
      StatusIs(Code::not_supported, "sparse::DenseToCsrCount"));
  Matrix out = a.matrix;
  // One more entry than out.indices holds: a draw with no entries still has a buffer of one element.
  out.nnz = std::max<std::int64_t>(e.nnz(), 1) + 1;
  EXPECT_THAT(cpu_.ask(DenseToCsr{.a = {.rows = 4, .cols = 3, .data = dense}, .out = out}).wait(),
              StatusIs(Code::invalid_argument, "out.indices"));
}

}  // namespace
}  // namespace accel::sparse
