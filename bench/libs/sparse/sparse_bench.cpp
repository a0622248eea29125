// Sparse products on the GPU through the accel device actor beside the raw cuSPARSE calls a user would write (same
// process, GPU and matrix; a handle on a stream of its own, descriptors, buffer and SpMV preprocessing made once):
//   spmv   y = A x, A of `rows` rows (default 1M) and `cols` columns (default 131072) at each density (default
//          1e-4,1e-3,1e-2), f32 values, i32 indices; and a power-law matrix (row degrees ~ 1 / rank^0.8, up to 1000
//          entries: the row distribution of a power-law graph's Laplacian), and a Zipf matrix (row degrees 1 +
//          rows / 2 / rank: a graph's hubs, the longest row half the columns, about 8 entries a row on average)
//   spmm   C = A B with 32 dense columns (row-major), at the two lower densities
//   spgemm C = A·A, A of `rows` x `rows` with 8 entries per row (uniform8) and the power-law matrix; and blocked-ELL
//          SpMM beside the same matrix as CSR (sparse_bench_products.cpp says which variants these have)
// For SpMV of these CSR matrices accel runs its own kernel (src/libs/sparse/spmv_kernel.hpp), not cuSPARSE.
// Variants: accel with Structure::checked_each_use, the default (the structure checked by a kernel and its verdict
// waited for, then analysed, on the first call and again only after a write of the index arrays, which these calls
// do not make; until 2026-11-24 every call), accel_fixed (Structure::fixed: the analysis cached, nothing but
// the product's call), cusparse (the raw call), and for SpMV cusparse_csr_alg2 (the raw call with
// CUSPARSE_SPMV_CSR_ALG2, cuSPARSE's deterministic algorithm, which its documentation offers for irregular rows).
// Metrics: latency_us (one call and its synchronisation, median) and pipelined_us (100 calls, one synchronisation, per
// call; the median of five such pipelines). One CSV row per figure (bench/common/csv_report.hpp):
//   sparse,spmv/1e-03,accel_fixed,latency_us,…
// Usage: sparse_bench [rows, default 1048576] [cols, default 131072] [densities, default 1e-4,1e-3,1e-2]
#include <cuda_runtime.h>
#include <cusparse.h>
#include <fmt/format.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "accel/device/device.hpp"
#include "accel/libs/sparse/sparse.hpp"
#include "common/csv_report.hpp"
#include "common/cuda_checks.hpp"
#include "common/open_gpu.hpp"
#include "sparse_bench_matrix.hpp"

namespace {

using namespace accel;
using bench::check_cuda;
using bench::require;
using sparse_bench::Csr;
using sparse_bench::make;
using sparse_bench::measure;

void check_sparse(cusparseStatus_t s, const char* what) {
  bench::check_library(s, CUSPARSE_STATUS_SUCCESS, "cuSPARSE", what);
}

// The raw calls: descriptors, buffer and preprocessing once, then cusparseSpMV / SpMM per call.
struct Direct {
  cudaStream_t stream{};
  cusparseHandle_t handle{};
  cusparseSpMatDescr_t a{};
  cusparseDnVecDescr_t x{}, y{};
  cusparseDnMatDescr_t b{}, c{};
  void *offsets{}, *indices{}, *values{}, *dx{}, *dy{}, *buffer{};
  float alpha = 1, beta = 0;
  bool spmm = false;
  cusparseSpMVAlg_t spmv_algorithm = CUSPARSE_SPMV_ALG_DEFAULT;

  Direct(const Csr& m, std::int64_t n, cusparseSpMVAlg_t spmv = CUSPARSE_SPMV_ALG_DEFAULT)
      : spmm(n > 0), spmv_algorithm(spmv) {
    check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
    check_sparse(cusparseCreate(&handle), "cusparseCreate");
    check_sparse(cusparseSetStream(handle, stream), "cusparseSetStream");
    auto upload = [](void** to, const void* from, std::size_t bytes) {
      check_cuda(cudaMalloc(to, std::max<std::size_t>(bytes, 4)), "cudaMalloc");
      check_cuda(cudaMemcpy(*to, from, bytes, cudaMemcpyHostToDevice), "upload");
    };
    upload(&offsets, m.offsets.data(), m.offsets.size() * 4);
    upload(&indices, m.indices.data(), m.indices.size() * 4);
    upload(&values, m.values.data(), m.values.size() * 4);
    const std::int64_t width = spmm ? n : 1;
    check_cuda(cudaMalloc(&dx, static_cast<std::size_t>(m.cols * width) * 4), "x");
    check_cuda(cudaMalloc(&dy, static_cast<std::size_t>(m.rows * width) * 4), "y");
    check_cuda(cudaMemset(dx, 0, static_cast<std::size_t>(m.cols * width) * 4), "x");
    check_sparse(
        cusparseCreateCsr(&a, m.rows, m.cols, static_cast<std::int64_t>(m.indices.size()), offsets, indices, values,
                          CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F),
        "cusparseCreateCsr");
    std::size_t bytes = 0;
    if (spmm) {
      check_sparse(cusparseCreateDnMat(&b, m.cols, n, n, dx, CUDA_R_32F, CUSPARSE_ORDER_ROW), "B");
      check_sparse(cusparseCreateDnMat(&c, m.rows, n, n, dy, CUDA_R_32F, CUSPARSE_ORDER_ROW), "C");
      check_sparse(cusparseSpMM_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                           &alpha, a, b, &beta, c, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, &bytes),
                   "cusparseSpMM_bufferSize");
      check_cuda(cudaMalloc(&buffer, std::max<std::size_t>(bytes, 4)), "buffer");
    } else {
      check_sparse(cusparseCreateDnVec(&x, m.cols, dx, CUDA_R_32F), "x");
      check_sparse(cusparseCreateDnVec(&y, m.rows, dy, CUDA_R_32F), "y");
      check_sparse(cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, a, x, &beta, y, CUDA_R_32F,
                                           spmv_algorithm, &bytes),
                   "cusparseSpMV_bufferSize");
      check_cuda(cudaMalloc(&buffer, std::max<std::size_t>(bytes, 4)), "buffer");
      check_sparse(cusparseSpMV_preprocess(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, a, x, &beta, y, CUDA_R_32F,
                                           spmv_algorithm, buffer),
                   "cusparseSpMV_preprocess");
    }
  }
  ~Direct() {
    cudaStreamSynchronize(stream);
    cusparseDestroySpMat(a);
    if (spmm) {
      cusparseDestroyDnMat(b);
      cusparseDestroyDnMat(c);
    } else {
      cusparseDestroyDnVec(x);
      cusparseDestroyDnVec(y);
    }
    cusparseDestroy(handle);
    for (void* p : {offsets, indices, values, dx, dy, buffer}) cudaFree(p);
    cudaStreamDestroy(stream);
  }
  void enqueue() {
    if (spmm) {
      check_sparse(cusparseSpMM(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, a,
                                b, &beta, c, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, buffer),
                   "cusparseSpMM");
    } else {
      check_sparse(cusparseSpMV(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, a, x, &beta, y, CUDA_R_32F,
                                spmv_algorithm, buffer),
                   "cusparseSpMV");
    }
  }
  void finish() { check_cuda(cudaStreamSynchronize(stream), "sync"); }
};

// The same calls through the device actor.
struct Actor {
  Device device;
  Buffer<std::int32_t> offsets, indices;
  Buffer<float> values, x, y;
  sparse::Matrix a;
  std::int64_t n = 0;
  std::vector<Future<Done>> pending;

  Actor(Device d, const Csr& m, std::int64_t columns, sparse::Structure structure) : device(std::move(d)), n(columns) {
    auto upload = [&]<class T>(const std::vector<T>& host, const char* what) {
      Buffer<T> buffer = require(device.allocate<T>(std::max<std::size_t>(host.size(), 1)).wait(), what);
      require(device.upload(std::span<const T>(host), buffer).wait(), what);
      return buffer;
    };
    offsets = upload(m.offsets, "offsets");
    indices = upload(m.indices, "indices");
    values = upload(m.values, "values");
    const std::int64_t width = n > 0 ? n : 1;
    x = upload(std::vector<float>(static_cast<std::size_t>(m.cols * width)), "x");
    y = require(device.allocate<float>(static_cast<std::uint64_t>(m.rows * width)).wait(), "y");
    a = {.structure = structure,
         .rows = m.rows,
         .cols = m.cols,
         .nnz = static_cast<std::int64_t>(m.indices.size()),
         .offsets = offsets,
         .indices = indices,
         .values = values};
  }
  ~Actor() {
    finish();
    for (BufferHandle buffer :
         {BufferHandle(offsets), BufferHandle(indices), BufferHandle(values), BufferHandle(x), BufferHandle(y)})
      (void)device.free(buffer).wait();
  }
  Actor(const Actor&) = delete;
  Actor& operator=(const Actor&) = delete;
  void enqueue() {
    if (n > 0) {
      pending.push_back(
          device.ask(sparse::SpMM{.a = a,
                                  .b = {.order = MatrixOrder::row_major, .rows = a.cols, .cols = n, .data = x},
                                  .c = {.order = MatrixOrder::row_major, .rows = a.rows, .cols = n, .data = y}}));
    } else {
      pending.push_back(device.ask(sparse::SpMV{.a = a, .x = x, .y = y}));
    }
  }
  void finish() {
    for (Future<Done>& f : pending) require(f.wait(), "sparse request");
    pending.clear();
  }
};

void run_case(Device& device, const Csr& m, std::int64_t n, const std::string& name) {
  bench::row("sparse", name, "matrix", "nnz", static_cast<double>(m.indices.size()));
  {
    Actor checked(device, m, n, sparse::Structure::checked_each_use);
    measure(checked, name, "accel");
  }
  {
    Actor fixed(device, m, n, sparse::Structure::fixed);
    measure(fixed, name, "accel_fixed");
  }
  {
    Direct direct(m, n);
    measure(direct, name, "cusparse");
  }
  if (n == 0) {
    Direct merge(m, n, CUSPARSE_SPMV_CSR_ALG2);
    measure(merge, name, "cusparse_csr_alg2");
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t rows = argc > 1 ? std::stoll(argv[1]) : 1 << 20;
  const std::int64_t cols = argc > 2 ? std::stoll(argv[2]) : 1 << 17;
  const std::vector<std::string> densities = bench::split_list(argc > 3 ? argv[3] : "1e-4,1e-3,1e-2");
  System system;
  Device device = bench::open_gpu_or_skip(system, "sparse_bench");
  std::mt19937_64 rng(42);
  fmt::print("part,case,variant,metric,value\n");
  for (std::size_t d = 0; d < densities.size(); ++d) {
    const double density = std::stod(densities[d]);
    const auto per_row = static_cast<std::int64_t>(std::llround(density * static_cast<double>(cols)));
    const Csr m = make(
        rows, cols, [&](std::int64_t) { return per_row; }, rng);
    run_case(device, m, 0, fmt::format("spmv/{}", densities[d]));
    if (d + 1 < densities.size()) run_case(device, m, 32, fmt::format("spmm32/{}", densities[d]));
  }
  // Power-law rows: row i's degree ~ 1000 / rank^0.8 over a random permutation of ranks.
  std::vector<std::int64_t> rank(static_cast<std::size_t>(rows));
  for (std::int64_t i = 0; i < rows; ++i) rank[static_cast<std::size_t>(i)] = i + 1;
  std::shuffle(rank.begin(), rank.end(), rng);
  const Csr laplacian = make(
      rows, rows,
      [&](std::int64_t i) {
        const double r = static_cast<double>(rank[static_cast<std::size_t>(i)]);
        return 1 + static_cast<std::int64_t>(1000.0 / std::pow(r, 0.8));
      },
      rng);
  run_case(device, laplacian, 0, "spmv/powerlaw");
  sparse_bench::run_spgemm(device, laplacian, "spgemm/powerlaw");
  {
    const Csr zipf = make(
        rows, rows, [&](std::int64_t i) { return 1 + rows / 2 / rank[static_cast<std::size_t>(i)]; }, rng);
    run_case(device, zipf, 0, "spmv/zipf");
  }
  {
    const Csr uniform = make(
        rows, rows, [](std::int64_t) { return 8; }, rng);
    sparse_bench::run_spgemm(device, uniform, "spgemm/uniform8");
  }
  sparse_bench::run_blocked_ell(device, rows, cols, 32, 2, rng);
  return 0;
}
