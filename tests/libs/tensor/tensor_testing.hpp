// What the tensor tests share, on the CPU device and on CUDA: one description of a request of any of the family's
// operations (modes as einsum strings, letter extents, operators, scalars), random inputs for it, its run on a
// device, and a reference computed here by naive loops in double (the second implementation the devices are
// checked against; it has no place outside the tests).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "accel/device/device.hpp"
#include "accel/libs/tensor/tensor.hpp"
#include "testing/cuda_fixture.hpp"
#include "testing/status_matchers.hpp"

namespace accel::tensor::testing {

using Sizes = std::map<char, std::int64_t>;
enum class Op : std::uint8_t { contract, binary, trinary, reduce, permute };

// One request: A (and B for contract and trinary) into D (a permutation's B). C, when read, has D's modes.
struct Spec {
  Op op = Op::contract;
  std::string a, b, d;
  Sizes sizes;
  DType dtype = DType::f32;
  Compute compute = Compute::standard;
  Unary op_a = Unary::identity, op_b = Unary::identity, op_c = Unary::identity;
  Binary op1 = Binary::add, op2 = Binary::add;
  double alpha = 1.0, beta = 0.0, gamma = 0.0;
  bool in_place = false;  // C is D's own contents rather than a buffer of its own
};

inline std::int64_t count_of(const std::string& modes, const Sizes& sizes) {
  std::int64_t n = 1;
  for (char m : modes) n *= sizes.at(m);
  return n;
}

inline Tensor shaped(BufferHandle buffer, const std::string& modes, const Sizes& sizes) {
  Tensor t{.buffer = buffer, .rank = static_cast<std::uint8_t>(modes.size())};
  for (std::size_t i = 0; i < modes.size(); ++i) {
    t.modes[i] = modes[i];
    t.extents[i] = static_cast<std::int32_t>(sizes.at(modes[i]));
  }
  return t;
}

// The inputs of a spec: A, B (empty where unused) and C, the addend (or D's contents in place).
struct Inputs {
  accel::testing::HostArray a, b, c;
};

// Uniform in [low, high]; elementwise operators like sqrt and log want positive inputs.
inline Inputs random_inputs(const Spec& s, std::mt19937_64& rng, double low = -1.0, double high = 1.0) {
  const bool has_b = s.op == Op::contract || s.op == Op::trinary;
  Inputs in{accel::testing::HostArray(s.dtype, static_cast<std::size_t>(count_of(s.a, s.sizes))),
            accel::testing::HostArray(s.dtype, has_b ? static_cast<std::size_t>(count_of(s.b, s.sizes)) : 0),
            accel::testing::HostArray(s.dtype, static_cast<std::size_t>(count_of(s.d, s.sizes)))};
  in.a.fill_uniform(rng, low, high);
  in.b.fill_uniform(rng, low, high);
  in.c.fill_uniform(rng, low, high);
  return in;
}

inline double apply(Unary op, double x) {
  switch (op) {
    case Unary::identity: return x;
    case Unary::sqrt: return std::sqrt(x);
    case Unary::relu: return std::max(x, 0.0);
    case Unary::rcp: return 1.0 / x;
    case Unary::sigmoid: return 1.0 / (1.0 + std::exp(-x));
    case Unary::tanh: return std::tanh(x);
    case Unary::exp: return std::exp(x);
    case Unary::log: return std::log(x);
    case Unary::abs: return std::abs(x);
    case Unary::neg: return -x;
  }
  return NAN;
}

inline double combine(Binary op, double x, double y) {
  switch (op) {
    case Binary::add: return x + y;
    case Binary::mul: return x * y;
    case Binary::max: return std::max(x, y);
    case Binary::min: return std::min(x, y);
  }
  return NAN;
}

// Calls `visit(index)` for every assignment of the letters of `modes`, in row-major order.
template <class Visit>
void for_each_index(const std::string& modes, const Sizes& sizes, Visit visit) {
  std::map<char, std::int64_t> index;
  for (char m : modes) index[m] = 0;
  const std::int64_t total = count_of(modes, sizes);
  for (std::int64_t n = 0; n < total; ++n) {
    visit(index);
    for (std::size_t i = modes.size(); i-- > 0;) {
      if (++index[modes[i]] < sizes.at(modes[i])) break;
      index[modes[i]] = 0;
    }
  }
}

inline std::size_t offset(const std::string& modes, const Sizes& sizes, const std::map<char, std::int64_t>& index) {
  std::int64_t at = 0;
  for (char m : modes) at = at * sizes.at(m) + index.at(m);
  return static_cast<std::size_t>(at);
}

// D as the spec says, by loops over every index, in double.
inline std::vector<double> reference(const Spec& s, const Inputs& in) {
  std::string all = s.d;
  for (char m : s.a + s.b)
    if (all.find(m) == std::string::npos) all += m;
  std::vector<double> out(in.c.size());
  const std::vector<double>& c = in.c.values;
  if (s.op == Op::contract || s.op == Op::reduce) {
    const bool reduce = s.op == Op::reduce;
    std::vector<double> acc(out.size(), reduce ? (s.op1 == Binary::mul   ? 1.0
                                                  : s.op1 == Binary::max ? -INFINITY
                                                  : s.op1 == Binary::min ? INFINITY
                                                                         : 0.0)
                                               : 0.0);
    for_each_index(all, s.sizes, [&](const auto& i) {
      double& slot = acc[offset(s.d, s.sizes, i)];
      const double x = in.a.values[offset(s.a, s.sizes, i)];
      if (reduce) {
        slot = combine(s.op1, slot, apply(s.op_a, x));
      } else {
        slot += x * in.b.values[offset(s.b, s.sizes, i)];
      }
    });
    for (std::size_t i = 0; i < out.size(); ++i) {
      out[i] = (s.alpha != 0 ? s.alpha * acc[i] : 0.0) + (s.beta != 0 ? s.beta * c[i] : 0.0);
    }
    return out;
  }
  for_each_index(s.d, s.sizes, [&](const auto& i) {
    const std::size_t at = offset(s.d, s.sizes, i);
    const double x = s.alpha != 0 ? s.alpha * apply(s.op_a, in.a.values[offset(s.a, s.sizes, i)]) : 0.0;
    if (s.op == Op::permute) {
      out[at] = x;
      return;
    }
    const double z = s.gamma != 0 ? s.gamma * apply(s.op_c, c[at]) : 0.0;
    if (s.op == Op::binary) {
      out[at] = combine(s.op1, x, z);
      return;
    }
    const double y = s.beta != 0 ? s.beta * apply(s.op_b, in.b.values[offset(s.b, s.sizes, i)]) : 0.0;
    out[at] = combine(s.op2, combine(s.op1, x, y), z);
  });
  return out;
}

// The error of `out` against `expected`, relative to what rounding scales with. For a contraction that is
// |alpha| |A| |B| + |beta| |C|, so that a sum which cancels to near zero (a full contraction of inputs in [-1, 1]) is
// not held to the precision of its own tiny size; for the other requests, `expected` itself.
inline double rounding_error(const std::vector<double>& out, const std::vector<double>& expected, const Spec& s,
                             const Inputs& in) {
  if (s.op != Op::contract) return accel::testing::relative_error(out, expected);
  Spec magnitude_spec = s;
  magnitude_spec.alpha = std::abs(s.alpha);
  magnitude_spec.beta = std::abs(s.beta);
  Inputs magnitudes = in;
  for (accel::testing::HostArray* array : {&magnitudes.a, &magnitudes.b, &magnitudes.c}) {
    for (double& value : array->values) value = std::abs(value);
  }
  return accel::testing::error_relative_to(out, expected, reference(magnitude_spec, magnitudes));
}

inline BufferHandle upload(Device& device, const accel::testing::HostArray& host) {
  if (host.size() == 0) return {};
  Result<BufferHandle> buffer = device.ask(Allocate{.dtype = host.dtype, .count = host.size()}).wait();
  EXPECT_THAT(buffer, accel::testing::IsOk());
  if (!buffer.ok()) return {};
  EXPECT_THAT(device.ask(CopyToDevice{.source = host.source(), .destination = *buffer}).wait(), accel::testing::IsOk());
  return *buffer;
}

// The request of a spec over the given buffers.
struct Buffers {
  BufferHandle a, b, c, d;
};

inline Status ask(Device& device, const Spec& s, const Buffers& x) {
  const Tensor a = shaped(x.a, s.a, s.sizes), d = shaped(x.d, s.d, s.sizes);
  switch (s.op) {
    case Op::contract:
      return device
          .ask(Contract{.dtype = s.dtype,
                        .compute = s.compute,
                        .a = a,
                        .b = shaped(x.b, s.b, s.sizes),
                        .c = x.c,
                        .d = d,
                        .alpha = s.alpha,
                        .beta = s.beta})
          .wait()
          .status();
    case Op::binary:
      return device
          .ask(ElementwiseBinary{.dtype = s.dtype,
                                 .compute = s.compute,
                                 .op_a = s.op_a,
                                 .op_c = s.op_c,
                                 .op = s.op1,
                                 .a = a,
                                 .c = x.c,
                                 .d = d,
                                 .alpha = s.alpha,
                                 .gamma = s.gamma})
          .wait()
          .status();
    case Op::trinary:
      return device
          .ask(ElementwiseTrinary{.dtype = s.dtype,
                                  .compute = s.compute,
                                  .op_a = s.op_a,
                                  .op_b = s.op_b,
                                  .op_c = s.op_c,
                                  .op_ab = s.op1,
                                  .op_abc = s.op2,
                                  .a = a,
                                  .b = shaped(x.b, s.b, s.sizes),
                                  .c = x.c,
                                  .d = d,
                                  .alpha = s.alpha,
                                  .beta = s.beta,
                                  .gamma = s.gamma})
          .wait()
          .status();
    case Op::reduce:
      return device
          .ask(Reduce{.dtype = s.dtype,
                      .compute = s.compute,
                      .op_a = s.op_a,
                      .op = s.op1,
                      .a = a,
                      .c = x.c,
                      .d = d,
                      .alpha = s.alpha,
                      .beta = s.beta})
          .wait()
          .status();
    case Op::permute:
      return device
          .ask(Permute{.dtype = s.dtype, .compute = s.compute, .op_a = s.op_a, .a = a, .b = d, .alpha = s.alpha})
          .wait()
          .status();
  }
  return internal_error("unknown Op");
}

// Runs a spec on `device`: D holds C's values first (what an in-place request reads), or a separate C does.
struct Outcome {
  Status status;
  std::vector<double> d;
};

inline Outcome run(Device& device, const Spec& s, const Inputs& in) {
  Buffers x{.a = upload(device, in.a), .b = upload(device, in.b), .d = upload(device, in.c)};
  if (!s.in_place && s.op != Op::permute) x.c = upload(device, in.c);
  Outcome out{.status = ask(device, s, x)};
  accel::testing::HostArray result(s.dtype, in.c.size());
  EXPECT_THAT(device.ask(CopyToHost{.source = x.d, .destination = result.destination()}).wait(),
              accel::testing::IsOk());
  result.decode();
  out.d = result.values;
  for (BufferHandle h : {x.a, x.b, x.c, x.d})
    if (!h.is_null()) (void)device.free(h).wait();
  return out;
}

// Relative error (in the norm) each dtype's results are held to.
inline double tolerance(DType dtype) {
  switch (dtype) {
    case DType::f64: return 1e-12;
    case DType::f32: return 1e-5;
    case DType::f16: return 4e-3;
    default: return 2e-2;
  }
}

}  // namespace accel::tensor::testing
