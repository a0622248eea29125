// CutlassGroupedGemm on the CPU device against a naive double computation; bad requests write nothing.
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

TEST_F(JitRequestsTest, GroupedGemmOfThreeGroupsInSharedBuffersMatchesNaive) {
  const GroupedProblem problem(30);
  const CutlassGroupedGemm request = problem.upload(*dev_);
  ASSERT_THAT(dev_->ask(request).wait(), IsOk());
  problem.check(from_device(*dev_, request.groups[0].d.buffer));
}

TEST_F(JitRequestsTest, BadGroupedGemmRequestsWriteNothing) {
  const Device& dev = *dev_;
  const GroupedProblem problem(31);
  const CutlassGroupedGemm good = problem.upload(dev);
  auto refused = [&](auto mutate) {
    CutlassGroupedGemm request = good;
    mutate(request);
    return dev.ask(request).wait();
  };
  EXPECT_THAT(refused([](CutlassGroupedGemm& r) { r.groups.clear(); }), StatusIs(Code::invalid_argument, "no groups"));
  EXPECT_THAT(refused([](CutlassGroupedGemm& r) { r.groups[2].d.offset += 4; }),
              StatusIs(Code::invalid_argument, "16-byte aligned"));
  EXPECT_THAT(refused([](CutlassGroupedGemm& r) { r.groups[1].ldd = 44; }),
              StatusIs(Code::invalid_argument, "16-byte aligned"));
  EXPECT_THAT(refused([](CutlassGroupedGemm& r) { r.groups[2].d = {}; }),
              StatusIs(Code::invalid_argument, "group 2: operand d is missing"));
  EXPECT_THAT(refused([](CutlassGroupedGemm& r) { r.groups[1].n = 0; }), StatusIs(Code::invalid_argument, "group 1"));
  // The last group's A runs past its buffer's end: the earlier groups must not have run either.
  EXPECT_THAT(refused([&](CutlassGroupedGemm& r) { r.groups[2].a.offset = problem.a->size() - 8; }),
              StatusIs(Code::invalid_argument));
  EXPECT_THAT(refused([&](CutlassGroupedGemm& r) { r.groups[2].a.offset = std::uint64_t{1} << 62; }),
              StatusIs(Code::invalid_argument));
  EXPECT_THAT(refused([](CutlassGroupedGemm& r) { r.input = DType::f32; }), StatusIs(Code::not_supported));
  EXPECT_THAT(refused([](CutlassGroupedGemm& r) {
                r.input = DType::fp8_e4m3;
                r.layout_b = MatrixOrder::row_major;
              }),
              StatusIs(Code::not_supported, "fp8"));
  EXPECT_THAT(refused([](CutlassGroupedGemm& r) { r.output = DType::bf16; }),  // the buffers are f16
              StatusIs(Code::not_supported));
  EXPECT_THAT(refused([](CutlassGroupedGemm& r) { r.output = DType::f32; }),
              StatusIs(Code::invalid_argument, "but the request needs"));
  expect_all(from_device(dev, good.groups[0].d.buffer), kSentinel);
}

}  // namespace
}  // namespace accel
