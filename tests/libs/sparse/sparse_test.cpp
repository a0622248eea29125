// The sparse requests on the CPU device (Eigen's sparse module) against dense references in double, over formats,
// index and value types, transposes and scalars, on random matrices with empty rows and a huge row; blocked-ELL SpMM
// with padding blocks.
#include <gtest/gtest.h>

#include "blocked_ell_cases.hpp"
#include "testing/test_seed.hpp"

namespace accel::sparse {
namespace {

using accel::testing::IsOk;
using namespace testing;  // NOLINT(google-build-using-namespace): the sparse test helpers

class SparseTest : public ::testing::Test {
 protected:
  template <class I, class T>
  void spmv(const Shape& shape) {
    const Entries e = random_entries(shape, rng_);
    for (Format format : {Format::csr, Format::csc, Format::coo})
      for (Transpose op : {Transpose::none, Transpose::transpose})
        for (auto [alpha, beta] : {std::pair{1.0, 0.0}, {-0.5, 2.0}}) {
          SCOPED_TRACE(fmt::format("{} {} {} {}x{} nnz={} op={} alpha={} beta={}", to_string(dtype_of<I>()),
                                   to_string(dtype_of<T>()), to_string(format), e.rows, e.cols, e.nnz(), to_string(op),
                                   alpha, beta));
          const std::int64_t m = op == Transpose::none ? e.rows : e.cols, k = op == Transpose::none ? e.cols : e.rows;
          const std::vector<T> x = random_vector<T>(static_cast<std::size_t>(k), rng_),
                               y = random_vector<T>(static_cast<std::size_t>(m), rng_);
          const Outcome out = run_spmv<I, T>(cpu_, e, format, op, alpha, beta, x, y);
          ASSERT_THAT(out.status, IsOk());
          EXPECT_LE(spmv_error(out.out, e, op, alpha, beta, x, y), tolerance<T>(k));
        }
  }

  template <class I, class T>
  void spmm(const Shape& shape, std::int64_t n) {
    const Entries e = random_entries(shape, rng_);
    for (MatrixOrder order : {MatrixOrder::column_major, MatrixOrder::row_major})
      for (Transpose op_a : {Transpose::none, Transpose::transpose})
        for (Transpose op_b : {Transpose::none, Transpose::transpose}) {
          SCOPED_TRACE(fmt::format("{} {} {} op_a={} op_b={}", to_string(dtype_of<I>()), to_string(dtype_of<T>()),
                                   to_string(order), to_string(op_a), to_string(op_b)));
          const std::int64_t m = op_a == Transpose::none ? e.rows : e.cols;
          const std::int64_t k = op_a == Transpose::none ? e.cols : e.rows;
          const std::vector<T> b = random_vector<T>(static_cast<std::size_t>(k * n), rng_),
                               c = random_vector<T>(static_cast<std::size_t>(m * n), rng_);
          const Outcome out = run_spmm<I, T>(cpu_, e, Format::csr, op_a, op_b, order, n, 1.5, -1.0, b, c);
          ASSERT_THAT(out.status, IsOk());
          EXPECT_LE(relative(out.out, spmm_reference(e, op_a, op_b, order, n, 1.5, -1.0, b, c)), tolerance<T>(k));
        }
  }

  template <class I, class T>
  void spsv(std::int64_t n) {
    const Entries e = random_entries({.rows = n, .cols = n, .density = 0.05, .unit_diagonal = true}, rng_);
    const std::vector<T> x = random_vector<T>(static_cast<std::size_t>(n), rng_);
    for (Fill fill : {Fill::lower, Fill::upper})
      for (Diagonal diagonal : {Diagonal::non_unit, Diagonal::unit})
        for (Transpose op : {Transpose::none, Transpose::transpose}) {
          SCOPED_TRACE(fmt::format("n={} fill={} unit={} op={}", n, static_cast<int>(fill), static_cast<int>(diagonal),
                                   to_string(op)));
          const Outcome out = run_spsv<I, T>(cpu_, e, op, fill, diagonal, 2.0, x);
          ASSERT_THAT(out.status, IsOk());
          EXPECT_LE(relative(out.out, spsv_reference(e, op, fill, diagonal, 2.0, x)), 100 * tolerance<T>(n));
        }
  }

  template <class I, class T>
  void blocked_spmm(std::int64_t block_rows, std::int64_t block_cols, std::int32_t block, std::int64_t slots,
                    std::int64_t n) {
    const BlockedEll e = random_blocked_ell(block_rows, block_cols, block, slots, 0.3, rng_);
    for (MatrixOrder order : {MatrixOrder::column_major, MatrixOrder::row_major})
      for (Transpose op_a : {Transpose::none, Transpose::transpose})
        for (Transpose op_b : {Transpose::none, Transpose::transpose}) {
          SCOPED_TRACE(fmt::format("{} {} {}x{} block={} slots={} {} op_a={} op_b={}", to_string(dtype_of<I>()),
                                   to_string(dtype_of<T>()), e.rows, e.cols, block, slots, to_string(order),
                                   to_string(op_a), to_string(op_b)));
          const std::int64_t m = op_a == Transpose::none ? e.rows : e.cols;
          const std::int64_t k = op_a == Transpose::none ? e.cols : e.rows;
          const std::vector<T> b = random_vector<T>(static_cast<std::size_t>(k * n), rng_),
                               c = random_vector<T>(static_cast<std::size_t>(m * n), rng_);
          const Outcome out = run_blocked_spmm<I, T>(cpu_, e, op_a, op_b, order, n, 1.5, -0.5, b, c);
          ASSERT_THAT(out.status, IsOk());
          EXPECT_LE(relative(out.out, blocked_spmm_reference(e, op_a, op_b, order, n, 1.5, -0.5, b, c)),
                    tolerance<T>(k));
        }
  }

  System system_;
  Device cpu_ = *Device::open(system_, {.kind = DeviceKind::cpu});
  std::mt19937_64 rng_{accel::testing::test_seed()};
};

TEST_F(SparseTest, SpmvMatchesTheDenseReference) {
  spmv<std::int32_t, float>({.rows = 50, .cols = 70, .density = 0.1});
  spmv<std::int64_t, double>({.rows = 64, .cols = 33, .density = 0.3, .empty_every = 3});
  spmv<std::int32_t, double>({.rows = 100, .cols = 400, .density = 0.01, .huge_row = true});
  spmv<std::int64_t, float>({.rows = 1, .cols = 1, .density = 1.0});
}

TEST_F(SparseTest, SpmvOfAnEmptyMatrixScalesY) { spmv<std::int32_t, double>({.rows = 20, .cols = 10, .density = 0.0}); }

TEST_F(SparseTest, SpmmMatchesTheDenseReference) {
  spmm<std::int32_t, float>({.rows = 40, .cols = 30, .density = 0.2, .empty_every = 4}, 7);
  spmm<std::int64_t, double>({.rows = 25, .cols = 60, .density = 0.05, .huge_row = true}, 3);
}

// Padding blocks (zero, as the format asks), a block row of padding only, blocks of 1, a full ELL, none.
TEST_F(SparseTest, BlockedEllSpmmMatchesTheDenseReference) {
  blocked_spmm<std::int32_t, float>(6, 9, 4, 3, 5);
  blocked_spmm<std::int64_t, double>(10, 4, 2, 4, 3);
  blocked_spmm<std::int32_t, double>(3, 5, 1, 2, 7);
  blocked_spmm<std::int64_t, float>(1, 1, 8, 1, 2);
  blocked_spmm<std::int32_t, float>(4, 3, 2, 0, 3);
}

TEST_F(SparseTest, SpsvMatchesTheDenseReference) {
  spsv<std::int32_t, double>(60);
  spsv<std::int64_t, float>(31);
}

TEST_F(SparseTest, ConversionsRoundTrip) {
  const Entries e = random_entries({.rows = 30, .cols = 20, .density = 0.2, .empty_every = 5}, rng_);
  DeviceMatrix<std::int32_t, double> csr = upload_matrix<std::int32_t, double>(cpu_, e, Format::csr);
  Buffer<std::int32_t> rows = upload(cpu_, std::vector<std::int32_t>(static_cast<std::size_t>(e.nnz())));
  ASSERT_THAT(cpu_.ask(CsrToCoo{.csr = csr.matrix, .rows = rows}).wait(), IsOk());
  const std::vector<std::int32_t> coo_rows = download(cpu_, rows);
  EXPECT_EQ(coo_rows, (arrays<std::int32_t, double>(e, Format::coo).offsets));

  Matrix coo = csr.matrix;
  coo.format = Format::coo;
  coo.offsets = rows;
  Buffer<std::int32_t> offsets = upload(cpu_, std::vector<std::int32_t>(static_cast<std::size_t>(e.rows + 1)));
  ASSERT_THAT(cpu_.ask(CooToCsr{.coo = coo, .offsets = offsets}).wait(), IsOk());
  EXPECT_EQ(download(cpu_, offsets), (arrays<std::int32_t, double>(e, Format::csr).offsets));

  for (Format format : {Format::csr, Format::csc, Format::coo})
    for (MatrixOrder order : {MatrixOrder::column_major, MatrixOrder::row_major}) {
      DeviceMatrix<std::int64_t, float> a = upload_matrix<std::int64_t, float>(cpu_, e, format);
      Buffer<float> dense = upload(cpu_, std::vector<float>(static_cast<std::size_t>(e.rows * e.cols), 7.0f));
      ASSERT_THAT(
          cpu_.ask(ToDense{.a = a.matrix, .out = {.order = order, .rows = e.rows, .cols = e.cols, .data = dense}})
              .wait(),
          IsOk());
      const Reference out = to_reference(download(cpu_, dense), e.rows, e.cols,
                                         order == MatrixOrder::column_major ? e.rows : e.cols, order);
      EXPECT_LE(relative(out, e.dense()), 1e-7) << to_string(format);
    }
}

}  // namespace
}  // namespace accel::sparse
