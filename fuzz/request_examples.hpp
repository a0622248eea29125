// One valid request of each library kind (make_corpus checks that validate takes it): the seeds from which the
// wire_request and staged_request fuzzers reach past the first check of a request into its shape, buffer and
// operand checks. A kind without an overload of example() here does not compile in make_corpus, so a family's new
// request cannot go unseeded.
//
// Seeds hold requests byte for byte, padding included, and an object built by designated initialisers keeps
// whatever the stack held in its padding (a stack address, different on each run). Every object that reaches a
// seed is therefore value-initialised (T(), which zeroes the padding) and then has its members assigned.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "accel/device/protocol.hpp"
#include "blas_request_examples.hpp"
#include "request_example_basics.hpp"
#include "testing/encoder_graph.hpp"

namespace accel::fuzzing {

// conv -> bias add -> relu, and a matmul: the RunGraph seed and the dnn graph seeds.
inline std::vector<std::shared_ptr<const dnn::Graph>> dnn_graphs() {
  using namespace accel::dnn;
  std::vector<std::shared_ptr<const Graph>> graphs;
  {
    GraphBuilder b;
    const TensorRef x = b.tensor(DType::f32, {1, 4, 8, 8});
    const TensorRef w = b.tensor(DType::f32, {4, 4, 3, 3});
    const TensorRef bias = b.tensor(DType::f32, {1, 4, 1, 1});
    b.output(b.relu(b.add(b.conv_forward(x, w, {.pre_padding = {1, 1}, .post_padding = {1, 1}}), bias)), DType::f32);
    graphs.push_back(*b.build());
  }
  {
    GraphBuilder b;
    b.output(b.matmul(b.tensor(DType::f32, {1, 8, 16}), b.tensor(DType::f32, {1, 16, 4})), DType::f32);
    graphs.push_back(*b.build());
  }
  return graphs;
}

// blas and jit: 8 x 4 outputs of a k = 16 product.
inline Gemm example(For<Gemm>) {
  auto r = Gemm();
  r.shape.m = 8, r.shape.n = 4, r.shape.k = 16;
  r.a = buffer(1, DType::f32, 8 * 16), r.b = buffer(2, DType::f32, 16 * 4), r.c = buffer(3, DType::f32, 8 * 4);
  return r;
}

inline CutlassGemm example(For<CutlassGemm>) {
  auto r = CutlassGemm();
  r.m = 16, r.n = 8, r.k = 32;
  r.a = buffer(1, DType::f16, 16 * 32), r.b = buffer(2, DType::f16, 32 * 8), r.d = buffer(4, DType::f16, 16 * 8);
  return r;
}

// dnn: a 3 x 3 convolution of 1 x 4 x 8 x 8 into 8 channels, padded to keep 8 x 8.
inline ConvShape conv_shape(DType dtype, std::int64_t c, std::int64_t k) {
  auto s = ConvShape();
  s.dtype = dtype, s.c = c, s.k = k, s.input = {8, 8, 1}, s.filter = {3, 3, 1};
  s.pre_padding = {1, 1, 0}, s.post_padding = {1, 1, 0};
  return s;
}
inline ConvFwd example(For<ConvFwd>) {
  auto r = ConvFwd();
  r.shape = conv_shape(DType::f32, 4, 8);
  r.x = buffer(1, DType::f32, 4 * 64), r.w = buffer(2, DType::f32, 8 * 4 * 9), r.y = buffer(3, DType::f32, 8 * 64);
  return r;
}
inline ConvBwdData example(For<ConvBwdData>) {
  auto r = ConvBwdData();
  r.shape = conv_shape(DType::f32, 4, 8);
  r.dy = buffer(1, DType::f32, 8 * 64), r.w = buffer(2, DType::f32, 8 * 4 * 9), r.dx = buffer(3, DType::f32, 4 * 64);
  return r;
}
inline ConvBwdFilter example(For<ConvBwdFilter>) {
  auto r = ConvBwdFilter();
  r.shape = conv_shape(DType::f32, 4, 8);
  r.x = buffer(1, DType::f32, 4 * 64), r.dy = buffer(2, DType::f32, 8 * 64), r.dw = buffer(3, DType::f32, 8 * 4 * 9);
  return r;
}
inline CutlassConv example(For<CutlassConv>) {
  auto r = CutlassConv();
  r.shape = conv_shape(DType::f16, 8, 16);
  r.x = buffer(1, DType::f16, 8 * 64), r.w = buffer(2, DType::f16, 16 * 8 * 9), r.y = buffer(3, DType::f16, 16 * 64);
  return r;
}

// fft and rand.
inline Fft example(For<Fft>) {
  auto r = Fft();
  r.shape.n = {16, 0, 0}, r.shape.batch = 2;
  r.input = buffer(1, DType::c64, 32), r.output = buffer(2, DType::c64, 32);
  return r;
}
inline rand::Generate example(For<rand::Generate>) {
  auto r = rand::Generate();
  r.distribution = rand::Distribution::normal, r.seed = 7, r.count = 64, r.output = buffer(1, DType::f32, 64);
  return r;
}

// A recording's launch: steps of several kinds, plain data each.
inline RunRecorded example(For<RunRecorded>) {
  auto r = RunRecorded();
  r.recording = 3;
  r.steps = {example(For<blas::Scal>()), example(For<Fft>()), example(For<rand::Generate>()), example(For<blas::Ger>()),
             example(For<blas::Asum>())};
  return r;
}

// solver: 4 x 4 (square) and 6 x 4 (tall) matrices, packed.
inline solver::Getrf example(For<solver::Getrf>) {
  auto r = solver::Getrf();
  r.dtype = DType::f64, r.n = 4;
  r.a = buffer(1, DType::f64, 16), r.ipiv = buffer(2, DType::i32, 4), r.info = buffer(3, DType::i32, 1);
  return r;
}
inline solver::Getrs example(For<solver::Getrs>) {
  auto r = solver::Getrs();
  r.dtype = DType::f64, r.n = 4, r.nrhs = 2;
  r.a = buffer(1, DType::f64, 16), r.ipiv = buffer(2, DType::i32, 4), r.b = buffer(3, DType::f64, 8);
  return r;
}
inline solver::Potrf example(For<solver::Potrf>) {
  auto r = solver::Potrf();
  r.n = 4, r.batch = 2, r.a = buffer(1, DType::f32, 32), r.info = buffer(2, DType::i32, 2);
  return r;
}
inline solver::Potrs example(For<solver::Potrs>) {
  auto r = solver::Potrs();
  r.fill = solver::Fill::upper, r.n = 4, r.nrhs = 1, r.a = buffer(1, DType::f32, 16), r.b = buffer(2, DType::f32, 4);
  return r;
}
inline solver::Syevd example(For<solver::Syevd>) {
  auto r = solver::Syevd();
  r.dtype = DType::c64, r.job = solver::EigenJob::values_and_vectors, r.n = 4;
  r.a = buffer(1, DType::c64, 16), r.w = buffer(2, DType::f32, 4), r.info = buffer(3, DType::i32, 1);
  return r;
}
inline solver::Geqrf example(For<solver::Geqrf>) {
  auto r = solver::Geqrf();
  r.m = 6, r.n = 4, r.a = buffer(1, DType::f32, 24), r.tau = buffer(2, DType::f32, 4);
  return r;
}
inline solver::Orgqr example(For<solver::Orgqr>) {
  auto r = solver::Orgqr();
  r.m = 6, r.n = 4, r.k = 4, r.a = buffer(1, DType::f32, 24), r.tau = buffer(2, DType::f32, 4);
  return r;
}
inline solver::Gesvd example(For<solver::Gesvd>) {
  auto r = solver::Gesvd();
  r.m = 6, r.n = 4, r.a = buffer(1, DType::f32, 24), r.s = buffer(2, DType::f32, 4);
  r.u = buffer(3, DType::f32, 24), r.vt = buffer(4, DType::f32, 16), r.info = buffer(5, DType::i32, 1);
  return r;
}
inline solver::Gesvdj example(For<solver::Gesvdj>) {
  auto r = solver::Gesvdj();
  r.m = 6, r.n = 4, r.a = buffer(1, DType::f32, 24), r.s = buffer(2, DType::f32, 4);
  r.u = buffer(3, DType::f32, 24), r.v = buffer(4, DType::f32, 16), r.info = buffer(5, DType::i32, 1);
  return r;
}
inline solver::Ormqr example(For<solver::Ormqr>) {
  auto r = solver::Ormqr();
  r.transpose = Transpose::transpose, r.m = 6, r.n = 2, r.k = 4;
  r.a = buffer(1, DType::f32, 24), r.tau = buffer(2, DType::f32, 4), r.c = buffer(3, DType::f32, 12);
  return r;
}
inline solver::Gels example(For<solver::Gels>) {
  auto r = solver::Gels();
  r.m = 6, r.n = 4, r.nrhs = 2;
  r.a = buffer(1, DType::f32, 24), r.b = buffer(2, DType::f32, 12), r.info = buffer(3, DType::i32, 1);
  return r;
}

// sparse: 4 x 4 CSR matrices of 6 entries (i32 indices, f32 values) on slots from `first`, and dense 4 x n ones.
inline sparse::Matrix csr(std::uint32_t first, std::int64_t nnz = 6) {
  auto m = sparse::Matrix();
  m.rows = 4, m.cols = 4, m.nnz = nnz;
  m.offsets = buffer(first, DType::i32, 5), m.indices = buffer(first + 1, DType::i32, static_cast<std::uint64_t>(nnz));
  m.values = buffer(first + 2, DType::f32, static_cast<std::uint64_t>(nnz));
  return m;
}
inline sparse::DenseMatrix dense(std::uint32_t slot, std::int64_t rows, std::int64_t cols) {
  auto m = sparse::DenseMatrix();
  m.rows = rows, m.cols = cols, m.data = buffer(slot, DType::f32, static_cast<std::uint64_t>(rows * cols));
  return m;
}
inline sparse::SpMV example(For<sparse::SpMV>) {
  auto r = sparse::SpMV();
  r.beta = 0.5, r.a = csr(1), r.x = buffer(4, DType::f32, 4), r.y = buffer(5, DType::f32, 4);
  return r;
}
inline sparse::SpMM example(For<sparse::SpMM>) {
  auto r = sparse::SpMM();
  r.a = csr(1), r.b = dense(4, 4, 3), r.c = dense(5, 4, 3);
  return r;
}
inline sparse::SpSV example(For<sparse::SpSV>) {
  auto r = sparse::SpSV();
  r.fill = sparse::Fill::upper, r.a = csr(1), r.x = buffer(4, DType::f32, 4), r.y = buffer(5, DType::f32, 4);
  return r;
}
inline sparse::ToDense example(For<sparse::ToDense>) {
  auto r = sparse::ToDense();
  r.a = csr(1), r.out = dense(4, 4, 4);
  return r;
}
inline sparse::CsrToCoo example(For<sparse::CsrToCoo>) {
  auto r = sparse::CsrToCoo();
  r.csr = csr(1), r.rows = buffer(4, DType::i32, 6);
  return r;
}
inline sparse::CooToCsr example(For<sparse::CooToCsr>) {
  auto r = sparse::CooToCsr();
  r.coo = csr(1), r.coo.format = sparse::Format::coo, r.coo.offsets.count = 6, r.offsets = buffer(4, DType::i32, 5);
  return r;
}
inline sparse::SDDMM example(For<sparse::SDDMM>) {
  auto r = sparse::SDDMM();
  r.a = dense(1, 4, 3), r.b = dense(2, 3, 4), r.c = csr(3);
  return r;
}
inline sparse::SpGemmCount example(For<sparse::SpGemmCount>) {
  auto r = sparse::SpGemmCount();
  r.a = csr(1), r.b = csr(4), r.c_offsets = buffer(7, DType::i32, 5);
  return r;
}
inline sparse::SpGemm example(For<sparse::SpGemm>) {
  auto r = sparse::SpGemm();
  r.a = csr(1), r.b = csr(4), r.c = csr(7, 10);
  return r;
}
inline sparse::DenseToCsrCount example(For<sparse::DenseToCsrCount>) {
  auto r = sparse::DenseToCsrCount();
  r.a = dense(1, 4, 4), r.offsets = buffer(2, DType::i32, 5);
  return r;
}
inline sparse::DenseToCsr example(For<sparse::DenseToCsr>) {
  auto r = sparse::DenseToCsr();
  r.a = dense(1, 4, 4), r.out = csr(2);
  return r;
}

// tensor: modes m = 4, n = 5, k = 3.
inline tensor::Tensor tensor_of(std::uint32_t slot, std::string_view modes) {
  auto t = tensor::Tensor();
  std::uint64_t count = 1;
  for (char mode : modes) {
    const std::int32_t extent = mode == 'm' ? 4 : mode == 'n' ? 5 : 3;
    t.modes[t.rank] = mode, t.extents[t.rank] = extent, ++t.rank;
    count *= static_cast<std::uint64_t>(extent);
  }
  t.buffer = buffer(slot, DType::f32, count);
  return t;
}
inline tensor::Contract example(For<tensor::Contract>) {
  auto r = tensor::Contract();
  r.a = tensor_of(1, "mk"), r.b = tensor_of(2, "kn"), r.d = tensor_of(3, "mn");
  return r;
}
inline tensor::ElementwiseBinary example(For<tensor::ElementwiseBinary>) {
  auto r = tensor::ElementwiseBinary();
  r.op = tensor::Binary::mul, r.op_a = tensor::Unary::relu, r.a = tensor_of(1, "n"), r.d = tensor_of(2, "mn");
  return r;
}
inline tensor::ElementwiseTrinary example(For<tensor::ElementwiseTrinary>) {
  auto r = tensor::ElementwiseTrinary();
  r.a = tensor_of(1, "mn"), r.b = tensor_of(2, "nm"), r.c = buffer(3, DType::f32, 20), r.d = tensor_of(4, "mn");
  return r;
}
inline tensor::Reduce example(For<tensor::Reduce>) {
  auto r = tensor::Reduce();
  r.op = tensor::Binary::max, r.a = tensor_of(1, "mkn"), r.d = tensor_of(2, "nm");
  return r;
}
inline tensor::Permute example(For<tensor::Permute>) {
  auto r = tensor::Permute();
  r.a = tensor_of(1, "mn"), r.b = tensor_of(2, "nkm");
  return r;
}

// collective: rank 0 of 2.
inline collective::Comm comm() {
  auto c = collective::Comm();
  c.id = 1, c.ranks = 2, c.rank = 0;
  return c;
}
inline collective::Step step(collective::Kind kind, BufferHandle send, BufferHandle recv) {
  auto s = collective::Step();
  s.kind = kind, s.peer = 1, s.count = 16, s.send = send, s.recv = recv;
  return s;
}
inline collective::InitComm example(For<collective::InitComm>) {
  auto r = collective::InitComm();
  r.comm = comm(), r.timeout_ms = 5'000;
  for (std::size_t i = 0; i < r.id.bytes.size(); ++i) r.id.bytes[i] = static_cast<std::uint8_t>(i * 7 + 3);
  return r;
}
inline collective::DestroyComm example(For<collective::DestroyComm>) {
  auto r = collective::DestroyComm();
  r.comm = comm();
  return r;
}
inline collective::Collective example(For<collective::Collective>) {
  auto r = collective::Collective();
  const BufferHandle x = buffer(1, DType::f32, 16);
  r.comm = comm(), r.step = step(collective::Kind::all_reduce, x, x);
  return r;
}
inline collective::Group example(For<collective::Group>) {
  auto r = collective::Group();
  r.comm = comm();
  r.steps.push_back(step(collective::Kind::send, buffer(1, DType::f32, 16), BufferHandle()));
  r.steps.push_back(step(collective::Kind::recv, BufferHandle(), buffer(2, DType::f32, 16)));
  r.steps.push_back(step(collective::Kind::all_gather, buffer(3, DType::f32, 16), buffer(4, DType::f32, 32)));
  return r;
}

// The other staged requests: a dnn graph with its bindings, the encoder layer, a kernel launch, two grouped GEMMs.
inline RunGraph example(For<RunGraph>) {
  RunGraph run{.graph = dnn_graphs()[0]};
  for (const dnn::TensorDesc& t : run.graph->tensors()) {
    if (t.is_virtual) continue;
    std::uint64_t count = 1;
    for (std::int64_t d : t.shape()) count *= static_cast<std::uint64_t>(d);
    auto binding = dnn::TensorBinding();
    binding.uid = t.uid, binding.buffer = buffer(t.uid, t.dtype, count);
    run.bindings.push_back(binding);
  }
  return run;
}
inline graph::Execute example(For<graph::Execute>) {
  const auto encoder = graph::testing::encoder_graph({}, {{16, 64}}, {{2, 4}});
  return {.graph = encoder,
          .symbols = {{"tokens", 16}, {"sequences", 2}},
          .weights = buffer(1, DType::u8, encoder->weight_bytes()),
          .inputs = {{"x", buffer(2, DType::f32, 16 * 64)}, {"offsets", buffer(3, DType::i32, 5), 2}},
          .outputs = {{"y", buffer(4, DType::f32, 16 * 64)}, {"pooled", buffer(5, DType::f32, 2 * 64)}}};
}
inline LaunchKernel example(For<LaunchKernel>) {
  auto program = std::make_shared<jit::Program>(
      jit::Program{.name = "scale.cu",
                   .source = "extern \"C\" __global__ void scale(float* x, float a) { x[threadIdx.x] *= a; }",
                   .options = {"--use_fast_math"}});
  auto x = KernelArg(), a = KernelArg();
  x.kind = KernelArg::Kind::buffer, x.buffer = buffer(1, DType::f32, 32), x.access = ArgAccess::read_write;
  a.kind = KernelArg::Kind::f32, a.bits = std::bit_cast<std::uint32_t>(2.0f);
  return {.program = program, .kernel = "scale", .grid = {1, 1, 1}, .block = {32, 1, 1}, .args = {x, a}};
}
inline CutlassGroupedGemm example(For<CutlassGroupedGemm>) {
  auto grouped = CutlassGroupedGemm();
  for (std::uint32_t g = 0; g < 2; ++g) {
    auto group = GemmGroup();
    group.m = 16, group.n = 8, group.k = 32, group.lda = 32, group.ldb = 32, group.ldd = 8;
    group.a.buffer = buffer(10 + 4 * g, DType::f16, 16 * 32), group.b.buffer = buffer(11 + 4 * g, DType::f16, 32 * 8);
    group.d.buffer = buffer(13 + 4 * g, DType::f16, 16 * 8);
    grouped.groups.push_back(group);
  }
  return grouped;
}

}  // namespace accel::fuzzing
