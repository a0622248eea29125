// What the CPU and CUDA recording tests share: every BLAS routine of levels 1-3 that is not a GEMM, in one recorded
// pipeline over buffers of one device, with increments of both signs, both triangles, both sides and transposes.
// Each launch feeds the next (Ger updates A, Trmm B, Symm C), so launches differ; Iamax and Iamin come last, so their
// vectors' final values say whether they were right.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "accel/device/recording.hpp"
#include "accel/libs/blas/level1.hpp"
#include "accel/libs/blas/level2.hpp"
#include "accel/libs/blas/level3.hpp"

namespace accel::testing {

template <class T>  // float or double
struct BlasRoutinesPipeline {
  std::int64_t n = 0;
  Buffer<T> x, y, z;         // vectors of 2n elements (increments up to 2)
  Buffer<T> a, t, b, c, d;   // n x n: A general (its triangles read as symmetric), T triangular, B, C, D
  Buffer<T> norm, sum, dot;  // one element each
  Buffer<std::int32_t> at_most, at_least;

  // Allocates the buffers on `device` and fills them from `seed`: the same seed gives the same values on every
  // device. T's diagonal is 2 to 3 and its other elements at most 1/n, so that Trsv stays well conditioned.
  static Result<BlasRoutinesPipeline> make(const Device& device, std::int64_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> dist(-1, 1);
    const auto random = [&](std::int64_t count, double scale) {
      std::vector<T> v(static_cast<std::size_t>(count));
      for (T& e : v) e = static_cast<T>(dist(rng) * scale);
      return v;
    };
    BlasRoutinesPipeline p{.n = n};
    const auto put = [&](Buffer<T>& buffer, const std::vector<T>& values) -> Status {
      ACCEL_ASSIGN_OR_RETURN(buffer, device.template allocate<T>(values.size()).wait());
      return device.upload(std::span<const T>(values), buffer).wait().status();
    };
    for (Buffer<T>* v : {&p.x, &p.y, &p.z}) ACCEL_RETURN_IF_ERROR(put(*v, random(2 * n, 1.0)));
    for (Buffer<T>* m : {&p.a, &p.b, &p.c, &p.d}) ACCEL_RETURN_IF_ERROR(put(*m, random(n * n, 1.0)));
    std::vector<T> triangular = random(n * n, 1.0 / static_cast<double>(n));
    for (std::int64_t i = 0; i < n; ++i) triangular[i * n + i] = static_cast<T>(2.5 + dist(rng) / 2);
    ACCEL_RETURN_IF_ERROR(put(p.t, triangular));
    for (Buffer<T>* s : {&p.norm, &p.sum, &p.dot}) ACCEL_RETURN_IF_ERROR(put(*s, std::vector<T>{T(-7)}));
    ACCEL_ASSIGN_OR_RETURN(p.at_most, device.template allocate<std::int32_t>(1).wait());
    ACCEL_ASSIGN_OR_RETURN(p.at_least, device.template allocate<std::int32_t>(1).wait());
    return p;
  }

  // Calls `send(request)` for every step, in order, until one fails.
  template <class Send>
  Status each_step(Send&& send) const {
    constexpr DType dtype = dtype_of<T>();
    const auto transposed = Transpose::transpose;
    ACCEL_RETURN_IF_ERROR(send(blas::Copy{.dtype = dtype, .n = n, .incx = 2, .incy = -1, .x = x, .y = y}));
    ACCEL_RETURN_IF_ERROR(send(blas::Swap{.dtype = dtype, .n = n, .incx = 1, .incy = -2, .x = y, .y = z}));
    ACCEL_RETURN_IF_ERROR(
        send(blas::Rot{.dtype = dtype, .n = n, .incx = -1, .incy = 2, .c = 0.8, .s = 0.6, .x = x, .y = z}));
    ACCEL_RETURN_IF_ERROR(send(blas::Nrm2{.dtype = dtype, .n = n, .incx = 2, .x = x, .result = norm}));
    ACCEL_RETURN_IF_ERROR(send(blas::Asum{.dtype = dtype, .n = 2 * n, .x = z, .result = sum}));
    ACCEL_RETURN_IF_ERROR(
        send(blas::Dot{.dtype = dtype, .n = n, .incx = -1, .incy = 2, .x = y, .y = z, .result = dot}));
    ACCEL_RETURN_IF_ERROR(send(blas::Ger{.dtype = dtype,
                                         .m = n,
                                         .n = n,
                                         .incx = -2,
                                         .incy = 1,
                                         .alpha = 0.5 / static_cast<double>(n),
                                         .a = a,
                                         .x = x,
                                         .y = y}));
    ACCEL_RETURN_IF_ERROR(send(blas::Symv{.dtype = dtype,
                                          .fill = blas::Fill::upper,
                                          .n = n,
                                          .incy = -1,
                                          .alpha = 1.0 / static_cast<double>(n),
                                          .beta = 0.5,
                                          .a = a,
                                          .x = x,
                                          .y = y}));
    ACCEL_RETURN_IF_ERROR(send(blas::Trsv{.dtype = dtype, .n = n, .incx = -1, .a = t, .x = z}));
    ACCEL_RETURN_IF_ERROR(send(blas::Symm{.dtype = dtype,
                                          .side = blas::Side::right,
                                          .m = n,
                                          .n = n,
                                          .alpha = 0.75 / static_cast<double>(n),
                                          .beta = 0.25,
                                          .a = a,
                                          .b = b,
                                          .c = c}));
    ACCEL_RETURN_IF_ERROR(send(blas::Trmm{.dtype = dtype,
                                          .fill = blas::Fill::upper,
                                          .transpose = transposed,
                                          .m = n,
                                          .n = n,
                                          .alpha = 0.5,
                                          .a = t,
                                          .b = b}));
    ACCEL_RETURN_IF_ERROR(send(blas::Geam{.dtype = dtype,
                                          .transpose_a = transposed,
                                          .m = n,
                                          .n = n,
                                          .alpha = 1.0,
                                          .beta = -0.5,
                                          .a = c,
                                          .b = b,
                                          .c = d}));
    ACCEL_RETURN_IF_ERROR(send(blas::Iamax{.dtype = dtype, .n = n, .incx = 2, .x = z, .result = at_most}));
    return send(blas::Iamin{.dtype = dtype, .n = 2 * n, .x = y, .result = at_least});
  }

  // The steps sent one by one, each waited for; the first failure.
  [[nodiscard]] Status run_one_by_one(const Device& device) const {
    return each_step([&](const auto& request) { return device.ask(request).wait().status(); });
  }

  // The steps recorded for `device`.
  [[nodiscard]] Result<Recording> record(const Device& device) const {
    Recording recording(device);
    ACCEL_RETURN_IF_ERROR(each_step([&](const auto& request) { return recording.record(request); }));
    return recording;
  }

  // The buffers the steps write, in a fixed order, for comparisons: vectors, matrices, then scalars.
  [[nodiscard]] std::vector<const Buffer<T>*> outputs() const {
    return {&x, &y, &z, &a, &b, &c, &d, &norm, &sum, &dot};
  }
};

}  // namespace accel::testing
