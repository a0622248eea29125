// Requests sent one after another without waiting (a burst) that a CUDA stream links (Note [Linked bursts] in
// device/cuda/linked_requests.hpp): 16-bit Axpys on the same vectors run as chains of one launch
// (blas::launch_narrow_axpy_chain), Copies of contiguous vectors and Gers as chains too (blas::launch_copy_chain,
// launch_ger_chain), and small f32 GEMMs that each read the one before's C as one launch of the GEMM chain. A large
// upload from pageable memory holds the stream's thread first, so that the requests queue behind it and the stream
// takes them as one burst. Every buffer afterwards equals the same requests sent and waited for one by one bit for bit,
// and the CPU device within rounding. The burst holds what a chain must not take: an axpy backwards, one over part of a
// vector of the chain, an f32 one, a bf16 one among f16 ones, a strided copy, a copy of part of a vector, a ger reading
// a matrix the chain writes, a batched one, one of alpha 0, and a request that fails its checks, which alone gets the
// error, naming it. On every way a CUDA device runs requests; which axpys, copies and gers a chain takes is tested
// without a device. The rest is skipped without a GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <variant>
#include <vector>

#include "accel/libs/blas/gemm.hpp"
#include "accel/libs/blas/level1.hpp"
#include "accel/libs/blas/level2.hpp"
#include "libs/blas/blas_kernels.hpp"
#include "testing/buffer_values.hpp"
#include "testing/cuda_fixture.hpp"
#include "testing/numeric_error.hpp"
#include "testing/test_seed.hpp"

namespace accel {
namespace {

using accel::testing::contents;
using accel::testing::GpuTestTarget;
using accel::testing::IsOk;
using accel::testing::relative_error;
using accel::testing::StatusIs;

constexpr std::int64_t kVector = 4101;  // odd: each vector ends in elements a thread takes one by one
constexpr std::int64_t kMatrix = 64 * 64;

// The buffers a burst works on: four f16 vectors, two bf16 ones, three f32 ones, and four 64 x 64 f32 matrices.
struct Buffers {
  std::vector<Buffer<Half>> half;
  std::vector<Buffer<BFloat16>> bfloat;
  std::vector<Buffer<float>> single, matrix;
};

// What the burst sends, in order; its buffers named by their place in Buffers.
using Step = std::variant<blas::Axpy, blas::Copy, blas::Ger, Gemm>;

blas::Axpy half_axpy(const Buffers& b, int x, int y, double alpha, std::int64_t n = kVector) {
  return {.dtype = DType::f16, .n = n, .alpha = alpha, .x = b.half[x].handle(), .y = b.half[y].handle()};
}

std::vector<Step> burst(const Buffers& b) {
  std::vector<Step> steps;
  for (int i = 0; i < 40; ++i) steps.emplace_back(half_axpy(b, 0, 1, 0.01 * (i % 7 - 3)));  // y += a x: 32, then 8
  for (int i = 0; i < 6; ++i) {  // x and y in turns, each the other's
    steps.emplace_back(half_axpy(b, 0, 1, 0.5));
    steps.emplace_back(half_axpy(b, 1, 0, -0.25));
  }
  blas::Axpy backwards = half_axpy(b, 2, 1, 0.125);
  backwards.incx = -1;  // not linked: launched alone between two chains
  steps.emplace_back(backwards);
  steps.emplace_back(half_axpy(b, 2, 3, 0.75));
  steps.emplace_back(half_axpy(b, 3, 2, -0.5, 1000));  // part of vectors of the chain: a chain of its own begins
  steps.emplace_back(half_axpy(b, 1, 2, 0.25, 1000));
  steps.emplace_back(blas::Axpy{.dtype = DType::bf16,  // another element type: another chain
                                .n = kVector,
                                .alpha = 1.5,
                                .x = b.bfloat[0].handle(),
                                .y = b.bfloat[1].handle()});
  steps.emplace_back(blas::Axpy{
      .dtype = DType::bf16, .n = kVector, .alpha = -0.5, .x = b.bfloat[1].handle(), .y = b.bfloat[0].handle()});
  steps.emplace_back(half_axpy(b, 0, 3, 2.0, kVector + 1));  // more elements than its vectors hold: refused
  steps.emplace_back(half_axpy(b, 0, 3, 2.0));
  steps.emplace_back(  // f32, cuBLAS's: not linked
      blas::Axpy{
          .dtype = DType::f32, .n = kVector, .alpha = 0.5, .x = b.single[0].handle(), .y = b.single[1].handle()});
  steps.emplace_back(half_axpy(b, 3, 0, 0.5));
  const auto copy = [&](DType dtype, const BufferHandle& x, const BufferHandle& y, std::int64_t n = kVector) {
    return blas::Copy{.dtype = dtype, .n = n, .x = x, .y = y};
  };
  for (int i = 0; i < 12; ++i)  // f32 vectors copied along 0 -> 1 -> 2 -> 0 ...: one chain
    steps.emplace_back(copy(DType::f32, b.single[i % 3].handle(), b.single[(i + 1) % 3].handle()));
  steps.emplace_back(copy(DType::f32, b.single[0].handle(), b.single[1].handle(), 1000));  // part: a chain of its own
  blas::Copy strided = copy(DType::f32, b.single[1].handle(), b.single[2].handle(), 2000);
  strided.incx = 2;  // not linked
  steps.emplace_back(strided);
  steps.emplace_back(copy(DType::f16, b.half[2].handle(), b.half[3].handle()));  // 8,202 bytes: a tail of five halves
  steps.emplace_back(copy(DType::f16, b.half[3].handle(), b.half[1].handle()));
  const auto ger = [&](int a, const BufferHandle& x, double alpha, std::int64_t m = 64, std::int64_t lda = 0) {
    return blas::Ger{
        .m = m, .n = 64, .lda = lda, .alpha = alpha, .a = b.matrix[a].handle(), .x = x, .y = b.single[1].handle()};
  };
  steps.emplace_back(Gemm{.shape = {.m = 64, .n = 64, .k = 64},
                          .a = b.matrix[1].handle(),
                          .b = b.matrix[2].handle(),
                          .c = b.matrix[3].handle()});  // the gers begin a burst of their own
  for (int i = 0; i < 10; ++i) steps.emplace_back(ger(3, b.single[0].handle(), 0.01 * (i + 1)));  // one matrix: a chain
  steps.emplace_back(
      ger(2, b.single[0].handle(), 0.5, 60, 64));          // another matrix, 60 of its 64 rows: the chain goes on
  steps.emplace_back(ger(2, b.matrix[3].handle(), 0.25));  // x a matrix the chain writes: a chain of its own
  blas::Ger ger_backwards = ger(3, b.single[2].handle(), -0.5);
  ger_backwards.incx = -1;
  steps.emplace_back(ger_backwards);
  steps.emplace_back(ger(3, b.single[0].handle(), 0.0));  // alpha 0: A untouched, alone
  blas::Ger batched = ger(1, b.single[2].handle(), 0.125, 32, 32);
  batched.batch = 2;  // two members: alone
  steps.emplace_back(batched);
  for (int i = 0; i < 20; ++i) {  // X_{i+1} = W X_i / 4 over matrices 1, 2, 3 in turn: one GEMM chain
    const GemmShape shape{.m = 64, .n = 64, .k = 64};
    steps.emplace_back(Gemm{.shape = shape,
                            .a = b.matrix[0].handle(),
                            .b = b.matrix[1 + i % 3].handle(),
                            .c = b.matrix[1 + (i + 1) % 3].handle(),
                            .alpha = 0.25});
  }
  return steps;
}

template <class T>
std::vector<T> values(std::mt19937_64& rng, std::int64_t count) {
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<T> out(static_cast<std::size_t>(count));
  for (T& v : out) {
    if constexpr (std::is_same_v<T, Half>)
      v = to_half(dist(rng));
    else if constexpr (std::is_same_v<T, BFloat16>)
      v = to_bfloat16(dist(rng));
    else
      v = dist(rng);
  }
  return out;
}

// The same values in every device's buffers: the generator is copied for each.
Buffers buffers_on(const Device& device, std::mt19937_64 rng) {
  using accel::testing::filled;
  Buffers b;
  for (int i = 0; i < 4; ++i) b.half.push_back(filled(device, values<Half>(rng, kVector)));
  for (int i = 0; i < 2; ++i) b.bfloat.push_back(filled(device, values<BFloat16>(rng, kVector)));
  for (int i = 0; i < 3; ++i) b.single.push_back(filled(device, values<float>(rng, kVector)));
  for (int i = 0; i < 4; ++i) b.matrix.push_back(filled(device, values<float>(rng, kMatrix)));
  return b;
}

// Sends the burst's steps; `pipelined`: all at once behind an upload that holds the stream's thread, else each
// waited for. The refused step's error is checked; every other step must succeed.
void send(const Device& device, const std::vector<Step>& steps, bool pipelined) {
  const auto ask = [&](const Step& step) { return std::visit([&](const auto& r) { return device.ask(r); }, step); };
  std::vector<Status> outcomes;
  if (pipelined) {
    std::vector<float> large(std::size_t{64} << 20, 1.0f);  // 256 MiB from pageable memory, through pinned blocks
    Buffer<float> target = *device.allocate<float>(large.size()).wait();
    Future<Done> upload = device.upload(std::span<const float>(large), target);
    std::vector<Future<Done>> sent;
    for (const Step& step : steps) sent.push_back(ask(step));
    EXPECT_THAT(upload.wait(), IsOk());
    for (Future<Done>& f : sent) outcomes.push_back(f.wait().status());
  } else {
    for (const Step& step : steps) outcomes.push_back(ask(step).wait().status());
  }
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const auto* axpy = std::get_if<blas::Axpy>(&steps[i]);
    if (axpy != nullptr && axpy->n == kVector + 1)
      EXPECT_THAT(outcomes[i], StatusIs(Code::invalid_argument, "blas::Axpy")) << "step " << i;
    else
      EXPECT_THAT(outcomes[i], IsOk()) << "step " << i;
  }
}

template <class T>
std::vector<double> as_doubles(const std::vector<T>& v) {
  std::vector<double> out;
  for (const T& e : v) {
    if constexpr (std::is_same_v<T, float>)
      out.push_back(e);
    else
      out.push_back(to_float(e));
  }
  return out;
}

template <class T>
void expect_equal(const Device& gpu, const Device& cpu, const std::vector<Buffer<T>>& burst,
                  const std::vector<Buffer<T>>& one_by_one, const std::vector<Buffer<T>>& reference, double tol) {
  for (std::size_t i = 0; i < burst.size(); ++i) {
    SCOPED_TRACE(::testing::Message() << to_string(dtype_of<T>()) << " buffer " << i);
    const std::vector<double> got = as_doubles(contents(gpu, burst[i]));
    EXPECT_EQ(got, as_doubles(contents(gpu, one_by_one[i])));
    EXPECT_LE(relative_error(got, as_doubles(contents(cpu, reference[i]))), tol);
  }
}

class CudaLinkedBurstTest : public ::testing::TestWithParam<GpuTestTarget> {
 protected:
  System system_;
  std::mt19937_64 rng_{accel::testing::test_seed()};
};

TEST_P(CudaLinkedBurstTest, ABurstOfLinkedRequestsEqualsTheRequestsOneByOneAndTheCpuDevice) {
  ACCEL_OPEN_CUDA_OR_SKIP(system_, GetParam().options(), gpu);
  Device cpu = *Device::open(system_, {.kind = DeviceKind::cpu});
  for (int round = 0; round < 2; ++round) {  // fresh values each round
    SCOPED_TRACE(::testing::Message() << "round " << round);
    const Buffers pipelined = buffers_on(gpu, rng_), waited = buffers_on(gpu, rng_), reference = buffers_on(cpu, rng_);
    send(gpu, burst(pipelined), true);
    send(gpu, burst(waited), false);
    send(cpu, burst(reference), false);
    // One rounding of an f16 or bf16 element apart from the CPU device's loops, carried through the chains.
    expect_equal(gpu, cpu, pipelined.half, waited.half, reference.half, 1e-2);
    expect_equal(gpu, cpu, pipelined.bfloat, waited.bfloat, reference.bfloat, 5e-2);
    expect_equal(gpu, cpu, pipelined.single, waited.single, reference.single, 1e-6);
    expect_equal(gpu, cpu, pipelined.matrix, waited.matrix, reference.matrix, 1e-4);
    rng_.discard(1);
  }
}

// Which axpys a chain takes (no device: addresses only, 1 MiB apart).
blas::NarrowAxpy axpy(std::uintptr_t x, std::uintptr_t y, std::int64_t n = 4096) {
  constexpr std::uintptr_t kApart = 1 << 20;
  return {.x = reinterpret_cast<const void*>(kApart * (x + 1)),
          .y = reinterpret_cast<void*>(kApart * (y + 1)),
          .n = n,
          .alpha = 0.5f};
}

int chained(const std::vector<blas::NarrowAxpy>& axpys) {
  return blas::narrow_axpy_chain_length(axpys.data(), axpys.size());
}

TEST(NarrowAxpyChain, TakesAxpysWhoseVectorsAreTheSameOrApartFromEveryVectorTheChainWrites) {
  EXPECT_EQ(chained(std::vector<blas::NarrowAxpy>(40, axpy(0, 1))), blas::kMostChainedVectorSteps);
  EXPECT_EQ(chained({axpy(0, 1), axpy(1, 0), axpy(0, 1), axpy(2, 3), axpy(0, 2)}), 5);  // in turns, apart, same
  EXPECT_EQ(chained({axpy(0, 1), axpy(1, 0, 100)}), 1);                                 // part of a vector written
  EXPECT_EQ(chained({axpy(0, 1), axpy(2, 0, 100)}), 1);  // writes part of a vector the chain read
  EXPECT_EQ(chained({axpy(0, 1), axpy(0, 2, 100)}), 2);  // reads part of a vector the chain only read
  blas::NarrowAxpy shifted = axpy(0, 1);
  shifted.y = static_cast<std::byte*>(shifted.y) + 16;  // meets the first y, not the same vector
  EXPECT_EQ(chained({axpy(0, 1), shifted}), 1);
  blas::NarrowAxpy bfloat = axpy(0, 1);
  bfloat.bf16 = true;
  EXPECT_EQ(chained({axpy(0, 1), bfloat}), 1);
}

TEST(NarrowAxpyChain, BeginsOnlyWithANonEmptyAxpyOfVectorsOn16BytesThatAreTheSameOrApart) {
  EXPECT_EQ(chained({axpy(0, 1)}), 1);
  EXPECT_EQ(chained({axpy(0, 0)}), 1);  // y += a y: the very vector
  EXPECT_EQ(chained({axpy(0, 1, 0)}), 0);
  blas::NarrowAxpy off = axpy(0, 1);
  off.x = static_cast<const std::byte*>(off.x) + 2;
  EXPECT_EQ(chained({off}), 0);
  blas::NarrowAxpy overlapping = axpy(0, 0);
  overlapping.y = static_cast<std::byte*>(overlapping.y) + 16;
  EXPECT_EQ(chained({overlapping}), 0);
  EXPECT_EQ(chained({}), 0);
}

TEST(CopyChain, TakesCopiesWhoseVectorsAreTheSameOrApartFromEveryVectorTheChainWrites) {
  const auto copy = [](std::uintptr_t x, std::uintptr_t y, std::uint64_t bytes = 8192) {
    const blas::NarrowAxpy at = axpy(x, y);
    return blas::ContiguousCopy{.x = at.x, .y = at.y, .bytes = bytes};
  };
  const auto chained = [](const std::vector<blas::ContiguousCopy>& copies) {
    return blas::copy_chain_length(copies.data(), copies.size());
  };
  EXPECT_EQ(chained({copy(0, 1), copy(1, 2), copy(2, 0), copy(0, 1), copy(3, 4)}), 5);  // along, in turns, apart
  EXPECT_EQ(chained(std::vector<blas::ContiguousCopy>(40, copy(0, 1))), blas::kMostChainedVectorSteps);
  EXPECT_EQ(chained({copy(0, 1), copy(1, 2, 4096)}), 1);  // reads part of a vector written
  EXPECT_EQ(chained({copy(0, 1), copy(2, 0, 4096)}), 1);  // writes part of a vector read
  EXPECT_EQ(chained({copy(0, 1), copy(0, 2, 4096)}), 2);  // reads part of a vector only read
  EXPECT_EQ(chained({copy(0, 1, 0)}), 0);
  blas::ContiguousCopy off = copy(0, 1);
  off.y = static_cast<std::byte*>(off.y) + 4;  // y's start off 16 bytes
  EXPECT_EQ(chained({off}), 0);
}

TEST(GerChain, TakesSingleUpdatesOfTheSameMatrixOrOthersApartWhoseVectorsMeetNoMatrixOfTheChain) {
  const auto ger = [](std::uintptr_t a, std::uintptr_t x, std::uintptr_t y, std::int64_t m = 64) {
    constexpr std::uintptr_t kApart = 1 << 20;
    return blas::GerLaunch{.a = reinterpret_cast<void*>(kApart * (a + 1)),
                           .lda = 64,
                           .x = reinterpret_cast<const void*>(kApart * (x + 1)),
                           .y = reinterpret_cast<const void*>(kApart * (y + 1)),
                           .alpha = 0.5,
                           .m = m,
                           .n = 64};
  };
  const auto chained = [](const std::vector<blas::GerLaunch>& gers) {
    return blas::ger_chain_length(gers.data(), gers.size());
  };
  EXPECT_EQ(chained(std::vector<blas::GerLaunch>(40, ger(0, 1, 2))), blas::kMostChainedVectorSteps);
  EXPECT_EQ(chained({ger(0, 1, 2), ger(3, 1, 2), ger(0, 4, 2)}), 3);  // the same matrix, another apart
  EXPECT_EQ(chained({ger(0, 1, 2), ger(0, 1, 2, 32)}), 1);            // the same start, other rows: not the same
  EXPECT_EQ(chained({ger(0, 1, 2), ger(3, 0, 2)}), 1);                // x a matrix the chain writes
  EXPECT_EQ(chained({ger(0, 1, 2), ger(1, 3, 2)}), 1);                // a matrix over a vector the chain read
  blas::GerLaunch batched = ger(0, 1, 2), still = ger(0, 1, 2), doubles = ger(0, 1, 2);
  batched.batch = 2;
  still.alpha = 0.0;
  doubles.f64 = true;
  EXPECT_EQ(chained({batched}), 0);
  EXPECT_EQ(chained({still}), 0);
  EXPECT_EQ(chained({ger(0, 1, 2), doubles}), 1);
}

INSTANTIATE_TEST_SUITE_P(EveryTarget, CudaLinkedBurstTest, ::testing::ValuesIn(accel::testing::kEveryGpuTarget),
                         accel::testing::target_name);

}  // namespace
}  // namespace accel
