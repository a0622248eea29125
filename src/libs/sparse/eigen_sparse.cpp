#include "libs/sparse/eigen_sparse.hpp"

#include <fmt/format.h>
#include <Eigen/Dense>
#include <Eigen/SparseCore>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "libs/sparse/sparse_checks.hpp"

namespace accel::sparse {
namespace {

template <class T>
using Vector = Eigen::Matrix<T, Eigen::Dynamic, 1>;
template <class T, int Order>
using Dense = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Order>;
template <class T, int Order>
using DenseMap = Eigen::Map<Dense<T, Order>, 0, Eigen::OuterStride<>>;

// A blocked-ELL matrix as a compressed Eigen matrix: every entry of its non-padding blocks (explicit zeros kept).
template <class T, class I>
Eigen::SparseMatrix<T, Eigen::RowMajor, I> blocked_ell_matrix(const Matrix& m, const I* column_blocks,
                                                              const T* values) {
  const std::int64_t bs = m.ell_block_size, stored = ell_cols(m), slots = stored / bs;
  std::vector<Eigen::Triplet<T, I>> triplets;
  triplets.reserve(static_cast<std::size_t>(m.nnz));
  for (std::int64_t i = 0; i < m.rows; ++i) {
    for (std::int64_t s = 0; s < slots; ++s) {
      const std::int64_t block = column_blocks[i / bs * slots + s];
      if (block < 0) continue;  // padding
      for (std::int64_t c = 0; c < bs; ++c)
        triplets.emplace_back(static_cast<I>(i), static_cast<I>(block * bs + c), values[i * stored + s * bs + c]);
    }
  }
  Eigen::SparseMatrix<T, Eigen::RowMajor, I> a(m.rows, m.cols);
  a.setFromTriplets(triplets.begin(), triplets.end());
  return a;
}

// Calls f with A as an Eigen sparse expression over `views` (offsets, indices, values).
template <class T, class I, class F>
void with_sparse(const Matrix& m, std::span<const BufferView> views, F&& f) {
  const auto* offsets = static_cast<const I*>(views[0].data);
  const auto* indices = static_cast<const I*>(views[1].data);
  const auto* values = static_cast<const T*>(views[2].data);
  switch (m.format) {
    case Format::csr:
      f(Eigen::Map<const Eigen::SparseMatrix<T, Eigen::RowMajor, I>>(m.rows, m.cols, m.nnz, offsets, indices, values));
      return;
    case Format::csc:
      f(Eigen::Map<const Eigen::SparseMatrix<T, Eigen::ColMajor, I>>(m.rows, m.cols, m.nnz, offsets, indices, values));
      return;
    case Format::coo: {
      std::vector<Eigen::Triplet<T, I>> triplets;
      triplets.reserve(static_cast<std::size_t>(m.nnz));
      for (std::int64_t p = 0; p < m.nnz; ++p) triplets.emplace_back(offsets[p], indices[p], values[p]);
      Eigen::SparseMatrix<T, Eigen::RowMajor, I> a(m.rows, m.cols);
      a.setFromTriplets(triplets.begin(), triplets.end());
      f(a);
      return;
    }
    case Format::blocked_ell: f(blocked_ell_matrix<T, I>(m, indices, values)); return;
  }
}

template <class F>
Status dispatch(const Matrix& m, F&& f) {
  const bool wide = m.index == DType::i64;
  if (m.dtype == DType::f64) {
    wide ? f(double{}, std::int64_t{}) : f(double{}, std::int32_t{});
  } else {
    wide ? f(float{}, std::int64_t{}) : f(float{}, std::int32_t{});
  }
  return Status();
}

// Calls f with a dense operand mapped in its order.
template <class T, class F>
void with_dense(const DenseMatrix& d, void* data, F&& f) {
  if (d.order == MatrixOrder::row_major) {
    f(DenseMap<T, Eigen::RowMajor>(static_cast<T*>(data), d.rows, d.cols, Eigen::OuterStride<>(d.ld)));
  } else {
    f(DenseMap<T, Eigen::ColMajor>(static_cast<T*>(data), d.rows, d.cols, Eigen::OuterStride<>(d.ld)));
  }
}

// out = alpha * product + beta * out, without reading out when beta is 0 (it may hold NaNs).
template <class Out, class Product, class T>
void accumulate(Out&& out, const Product& product, T alpha, T beta) {
  if (beta == T(0)) {
    out.noalias() = alpha * product;
  } else {
    out = beta * out;
    out.noalias() += alpha * product;
  }
}

// A·B over two CSR matrices as a compressed row-major matrix: every entry of the product's structure, an entry whose
// terms cancel kept (Eigen's conservative product), the columns of each row sorted.
template <class T, class I>
Eigen::SparseMatrix<T, Eigen::RowMajor, I> product(const Matrix& a, const Matrix& b,
                                                   std::span<const BufferView> views) {
  using Map = Eigen::Map<const Eigen::SparseMatrix<T, Eigen::RowMajor, I>>;
  auto map = [](const Matrix& m, std::span<const BufferView> v) {
    return Map(m.rows, m.cols, m.nnz, static_cast<const I*>(v[0].data), static_cast<const I*>(v[1].data),
               static_cast<const T*>(v[2].data));
  };
  Eigen::SparseMatrix<T, Eigen::RowMajor, I> c = map(a, views) * map(b, views.subspan(3));
  c.makeCompressed();
  return c;
}

template <class T>
void copy_to(const BufferView& view, const T* from, std::int64_t count) {
  std::copy(from, from + count, static_cast<T*>(view.data));
}

}  // namespace

Status eigen_spmv(const SpMV& r, std::span<const BufferView> views) {
  return dispatch(r.a, [&]<class T, class I>(T, I) {
    with_sparse<T, I>(r.a, views, [&](const auto& a) {
      Eigen::Map<const Vector<T>> x(static_cast<const T*>(views[3].data), static_cast<Eigen::Index>(views[3].count));
      Eigen::Map<Vector<T>> y(static_cast<T*>(views[4].data), static_cast<Eigen::Index>(views[4].count));
      const T alpha = static_cast<T>(r.alpha), beta = static_cast<T>(r.beta);
      if (r.op == Transpose::none) {
        accumulate(y, (a * x).eval(), alpha, beta);
      } else {
        accumulate(y, (a.transpose() * x).eval(), alpha, beta);
      }
    });
  });
}

Status eigen_spmm(const SpMM& r, std::span<const BufferView> views) {
  return dispatch(r.a, [&]<class T, class I>(T, I) {
    with_sparse<T, I>(r.a, views, [&](const auto& a) {
      with_dense<T>(r.b, views[3].data, [&](const auto& b) {
        with_dense<T>(r.c, views[4].data, [&](auto c) {
          const T alpha = static_cast<T>(r.alpha), beta = static_cast<T>(r.beta);
          const bool ta = r.op_a == Transpose::transpose, tb = r.op_b == Transpose::transpose;
          if (!ta && !tb) accumulate(c, Dense<T, Eigen::ColMajor>(a * b), alpha, beta);
          if (!ta && tb) accumulate(c, Dense<T, Eigen::ColMajor>(a * b.transpose()), alpha, beta);
          if (ta && !tb) accumulate(c, Dense<T, Eigen::ColMajor>(a.transpose() * b), alpha, beta);
          if (ta && tb) accumulate(c, Dense<T, Eigen::ColMajor>(a.transpose() * b.transpose()), alpha, beta);
        });
      });
    });
  });
}

Status eigen_spsv(const SpSV& r, std::span<const BufferView> views) {
  return dispatch(r.a, [&]<class T, class I>(T, I) {
    Eigen::Map<const Vector<T>> x(static_cast<const T*>(views[3].data), static_cast<Eigen::Index>(r.a.rows));
    Eigen::Map<Vector<T>> y(static_cast<T*>(views[4].data), static_cast<Eigen::Index>(r.a.rows));
    y = static_cast<T>(r.alpha) * x;
    with_sparse<T, I>(r.a, views, [&](const auto& a) {
      // op(A)'s triangle: the transpose of a lower A is upper.
      const bool lower = (r.fill == Fill::lower) == (r.op == Transpose::none);
      const bool unit = r.diagonal == Diagonal::unit;
      auto solve = [&](const auto& m) {
        if (lower && unit) m.template triangularView<Eigen::UnitLower>().solveInPlace(y);
        if (lower && !unit) m.template triangularView<Eigen::Lower>().solveInPlace(y);
        if (!lower && unit) m.template triangularView<Eigen::UnitUpper>().solveInPlace(y);
        if (!lower && !unit) m.template triangularView<Eigen::Upper>().solveInPlace(y);
      };
      if (r.op == Transpose::none) {
        solve(a);
      } else {
        solve(a.transpose());
      }
    });
  });
}

Status eigen_to_dense(const ToDense& r, std::span<const BufferView> views) {
  return dispatch(r.a, [&]<class T, class I>(T, I) {
    with_sparse<T, I>(
        r.a, views, [&](const auto& a) { with_dense<T>(r.out, views[3].data, [&](auto out) { out = a.toDense(); }); });
  });
}

Status eigen_sddmm(const SDDMM& r, std::span<const BufferView> views) {
  const Matrix& c = r.c;
  return dispatch(c, [&]<class T, class I>(T, I) {
    const auto* offsets = static_cast<const I*>(views[0].data);
    const auto* columns = static_cast<const I*>(views[1].data);
    auto* values = static_cast<T*>(views[2].data);
    const bool ta = r.op_a == Transpose::transpose, tb = r.op_b == Transpose::transpose;
    const std::int64_t k = ta ? r.a.rows : r.a.cols;
    const T alpha = static_cast<T>(r.alpha), beta = static_cast<T>(r.beta);
    with_dense<T>(r.a, views[3].data, [&](const auto& a) {
      with_dense<T>(r.b, views[4].data, [&](const auto& b) {
        for (std::int64_t i = 0; i < c.rows; ++i) {
          for (I p = offsets[i]; p < offsets[i + 1]; ++p) {
            const std::int64_t j = columns[p];
            T dot(0);
            for (std::int64_t l = 0; l < k; ++l) dot += (ta ? a(l, i) : a(i, l)) * (tb ? b(j, l) : b(l, j));
            // With beta = 0, C's old value is not read: it may hold NaNs.
            values[p] = beta == T(0) ? alpha * dot : alpha * dot + beta * values[p];
          }
        }
      });
    });
  });
}

Status eigen_spgemm_count(const SpGemmCount& r, std::span<const BufferView> views) {
  return dispatch(r.a, [&]<class T, class I>(T, I) {
    const auto c = product<T, I>(r.a, r.b, views);
    copy_to(views[6], c.outerIndexPtr(), r.a.rows + 1);
  });
}

Status eigen_spgemm(const SpGemm& r, std::span<const BufferView> views) {
  Status status;
  (void)dispatch(r.a, [&]<class T, class I>(T, I) {
    auto c = product<T, I>(r.a, r.b, views);
    status = check_output_nnz(r.kName, "c", r.c.nnz, c.nonZeros(), SpGemmCount::kName);
    if (!status.ok()) return;
    c *= static_cast<T>(r.alpha);
    copy_to(views[6], c.outerIndexPtr(), r.a.rows + 1);
    copy_to(views[7], c.innerIndexPtr(), c.nonZeros());
    copy_to(views[8], c.valuePtr(), c.nonZeros());
  });
  return status;
}

LibraryVersion eigen_library() {
  return {.name = "Eigen",
          .version = fmt::format("{}.{}.{}", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION)};
}

}  // namespace accel::sparse
