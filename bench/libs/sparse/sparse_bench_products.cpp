// The sparse benchmark's products beyond SpMV and SpMM over CSR (sparse_bench.cpp runs them; the CSV rows are alike):
//   spgemm/<case>   C = A·A (CSR, f32, i32): accel (SpGemmCount, C's nnz read back, C allocated, SpGemm — what a
//                   caller does for a new product), accel_product (SpGemm alone into a C allocated once, A's structure
//                   fixed — a repeated product over the same structure); and C's nnz
//   bell_spmm32/<block>x<slots>  C = A B with A blocked ELL (f16, 32 dense columns, column-major: the combination
//                   NVIDIA's sample runs), accel_fixed, beside the same A as CSR, accel_fixed_csr
#include <fmt/format.h>

#include <algorithm>

#include "accel/libs/sparse/spgemm.hpp"
#include "sparse_bench_matrix.hpp"

namespace sparse_bench {
namespace {

using namespace accel;
using bench::require;

template <class T>
Buffer<T> upload(Device& device, const std::vector<T>& host, const char* what) {
  Buffer<T> buffer = require(device.allocate<T>(std::max<std::size_t>(host.size(), 1)).wait(), what);
  if (!host.empty()) require(device.upload(std::span<const T>(host), buffer).wait(), what);
  return buffer;
}

// A on the device, and C's offsets.
struct Factor {
  Buffer<std::int32_t> offsets, indices, c_offsets;
  Buffer<float> values;
  sparse::Matrix a;

  Factor(Device& device, const Csr& m, sparse::Structure structure)
      : offsets(upload(device, m.offsets, "A's offsets")),
        indices(upload(device, m.indices, "A's columns")),
        c_offsets(require(device.allocate<std::int32_t>(static_cast<std::uint64_t>(m.rows + 1)).wait(), "C")),
        values(upload(device, m.values, "A's values")),
        a{.structure = structure,
          .rows = m.rows,
          .cols = m.cols,
          .nnz = static_cast<std::int64_t>(m.indices.size()),
          .offsets = offsets,
          .indices = indices,
          .values = values} {}
};

// C's nnz from the last of its offsets, as SpGemmCount left them.
std::int64_t product_nnz(Device& device, const Factor& f) {
  std::int32_t nnz = 0;
  require(device.download(f.c_offsets, std::span<std::int32_t>(&nnz, 1), static_cast<std::uint64_t>(f.a.rows)).wait(),
          "C's nnz");
  return nnz;
}

sparse::Matrix product_of(const Factor& f, std::int64_t nnz, BufferHandle indices, BufferHandle values) {
  return {.rows = f.a.rows, .cols = f.a.cols, .nnz = nnz, .offsets = f.c_offsets, .indices = indices, .values = values};
}

// Count, read nnz, allocate C, multiply, free C: the whole of a new product.
struct Pipeline {
  Device& device;
  Factor f;
  void enqueue() {
    require(device.ask(sparse::SpGemmCount{.a = f.a, .b = f.a, .c_offsets = f.c_offsets}).wait(), "SpGemmCount");
    const std::int64_t nnz = product_nnz(device, f);
    auto n = static_cast<std::uint64_t>(std::max<std::int64_t>(nnz, 1));
    Buffer<std::int32_t> columns = require(device.allocate<std::int32_t>(n).wait(), "C's columns");
    Buffer<float> values = require(device.allocate<float>(n).wait(), "C's values");
    require(device.ask(sparse::SpGemm{.a = f.a, .b = f.a, .c = product_of(f, nnz, columns, values)}).wait(), "SpGemm");
  }
  void finish() {}
};

// The product alone, into C's buffers kept from one count.
struct Product {
  Device& device;
  Factor f;
  Buffer<std::int32_t> columns;
  Buffer<float> values;
  sparse::Matrix c;
  std::vector<Future<Done>> pending;

  Product(Device& d, const Csr& m) : device(d), f(d, m, sparse::Structure::fixed) {
    require(device.ask(sparse::SpGemmCount{.a = f.a, .b = f.a, .c_offsets = f.c_offsets}).wait(), "SpGemmCount");
    const std::int64_t nnz = product_nnz(device, f);
    const auto n = static_cast<std::uint64_t>(std::max<std::int64_t>(nnz, 1));
    columns = require(device.allocate<std::int32_t>(n).wait(), "C's columns");
    values = require(device.allocate<float>(n).wait(), "C's values");
    c = product_of(f, nnz, columns, values);
  }
  void enqueue() { pending.push_back(device.ask(sparse::SpGemm{.a = f.a, .b = f.a, .c = c})); }
  void finish() {
    for (Future<Done>& future : pending) require(future.wait(), "SpGemm");
    pending.clear();
  }
};

// SpMM over a fixed A, f16, B and C column-major with 32 columns.
struct Spmm {
  Device& device;
  sparse::Matrix a;
  Buffer<Half> b, c;
  std::vector<Future<Done>> pending;

  Spmm(Device& d, const sparse::Matrix& matrix)
      : device(d),
        a(matrix),
        b(upload(d, std::vector<Half>(static_cast<std::size_t>(matrix.cols * 32), to_half(0.5f)), "B")),
        c(require(d.allocate<Half>(static_cast<std::uint64_t>(matrix.rows * 32)).wait(), "C")) {}
  [[nodiscard]] Future<Done> ask() const {
    return device.ask(sparse::SpMM{
        .a = a, .b = {.rows = a.cols, .cols = 32, .data = b}, .c = {.rows = a.rows, .cols = 32, .data = c}});
  }
  void enqueue() { pending.push_back(ask()); }
  void finish() {
    for (Future<Done>& future : pending) require(future.wait(), "SpMM");
    pending.clear();
  }
};

}  // namespace

void run_spgemm(Device& device, const Csr& a, const std::string& name) {
  accel::bench::row("sparse", name, "matrix", "nnz", static_cast<double>(a.indices.size()));
  {
    Pipeline pipeline{.device = device, .f = Factor(device, a, sparse::Structure::checked_each_use)};
    measure(pipeline, name, "accel", {.warmup = 1, .latency = 5, .pipelined = 0});
  }
  Product product(device, a);
  accel::bench::row("sparse", name, "matrix", "c_nnz", static_cast<double>(product.c.nnz));
  measure(product, name, "accel_product", {.warmup = 1, .latency = 5, .pipelined = 10});
}

void run_blocked_ell(Device& device, std::int64_t rows, std::int64_t cols, std::int32_t block, std::int64_t slots,
                     std::mt19937_64& rng) {
  const std::string name = fmt::format("bell_spmm32/{}x{}", block, slots);
  const std::int64_t block_rows = rows / block, block_cols = cols / block, ell_cols = slots * block;
  // Each block row's column blocks spread over the row from a random start, as make() spreads CSR columns (sorted,
  // so that the CSR of the same matrix shares the blocked ELL's values array: row i's entries are its values row).
  std::vector<std::int32_t> blocks;
  std::vector<std::int32_t> offsets{0}, columns;
  const std::int64_t step = std::max<std::int64_t>(block_cols / slots, 1);
  for (std::int64_t r = 0; r < block_rows; ++r) {
    const auto start = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(step));
    for (std::int64_t s = 0; s < slots; ++s) blocks.push_back(static_cast<std::int32_t>(start + s * step));
    for (std::int64_t i = 0; i < block; ++i) {
      for (std::int64_t s = 0; s < slots; ++s)
        for (std::int64_t c = 0; c < block; ++c)
          columns.push_back(static_cast<std::int32_t>(blocks[r * slots + s] * block + c));
      offsets.push_back(static_cast<std::int32_t>(columns.size()));
    }
  }
  const std::vector<Half> values(static_cast<std::size_t>(block_rows * block * ell_cols), to_half(0.25f));
  accel::bench::row("sparse", name, "matrix", "nnz", static_cast<double>(values.size()));
  const Buffer<std::int32_t> d_blocks = upload(device, blocks, "A's column blocks");
  const Buffer<Half> d_values = upload(device, values, "A's values");
  sparse::Matrix ell =
      sparse::blocked_ell(block_rows * block, block_cols * block, block, ell_cols, d_blocks, d_values, DType::f16);
  ell.structure = sparse::Structure::fixed;
  Spmm bell(device, ell);
  // cuSPARSE may lack the combination on this GPU: say so and leave the figure out, rather than end the benchmark.
  if (Status status = bell.ask().wait().status(); !status.ok()) {
    fmt::print(stderr, "{}: blocked-ELL SpMM: {}\n", name, status.to_string());
    return;
  }
  measure(bell, name, "accel_fixed");
  const Buffer<std::int32_t> d_offsets = upload(device, offsets, "A's offsets");
  const Buffer<std::int32_t> d_columns = upload(device, columns, "A's columns");
  Spmm csr(device, {.dtype = DType::f16,
                    .structure = sparse::Structure::fixed,
                    .rows = ell.rows,
                    .cols = ell.cols,
                    .nnz = static_cast<std::int64_t>(columns.size()),
                    .offsets = d_offsets,
                    .indices = d_columns,
                    .values = d_values});
  measure(csr, name, "accel_fixed_csr");
}

}  // namespace sparse_bench
