#include "dnn/cpu/dense_gemm.hpp"

#include <cblas.h>

namespace accel::dnn::cpu {

void gemm(Side a_side, Side b_side, std::int64_t m, std::int64_t n, std::int64_t k, const double* a, const double* b,
          double* c, bool accumulate) {
  const bool ta = a_side == Side::transposed, tb = b_side == Side::transposed;
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, static_cast<blasint>(m),
              static_cast<blasint>(n), static_cast<blasint>(k), 1.0, a, static_cast<blasint>(ta ? m : k), b,
              static_cast<blasint>(tb ? k : n), accumulate ? 1.0 : 0.0, c, static_cast<blasint>(n));
}

}  // namespace accel::dnn::cpu
