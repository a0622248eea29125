#include "libs/rand/curand_generator.hpp"

#include <fmt/format.h>

namespace accel::rand {
namespace {

std::string_view curand_error_name(curandStatus_t status) {
  switch (status) {
    case CURAND_STATUS_SUCCESS: return "CURAND_STATUS_SUCCESS";
    case CURAND_STATUS_VERSION_MISMATCH: return "CURAND_STATUS_VERSION_MISMATCH";
    case CURAND_STATUS_NOT_INITIALIZED: return "CURAND_STATUS_NOT_INITIALIZED";
    case CURAND_STATUS_ALLOCATION_FAILED: return "CURAND_STATUS_ALLOCATION_FAILED";
    case CURAND_STATUS_TYPE_ERROR: return "CURAND_STATUS_TYPE_ERROR";
    case CURAND_STATUS_OUT_OF_RANGE: return "CURAND_STATUS_OUT_OF_RANGE";
    case CURAND_STATUS_LENGTH_NOT_MULTIPLE: return "CURAND_STATUS_LENGTH_NOT_MULTIPLE";
    case CURAND_STATUS_DOUBLE_PRECISION_REQUIRED: return "CURAND_STATUS_DOUBLE_PRECISION_REQUIRED";
    case CURAND_STATUS_LAUNCH_FAILURE: return "CURAND_STATUS_LAUNCH_FAILURE";
    case CURAND_STATUS_PREEXISTING_FAILURE: return "CURAND_STATUS_PREEXISTING_FAILURE";
    case CURAND_STATUS_INITIALIZATION_FAILED: return "CURAND_STATUS_INITIALIZATION_FAILED";
    case CURAND_STATUS_ARCH_MISMATCH: return "CURAND_STATUS_ARCH_MISMATCH";
    case CURAND_STATUS_INTERNAL_ERROR: return "CURAND_STATUS_INTERNAL_ERROR";
  }
  return "an unknown cuRAND status";
}

curandRngType_t rng_type(Generator generator) {
  switch (generator) {
    case Generator::xorwow: return CURAND_RNG_PSEUDO_XORWOW;
    case Generator::mrg32k3a: return CURAND_RNG_PSEUDO_MRG32K3A;
    case Generator::sobol32: return CURAND_RNG_QUASI_SOBOL32;
    case Generator::philox4x32_10: break;
  }
  return CURAND_RNG_PSEUDO_PHILOX4_32_10;
}

}  // namespace

Status curand_status(curandStatus_t status, std::string_view what) {
  if (status == CURAND_STATUS_SUCCESS) return Status();
  const std::string message = fmt::format("cuRAND: {} failed: {}", what, curand_error_name(status));
  switch (status) {
    case CURAND_STATUS_ALLOCATION_FAILED: return resource_exhausted(message);
    case CURAND_STATUS_TYPE_ERROR:
    case CURAND_STATUS_OUT_OF_RANGE:
    case CURAND_STATUS_LENGTH_NOT_MULTIPLE: return invalid_argument(message);
    case CURAND_STATUS_DOUBLE_PRECISION_REQUIRED:
    case CURAND_STATUS_ARCH_MISMATCH: return not_supported(message);
    default: return internal_error(message);
  }
}

LibraryVersion curand_library() {
  int version = 0;
  if (curandGetVersion(&version) != CURAND_STATUS_SUCCESS) return {.name = "cuRAND", .version = "unknown"};
  return {.name = "cuRAND", .version = fmt::format("{}.{}.{}", version / 1000, version % 1000 / 100, version % 100)};
}

Result<std::unique_ptr<CurandGenerator>> CurandGenerator::make(Generator generator, bool host, cudaStream_t stream) {
  curandGenerator_t handle = nullptr;
  const curandRngType_t type = rng_type(generator);
  ACCEL_RETURN_IF_ERROR(
      curand_status(host ? curandCreateGeneratorHost(&handle, type) : curandCreateGenerator(&handle, type),
                    fmt::format("creating a {} generator", to_string(generator))));
  std::unique_ptr<CurandGenerator> made(new CurandGenerator(handle, generator));
  if (!host) ACCEL_RETURN_IF_ERROR(curand_status(curandSetStream(handle, stream), "binding a generator to its stream"));
  return made;
}

Result<std::unique_ptr<CurandGenerator>> CurandGenerator::on_device(Generator generator, cudaStream_t stream) {
  return make(generator, false, stream);
}

Result<std::unique_ptr<CurandGenerator>> CurandGenerator::on_host(Generator generator) {
  return make(generator, true, nullptr);
}

CurandGenerator::~CurandGenerator() { curandDestroyGenerator(handle_); }

Status CurandGenerator::generate(const Generate& r, const CheckedGenerate& checked, void* output) const {
  if (checked.count == 0) return Status();
  if (generator_ != Generator::sobol32) {
    ACCEL_RETURN_IF_ERROR(curand_status(curandSetPseudoRandomGeneratorSeed(handle_, r.seed), "setting the seed"));
  }
  ACCEL_RETURN_IF_ERROR(curand_status(curandSetGeneratorOffset(handle_, r.offset), "setting the offset"));
  const std::size_t n = checked.count;
  const auto f32 = static_cast<float*>(output);
  const auto f64 = static_cast<double*>(output);
  const auto u32 = static_cast<unsigned*>(output);
  curandStatus_t status = CURAND_STATUS_SUCCESS;
  switch (checked.kind) {
    case OutputKind::bits: status = curandGenerate(handle_, u32, n); break;
    case OutputKind::uniform_f32: status = curandGenerateUniform(handle_, f32, n); break;
    case OutputKind::uniform_f64: status = curandGenerateUniformDouble(handle_, f64, n); break;
    case OutputKind::normal_f32:
      status = curandGenerateNormal(handle_, f32, n, static_cast<float>(r.mean), static_cast<float>(r.stddev));
      break;
    case OutputKind::normal_f64: status = curandGenerateNormalDouble(handle_, f64, n, r.mean, r.stddev); break;
    case OutputKind::log_normal_f32:
      status = curandGenerateLogNormal(handle_, f32, n, static_cast<float>(r.mean), static_cast<float>(r.stddev));
      break;
    case OutputKind::log_normal_f64: status = curandGenerateLogNormalDouble(handle_, f64, n, r.mean, r.stddev); break;
    case OutputKind::poisson: status = curandGeneratePoisson(handle_, u32, n, r.lambda); break;
  }
  return curand_status(
      status, fmt::format("generating {} {} numbers with {}", n, to_string(r.distribution), to_string(generator_)));
}

}  // namespace accel::rand
