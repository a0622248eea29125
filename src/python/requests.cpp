// The library requests as Device methods taking keyword arguments that mirror the C++ request structs
// (request_fields.hpp says how). python/accel/_requests.py adds the defaults Python users expect (sizes and dtypes
// from the buffers' shapes) on top.
#include <deque>

#include "python/futures.hpp"
#include "python/request_fields.hpp"

#include "accel/libs/blas/gemm.hpp"
#include "accel/libs/fft/fft.hpp"
#include "accel/libs/rand/generate.hpp"
#include "accel/libs/tensor/tensor.hpp"

namespace accel::python {

template <>
struct EnumNames<MatrixOrder> {
  static constexpr std::array values{std::pair{MatrixOrder::row_major, "row_major"},
                                     std::pair{MatrixOrder::column_major, "column_major"}};
};
template <>
struct EnumNames<Transpose> {
  static constexpr std::array values{std::pair{Transpose::none, "none"}, std::pair{Transpose::transpose, "transpose"}};
};
template <>
struct EnumNames<GemmCompute> {
  static constexpr std::array values{std::pair{GemmCompute::standard, "standard"},
                                     std::pair{GemmCompute::tf32, "tf32"}};
};
template <>
struct EnumNames<Activation> {
  static constexpr std::array values{
      std::pair{Activation::identity, "identity"},   std::pair{Activation::relu, "relu"},
      std::pair{Activation::gelu_tanh, "gelu_tanh"}, std::pair{Activation::silu, "silu"},
      std::pair{Activation::gelu_erf, "gelu_erf"},   std::pair{Activation::sigmoid, "sigmoid"},
      std::pair{Activation::tanh, "tanh"},           std::pair{Activation::log1p_relu, "log1p_relu"}};
};
template <>
struct EnumNames<BiasVector> {
  static constexpr std::array values{std::pair{BiasVector::none, "none"}, std::pair{BiasVector::per_row, "per_row"},
                                     std::pair{BiasVector::per_column, "per_column"},
                                     std::pair{BiasVector::per_channel, "per_channel"}};
};
template <>
struct EnumNames<FftType> {
  static constexpr std::array values{std::pair{FftType::c2c, "c2c"}, std::pair{FftType::r2c, "r2c"},
                                     std::pair{FftType::c2r, "c2r"}};
};
template <>
struct EnumNames<FftDirection> {
  static constexpr std::array values{std::pair{FftDirection::forward, "forward"},
                                     std::pair{FftDirection::inverse, "inverse"}};
};
template <>
struct EnumNames<FftNormalization> {
  static constexpr std::array values{std::pair{FftNormalization::none, "none"},
                                     std::pair{FftNormalization::inverse, "inverse"},
                                     std::pair{FftNormalization::orthonormal, "orthonormal"}};
};

template <>
struct EnumNames<rand::Generator> {
  static constexpr std::array values{
      std::pair{rand::Generator::philox4x32_10, "philox4x32_10"}, std::pair{rand::Generator::xorwow, "xorwow"},
      std::pair{rand::Generator::mrg32k3a, "mrg32k3a"}, std::pair{rand::Generator::sobol32, "sobol32"}};
};
template <>
struct EnumNames<rand::Distribution> {
  static constexpr std::array values{
      std::pair{rand::Distribution::uniform, "uniform"}, std::pair{rand::Distribution::normal, "normal"},
      std::pair{rand::Distribution::log_normal, "log_normal"}, std::pair{rand::Distribution::poisson, "poisson"},
      std::pair{rand::Distribution::bits, "bits"}};
};

template <>
struct EnumNames<tensor::Compute> {
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
RequestBinding<Gemm> gemm_binding() {
  using R = Gemm;
  return {"gemm",
          {field<R>(
               "a", [](R & r) -> auto& { return r.a; }),
           field<R>(
               "b", [](R & r) -> auto& { return r.b; }),
           field<R>(
               "c", [](R & r) -> auto& { return r.c; }),
           field<R>(
               "bias", [](R & r) -> auto& { return r.bias; }),
           field<R>(
               "alpha", [](R & r) -> auto& { return r.alpha; }),
           field<R>(
               "beta", [](R & r) -> auto& { return r.beta; }),
           field<R>(
               "order", [](R & r) -> auto& { return r.shape.order; }),
           field<R>(
               "transpose_a", [](R & r) -> auto& { return r.shape.transpose_a; }),
           field<R>(
               "transpose_b", [](R & r) -> auto& { return r.shape.transpose_b; }),
           field<R>(
               "m", [](R & r) -> auto& { return r.shape.m; }),
           field<R>(
               "n", [](R & r) -> auto& { return r.shape.n; }),
           field<R>(
               "k", [](R & r) -> auto& { return r.shape.k; }),
           field<R>(
               "lda", [](R & r) -> auto& { return r.shape.lda; }),
           field<R>(
               "ldb", [](R & r) -> auto& { return r.shape.ldb; }),
           field<R>(
               "ldc", [](R & r) -> auto& { return r.shape.ldc; }),
           field<R>(
               "batch", [](R & r) -> auto& { return r.shape.batch; }),
           field<R>(
               "stride_a", [](R & r) -> auto& { return r.shape.stride_a; }),
           field<R>(
               "stride_b", [](R & r) -> auto& { return r.shape.stride_b; }),
           field<R>(
               "stride_c", [](R & r) -> auto& { return r.shape.stride_c; }),
           field<R>(
               "input_type", [](R & r) -> auto& { return r.shape.input_type; }),
           field<R>(
               "output_type", [](R & r) -> auto& { return r.shape.output_type; }),
           field<R>(
               "compute", [](R & r) -> auto& { return r.shape.compute; }),
           field<R>(
               "activation", [](R & r) -> auto& { return r.shape.epilogue.activation; }),
           field<R>(
               "bias_vector", [](R & r) -> auto& { return r.shape.epilogue.bias; })}};
}

// accel::Fft (include/accel/libs/fft/fft.hpp); the layouts' members are prefixed input_ and output_.
RequestBinding<Fft> fft_binding() {
  using R = Fft;
  return {"fft",
          {field<R>(
               "input", [](R & r) -> auto& { return r.input; }),
           field<R>(
               "output", [](R & r) -> auto& { return r.output; }),
           field<R>(
               "type", [](R & r) -> auto& { return r.shape.type; }),
           field<R>(
               "precision", [](R & r) -> auto& { return r.shape.precision; }),
           field<R>(
               "rank", [](R & r) -> auto& { return r.shape.rank; }),
           field<R>(
               "n", [](R & r) -> auto& { return r.shape.n; }),
           field<R>(
               "batch", [](R & r) -> auto& { return r.shape.batch; }),
           field<R>(
               "direction", [](R & r) -> auto& { return r.shape.direction; }),
           field<R>(
               "normalization", [](R & r) -> auto& { return r.shape.normalization; }),
           field<R>(
               "input_embed", [](R & r) -> auto& { return r.shape.input.embed; }),
           field<R>(
               "input_stride", [](R & r) -> auto& { return r.shape.input.stride; }),
           field<R>(
               "input_distance", [](R & r) -> auto& { return r.shape.input.distance; }),
           field<R>(
               "output_embed", [](R & r) -> auto& { return r.shape.output.embed; }),
           field<R>(
               "output_stride", [](R & r) -> auto& { return r.shape.output.stride; }),
           field<R>(
               "output_distance", [](R & r) -> auto& { return r.shape.output.distance; })}};
}

// accel::rand::Generate (include/accel/libs/rand/generate.hpp).
RequestBinding<rand::Generate> random_binding() {
  using R = rand::Generate;
  return {"random",
          {field<R>(
               "output", [](R & r) -> auto& { return r.output; }),
           field<R>(
               "generator", [](R & r) -> auto& { return r.generator; }),
           field<R>(
               "distribution", [](R & r) -> auto& { return r.distribution; }),
           field<R>(
               "dtype", [](R & r) -> auto& { return r.dtype; }),
           field<R>(
               "seed", [](R & r) -> auto& { return r.seed; }),
           field<R>(
               "offset", [](R & r) -> auto& { return r.offset; }),
           field<R>(
               "count", [](R & r) -> auto& { return r.count; }),
           field<R>(
               "mean", [](R & r) -> auto& { return r.mean; }),
           field<R>(
               "stddev", [](R & r) -> auto& { return r.stddev; }),
           field<R>(
               "lambda_", [](R & r) -> auto& { return r.lambda; })}};
}

// accel::tensor::Contract: D = alpha * A B (contracted over the modes D lacks) + beta * C
// (include/accel/libs/tensor/tensor.hpp).
RequestBinding<tensor::Contract> contract_binding() {
  using R = tensor::Contract;
  return {"contract",
          {field<R>(
               "a", [](R & r) -> auto& { return r.a; }),
           field<R>(
               "b", [](R & r) -> auto& { return r.b; }),
           field<R>(
               "c", [](R & r) -> auto& { return r.c; }),
           field<R>(
               "d", [](R & r) -> auto& { return r.d; }),
           field<R>(
               "dtype", [](R & r) -> auto& { return r.dtype; }),
           field<R>(
               "compute", [](R & r) -> auto& { return r.compute; }),
           field<R>(
               "alpha", [](R & r) -> auto& { return r.alpha; }),
           field<R>(
               "beta", [](R & r) -> auto& { return r.beta; })}};
}

// Device.<name>(**kwargs) -> Future for a request answering Done.
template <class Request>
void bind_request(nb::class_<PyDevice>& device_class, RequestBinding<Request> binding) {
  // nanobind keeps the name and docstring pointers: they live as long as the module.
  static std::deque<std::string> texts;
  const char* doc = texts.emplace_back(binding.doc()).c_str();
  const char* name = texts.emplace_back(binding.name).c_str();
  device_class.def(
      name,
      [binding = std::move(binding)](const PyDevice& device, nb::kwargs arguments) {
        Request request = binding.build(device, arguments);
        return make_done_future(send_released([&] { return device.device.ask(std::move(request)); }));
      },
      doc);
}

}  // namespace

void bind_requests(nb::module_& module) {
  auto device_class = nb::borrow<nb::class_<PyDevice>>(module.attr("Device"));
  bind_request(device_class, gemm_binding());
  bind_request(device_class, fft_binding());
  bind_request(device_class, random_binding());
  bind_request(device_class, contract_binding());
}

}  // namespace accel::python
