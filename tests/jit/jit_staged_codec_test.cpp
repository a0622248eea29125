// The staged codec that carries the JIT requests that are not plain data (LaunchKernel,
// CutlassGroupedGemm) to an isolated worker: round trips, and the damaged encodings it refuses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "accel/device/device.hpp"
#include "accel/dnn/convolution.hpp"
#include "accel/jit/cutlass.hpp"
#include "accel/jit/kernel.hpp"
#include "device/isolated/staged_requests.hpp"
#include "testing/cuda_fixture.hpp"
#include "testing/jit_requests.hpp"
#include "testing/status_matchers.hpp"

namespace accel {
namespace {

using testing::HostArray;
using testing::IsOk;
using testing::relative_error;
using testing::StatusIs;
using namespace jit_testing;

// -- 7. the staged codec -----------------------------------------------------------------------------------------

using device::isolated::decode_staged;
using device::isolated::encode_staged;

BufferHandle fake_handle(std::uint32_t slot, DType dtype, std::uint64_t count) {
  return BufferHandle{.device = 3, .slot = slot, .epoch = 2, .generation = 1000 + slot, .dtype = dtype, .count = count};
}

LaunchKernel rich_launch() {
  auto program = std::make_shared<jit::Program>(jit::Program{
      .name = "axpy.cu",
      .source = "#include \"axpy.cuh\"\n#include \"util/types.cuh\"\ntemplate <class T> __global__ void axpy();",
      .headers = {{"axpy.cuh", "#pragma once\n#define AXPY 1\n"}, {"util/types.cuh", std::string(300, 'x')}},
      .options = {"-DTILE=64", "--use_fast_math", ""},
      .name_expressions = {"axpy<float>", "axpy<double>"},
      .code = jit::CodeKind::ptx});
  return LaunchKernel{
      .program = program,
      .kernel = "axpy<float>",
      .grid = {7, 2, 3},
      .block = {128, 2, 1},
      .shared_memory_bytes = 4096,
      .args = {KernelArg::in(fake_handle(1, DType::f32, 100), 4), KernelArg::out(fake_handle(2, DType::f16, 200)),
               KernelArg::inout(fake_handle(3, DType::bf16, 300), 16), KernelArg::of(std::int32_t{-5}),
               KernelArg::of(std::uint32_t{0xdeadbeef}), KernelArg::of(std::int64_t{-1234567890123}),
               KernelArg::of(std::uint64_t{0x0123456789abcdef}), KernelArg::of(3.5f), KernelArg::of(-2.25)}};
}

CutlassGroupedGemm rich_grouped() {
  CutlassGroupedGemm request{
      .input = DType::bf16,
      .output = DType::f32,
      .layout_a = MatrixOrder::column_major,
      .layout_b = MatrixOrder::row_major,
      .layout_c = MatrixOrder::column_major,
      .alpha = 0.125f,
      .beta = -3.0f,
      .tile = {.m = 128, .n = 64, .k = 32, .cluster_m = 2, .cluster_n = 1, .schedule = KernelSchedule::tma_pingpong},
      .when_compiling = WhenCompiling::unavailable};
  for (std::uint32_t g = 0; g < 3; ++g) {
    request.groups.push_back(GemmGroup{.m = 10 + g,
                                       .n = 20 + g,
                                       .k = 30 + g,
                                       .a = {fake_handle(10 + g, DType::bf16, 5000), 8u * g},
                                       .b = {fake_handle(20 + g, DType::bf16, 6000), 16u * g},
                                       .c = g == 1 ? MatrixRef{fake_handle(30, DType::f32, 700), 4} : MatrixRef{},
                                       .d = {fake_handle(40, DType::f32, 9000), 1000u * g},
                                       .lda = 40 + g,
                                       .ldb = 48 + g,
                                       .ldc = g == 1 ? 56 : 0,
                                       .ldd = 64 + g});
  }
  return request;
}

template <class Request>
void expect_damaged_variants_refused(const std::vector<std::byte>& encoding) {
  for (std::size_t length = 0; length < encoding.size(); ++length) {
    const Result<Request> decoded = decode_staged<Request>(std::span<const std::byte>(encoding.data(), length));
    EXPECT_FALSE(decoded.ok()) << "a prefix of " << length << " of " << encoding.size() << " bytes decoded";
  }
  std::vector<std::byte> longer = encoding;
  longer.push_back(std::byte{0});
  EXPECT_FALSE(decode_staged<Request>(std::span<const std::byte>(longer)).ok());
}

TEST(StagedCodecTest, LaunchKernelRoundTrips) {
  const LaunchKernel original = rich_launch();
  const std::vector<std::byte> encoding = encode_staged(original);
  const Result<LaunchKernel> decoded = decode_staged<LaunchKernel>(encoding);
  ASSERT_THAT(decoded, IsOk());
  ASSERT_NE(decoded->program, nullptr);
  const jit::Program& p = *decoded->program;
  const jit::Program& o = *original.program;
  EXPECT_EQ(p.name, o.name);
  EXPECT_EQ(p.source, o.source);
  ASSERT_EQ(p.headers.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(p.headers[i].name, o.headers[i].name);
    EXPECT_EQ(p.headers[i].contents, o.headers[i].contents);
  }
  EXPECT_EQ(p.options, o.options);
  EXPECT_EQ(p.name_expressions, o.name_expressions);
  EXPECT_EQ(p.code, jit::CodeKind::ptx);
  EXPECT_EQ(decoded->kernel, original.kernel);
  EXPECT_EQ(decoded->grid.x, 7u);
  EXPECT_EQ(decoded->grid.y, 2u);
  EXPECT_EQ(decoded->grid.z, 3u);
  EXPECT_EQ(decoded->block.x, 128u);
  EXPECT_EQ(decoded->block.y, 2u);
  EXPECT_EQ(decoded->block.z, 1u);
  EXPECT_EQ(decoded->shared_memory_bytes, 4096u);
  ASSERT_EQ(decoded->args.size(), original.args.size());
  for (std::size_t i = 0; i < original.args.size(); ++i) {
    SCOPED_TRACE("argument " + std::to_string(i));
    const KernelArg& d = decoded->args[i];
    const KernelArg& a = original.args[i];
    EXPECT_EQ(d.kind, a.kind);
    EXPECT_EQ(d.buffer, a.buffer);
    EXPECT_EQ(d.offset, a.offset);
    EXPECT_EQ(d.access, a.access);
    EXPECT_EQ(d.bits, a.bits);
    EXPECT_EQ(d.size(), a.size());
  }
  double f64 = 0;
  std::memcpy(&f64, &decoded->args.back().bits, sizeof f64);
  EXPECT_EQ(f64, -2.25);
  // Encoding the decoded request gives the same bytes.
  EXPECT_EQ(encode_staged(*decoded), encoding);
}

TEST(StagedCodecTest, CutlassGroupedGemmRoundTrips) {
  const CutlassGroupedGemm original = rich_grouped();
  const std::vector<std::byte> encoding = encode_staged(original);
  const Result<CutlassGroupedGemm> decoded = decode_staged<CutlassGroupedGemm>(encoding);
  ASSERT_THAT(decoded, IsOk());
  EXPECT_EQ(decoded->input, original.input);
  EXPECT_EQ(decoded->output, original.output);
  EXPECT_EQ(decoded->layout_a, original.layout_a);
  EXPECT_EQ(decoded->layout_b, original.layout_b);
  EXPECT_EQ(decoded->layout_c, original.layout_c);
  EXPECT_EQ(decoded->alpha, original.alpha);
  EXPECT_EQ(decoded->beta, original.beta);
  EXPECT_EQ(decoded->tile, original.tile);
  EXPECT_EQ(decoded->when_compiling, original.when_compiling);
  ASSERT_EQ(decoded->groups.size(), 3u);
  for (std::size_t g = 0; g < 3; ++g) {
    SCOPED_TRACE("group " + std::to_string(g));
    const GemmGroup& d = decoded->groups[g];
    const GemmGroup& o = original.groups[g];
    EXPECT_EQ(d.m, o.m);
    EXPECT_EQ(d.n, o.n);
    EXPECT_EQ(d.k, o.k);
    EXPECT_EQ(d.a.buffer, o.a.buffer);
    EXPECT_EQ(d.a.offset, o.a.offset);
    EXPECT_EQ(d.b.buffer, o.b.buffer);
    EXPECT_EQ(d.b.offset, o.b.offset);
    EXPECT_EQ(d.c.buffer, o.c.buffer);
    EXPECT_EQ(d.c.offset, o.c.offset);
    EXPECT_EQ(d.d.buffer, o.d.buffer);
    EXPECT_EQ(d.d.offset, o.d.offset);
    EXPECT_EQ(d.lda, o.lda);
    EXPECT_EQ(d.ldb, o.ldb);
    EXPECT_EQ(d.ldc, o.ldc);
    EXPECT_EQ(d.ldd, o.ldd);
  }
  EXPECT_TRUE(decoded->groups[0].c.buffer.is_null());
  EXPECT_FALSE(decoded->groups[1].c.buffer.is_null());
  EXPECT_EQ(encode_staged(*decoded), encoding);
}

TEST(StagedCodecTest, TruncatedOrLongerEncodingsAreRefused) {
  expect_damaged_variants_refused<LaunchKernel>(encode_staged(rich_launch()));
  expect_damaged_variants_refused<CutlassGroupedGemm>(encode_staged(rich_grouped()));
  // An empty launch (no headers, options or arguments) too.
  LaunchKernel empty{.program = std::make_shared<jit::Program>()};
  expect_damaged_variants_refused<LaunchKernel>(encode_staged(empty));
}

TEST(StagedCodecTest, UnknownArgumentKindsAndAccessesAreRefused) {
  const LaunchKernel launch = rich_launch();
  const std::vector<std::byte> encoding = encode_staged(launch);
  // The arguments are the encoding's last bytes, one KernelArg each.
  const std::size_t args_start = encoding.size() - launch.args.size() * sizeof(KernelArg);
  for (std::size_t i = 0; i < launch.args.size(); ++i) {
    SCOPED_TRACE("argument " + std::to_string(i));
    const std::size_t kind_at = args_start + i * sizeof(KernelArg) + offsetof(KernelArg, kind);
    ASSERT_EQ(encoding[kind_at], static_cast<std::byte>(launch.args[i].kind));
    std::vector<std::byte> patched = encoding;
    patched[kind_at] = std::byte{200};
    EXPECT_THAT(decode_staged<LaunchKernel>(patched), StatusIs(Code::internal, "damaged"));

    const std::size_t access_at = args_start + i * sizeof(KernelArg) + offsetof(KernelArg, access);
    ASSERT_EQ(encoding[access_at], static_cast<std::byte>(launch.args[i].access));
    patched = encoding;
    patched[access_at] = std::byte{200};
    EXPECT_THAT(decode_staged<LaunchKernel>(patched), StatusIs(Code::internal, "damaged"));
  }
  // Unpatched, it decodes.
  EXPECT_THAT(decode_staged<LaunchKernel>(encoding), IsOk());
}

}  // namespace
}  // namespace accel
