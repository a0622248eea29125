// The library requests as Device methods taking keyword arguments that mirror the C++ request structs
// (request_fields.hpp says how). python/accel/_requests.py adds the defaults Python users expect (sizes and dtypes
// from the buffers' shapes) on top.
#include "python/futures.hpp"
#include "python/request_fields.hpp"

#include "accel/libs/blas/gemm.hpp"
#include "accel/libs/fft/fft.hpp"
#include "accel/libs/rand/generate.hpp"
#include "accel/libs/tensor/tensor.hpp"

namespace accel::python {

template <>
struct EnumNames<GemmCompute> {
  static constexpr const char* python_name = "GemmCompute";
  static constexpr std::array values{std::pair{GemmCompute::standard, "standard"},
                                     std::pair{GemmCompute::tf32, "tf32"}};
};
template <>
struct EnumNames<FftType> {
  static constexpr const char* python_name = "FftType";
  static constexpr std::array values{std::pair{FftType::c2c, "c2c"}, std::pair{FftType::r2c, "r2c"},
                                     std::pair{FftType::c2r, "c2r"}};
};
template <>
struct EnumNames<FftDirection> {
  static constexpr const char* python_name = "FftDirection";
  static constexpr std::array values{std::pair{FftDirection::forward, "forward"},
                                     std::pair{FftDirection::inverse, "inverse"}};
};
template <>
struct EnumNames<FftNormalization> {
  static constexpr const char* python_name = "FftNormalization";
  static constexpr std::array values{std::pair{FftNormalization::none, "none"},
                                     std::pair{FftNormalization::inverse, "inverse"},
                                     std::pair{FftNormalization::orthonormal, "orthonormal"}};
};

template <>
struct EnumNames<rand::Generator> {
  static constexpr const char* python_name = "Generator";
  static constexpr std::array values{
      std::pair{rand::Generator::philox4x32_10, "philox4x32_10"}, std::pair{rand::Generator::xorwow, "xorwow"},
      std::pair{rand::Generator::mrg32k3a, "mrg32k3a"}, std::pair{rand::Generator::sobol32, "sobol32"}};
};
template <>
struct EnumNames<rand::Distribution> {
  static constexpr const char* python_name = "Distribution";
  static constexpr std::array values{
      std::pair{rand::Distribution::uniform, "uniform"}, std::pair{rand::Distribution::normal, "normal"},
      std::pair{rand::Distribution::log_normal, "log_normal"}, std::pair{rand::Distribution::poisson, "poisson"},
      std::pair{rand::Distribution::bits, "bits"}};
};

template <>
struct EnumNames<tensor::Compute> {
  static constexpr const char* python_name = "TensorCompute";
  static constexpr std::array values{
      std::pair{tensor::Compute::standard, "standard"}, std::pair{tensor::Compute::f32, "float32"},
      std::pair{tensor::Compute::f64, "float64"},       std::pair{tensor::Compute::f16, "float16"},
      std::pair{tensor::Compute::bf16, "bfloat16"},     std::pair{tensor::Compute::tf32, "tf32"},
      std::pair{tensor::Compute::tf32x3, "tf32x3"}};
};

// A tensor operand from (buffer, "modes"): one mode letter per axis of the buffer's shape, the extents its shape's.
template <>
struct FromPython<tensor::Tensor> {
  static tensor::Tensor convert(nb::handle value, std::string_view request, std::string_view name,
                                const PyDevice& device) {
    if (!nb::isinstance<nb::tuple>(value) || nb::len(value) != 2 || !nb::isinstance<PyBuffer>(value[0]) ||
        !nb::isinstance<nb::str>(value[1])) {
      refuse_argument(request, name, "a (accel.Buffer, 'modes') pair", value);
    }
    const PyBuffer& buffer = nb::cast<const PyBuffer&>(value[0]);
    const std::string modes = nb::cast<std::string>(value[1]);
    if (modes.size() != buffer.shape.size() || modes.size() > tensor::kMaxModes) {
      raise_status(
          invalid_argument(fmt::format("{}: argument '{}' names {} modes ('{}') for a buffer of shape {} (one "
                                       "letter per axis, at most {})",
                                       request, name, modes.size(), modes, buffer.shape, tensor::kMaxModes)));
    }
    tensor::Tensor tensor{.buffer = buffer.use_on(device, name), .rank = static_cast<std::uint8_t>(modes.size())};
    for (std::size_t i = 0; i < modes.size(); ++i) {
      tensor.modes[i] = modes[i];
      if (buffer.shape[i] > std::numeric_limits<std::int32_t>::max()) {
        raise_status(invalid_argument(fmt::format("{}: argument '{}': extent {} of mode '{}' is too large", request,
                                                  name, buffer.shape[i], modes[i])));
      }
      tensor.extents[i] = static_cast<std::int32_t>(buffer.shape[i]);
    }
    return tensor;
  }
};

namespace {

// accel::Gemm: C = activation(alpha * op(A) * op(B) + beta * C + bias) (include/accel/libs/blas/gemm.hpp).
void bind_gemm(nb::class_<PyDevice>& device) {
  using R = Gemm;
  using S = GemmShape;
  bind_request<R>(device, "gemm",
                  {member("a", &R::a),
                   member("b", &R::b),
                   member("c", &R::c),
                   member("bias", &R::bias),
                   member("alpha", &R::alpha),
                   member("beta", &R::beta),
                   member("order", &R::shape, &S::order),
                   member("transpose_a", &R::shape, &S::transpose_a),
                   member("transpose_b", &R::shape, &S::transpose_b),
                   member("m", &R::shape, &S::m),
                   member("n", &R::shape, &S::n),
                   member("k", &R::shape, &S::k),
                   member("lda", &R::shape, &S::lda),
                   member("ldb", &R::shape, &S::ldb),
                   member("ldc", &R::shape, &S::ldc),
                   member("batch", &R::shape, &S::batch),
                   member("stride_a", &R::shape, &S::stride_a),
                   member("stride_b", &R::shape, &S::stride_b),
                   member("stride_c", &R::shape, &S::stride_c),
                   member("input_type", &R::shape, &S::input_type),
                   member("output_type", &R::shape, &S::output_type),
                   member("compute", &R::shape, &S::compute),
                   member("activation", &R::shape, &S::epilogue, &Epilogue::activation),
                   member("bias_vector", &R::shape, &S::epilogue, &Epilogue::bias)});
}

// accel::Fft (include/accel/libs/fft/fft.hpp); the layouts' members are prefixed input_ and output_.
void bind_fft(nb::class_<PyDevice>& device) {
  using R = Fft;
  using S = FftShape;
  using L = FftLayout;
  bind_request<R>(
      device, "fft",
      {member("input", &R::input), member("output", &R::output), member("type", &R::shape, &S::type),
       member("precision", &R::shape, &S::precision), member("rank", &R::shape, &S::rank),
       member("n", &R::shape, &S::n), member("batch", &R::shape, &S::batch),
       member("direction", &R::shape, &S::direction), member("normalization", &R::shape, &S::normalization),
       member("input_embed", &R::shape, &S::input, &L::embed), member("input_stride", &R::shape, &S::input, &L::stride),
       member("input_distance", &R::shape, &S::input, &L::distance),
       member("output_embed", &R::shape, &S::output, &L::embed),
       member("output_stride", &R::shape, &S::output, &L::stride),
       member("output_distance", &R::shape, &S::output, &L::distance)});
}

}  // namespace

void bind_requests(nb::module_& module) {
  auto device = nb::borrow<nb::class_<PyDevice>>(module.attr("Device"));
  bind_gemm(device);
  bind_fft(device);
  // accel::rand::Generate (include/accel/libs/rand/generate.hpp).
  using G = rand::Generate;
  bind_request<G>(
      device, "random",
      {member("output", &G::output), member("generator", &G::generator), member("distribution", &G::distribution),
       member("dtype", &G::dtype), member("seed", &G::seed), member("offset", &G::offset), member("count", &G::count),
       member("mean", &G::mean), member("stddev", &G::stddev), member("lambda_", &G::lambda)});
  // accel::tensor::Contract: D = alpha * A B (contracted over the modes D lacks) + beta * C
  // (include/accel/libs/tensor/tensor.hpp).
  using C = tensor::Contract;
  bind_request<C>(
      device, "contract",
      {member("a", &C::a), member("b", &C::b), member("c", &C::c), member("d", &C::d), member("dtype", &C::dtype),
       member("compute", &C::compute), member("alpha", &C::alpha), member("beta", &C::beta)});
  // accel::CopyOnDevice: `count` elements between two buffers of this device (include/accel/device/requests.hpp).
  bind_request<CopyOnDevice>(
      device, "copy_buffer",
      {member("source", &CopyOnDevice::source), member("source_offset", &CopyOnDevice::source_offset),
       member("destination", &CopyOnDevice::destination),
       member("destination_offset", &CopyOnDevice::destination_offset), member("count", &CopyOnDevice::count)});
  export_enums<MatrixOrder, Transpose, GemmCompute, Activation, BiasVector, FftType, FftDirection, FftNormalization,
               rand::Generator, rand::Distribution, tensor::Compute>(module);
  bind_blas_requests(module);
  bind_solver_requests(module);
  bind_sparse_requests(module);
}

}  // namespace accel::python
