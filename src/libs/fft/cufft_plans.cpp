#include "libs/fft/cufft_plans.hpp"

#include <cufftXt.h>
#include <fmt/format.h>

#include <array>
#include <span>
#include <utility>

namespace accel::fft {
namespace {

// cuFFT plans may hold device memory (twiddle factors, for large sizes a sizeable amount), so fewer are kept per
// stream than FFTW's host plans.
constexpr std::size_t kPlanCapacity = 64;

// An execution as CapturedExecutions takes it.
template <class Enqueue>
class Enqueuing final : public CapturedExecutions::Execution {
 public:
  explicit Enqueuing(Enqueue enqueue) : enqueue_(std::move(enqueue)) {}
  [[nodiscard]] Status enqueue() const override { return enqueue_(); }

 private:
  Enqueue enqueue_;
};

std::string_view cufft_name(cufftResult result) {
  switch (result) {
    case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_TYPE: return "CUFFT_INVALID_TYPE";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    case CUFFT_UNALIGNED_DATA: return "CUFFT_UNALIGNED_DATA";
    case CUFFT_INVALID_DEVICE: return "CUFFT_INVALID_DEVICE";
    case CUFFT_NO_WORKSPACE: return "CUFFT_NO_WORKSPACE";
    case CUFFT_NOT_IMPLEMENTED: return "CUFFT_NOT_IMPLEMENTED";
    case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
    case CUFFT_MISSING_DEPENDENCY: return "CUFFT_MISSING_DEPENDENCY";
    case CUFFT_NVRTC_FAILURE: return "CUFFT_NVRTC_FAILURE";
    case CUFFT_NVJITLINK_FAILURE: return "CUFFT_NVJITLINK_FAILURE";
    case CUFFT_NVSHMEM_FAILURE: return "CUFFT_NVSHMEM_FAILURE";
  }
  return "unknown cufftResult";
}

cufftType cufft_type(const FftGeometry& g) {
  const bool f64 = g.real_type == DType::f64;
  switch (g.shape.type) {
    case FftType::c2c: return f64 ? CUFFT_Z2Z : CUFFT_C2C;
    case FftType::r2c: return f64 ? CUFFT_D2Z : CUFFT_R2C;
    case FftType::c2r: return f64 ? CUFFT_Z2D : CUFFT_C2R;
  }
  return CUFFT_C2C;
}

// cuFFT's legacy API (cufftMakePlanMany64, cufftExec*) has no half precision; its Xt API takes the element types
// of each side and of the execution.
cudaDataType half_type(DType side) { return side == DType::f16 ? CUDA_R_16F : CUDA_C_16F; }

// A plan's key: every field it depends on, resolved, as fixed-size integers (equal bytes are equal plans).
using PlanKey = std::array<std::int64_t, 18>;

PlanKey plan_key(const FftGeometry& g) {
  const FftShape& s = g.shape;
  return {static_cast<std::int64_t>(s.type),
          static_cast<std::int64_t>(s.precision),
          s.rank,
          g.in_place ? 1 : 0,
          s.n[0],
          s.n[1],
          s.n[2],
          s.batch,
          s.input.embed[0],
          s.input.embed[1],
          s.input.embed[2],
          s.input.stride,
          s.input.distance,
          s.output.embed[0],
          s.output.embed[1],
          s.output.embed[2],
          s.output.stride,
          s.output.distance};
}

}  // namespace

Status cufft_status(cufftResult result, std::string_view what) {
  if (result == CUFFT_SUCCESS) return Status();
  const std::string message = fmt::format("{}: {}", what, cufft_name(result));
  switch (result) {
    case CUFFT_ALLOC_FAILED: return Status(Code::resource_exhausted, message, Source::cufft, result);
    case CUFFT_INVALID_TYPE:
    case CUFFT_INVALID_VALUE:
    case CUFFT_INVALID_SIZE:
    case CUFFT_UNALIGNED_DATA:
    case CUFFT_NO_WORKSPACE: return Status(Code::invalid_argument, message, Source::cufft, result);
    case CUFFT_NOT_IMPLEMENTED:
    case CUFFT_NOT_SUPPORTED: return Status(Code::not_supported, message, Source::cufft, result);
    case CUFFT_INVALID_DEVICE:
    case CUFFT_MISSING_DEPENDENCY: return Status(Code::unavailable, message, Source::cufft, result);
    default: return Status(Code::internal, message, Source::cufft, result);
  }
}

LibraryVersion cufft_library() {
  int version = 0;
  if (cufftGetVersion(&version) != CUFFT_SUCCESS) return {.name = "cuFFT", .version = "unknown"};
  return {.name = "cuFFT", .version = fmt::format("{}.{}.{}", version / 1000, version / 100 % 10, version % 100)};
}

Result<std::shared_ptr<const CufftPlan>> CufftPlan::make(const FftGeometry& g, cudaStream_t stream,
                                                         std::shared_ptr<CaptureCounters> counters) {
  const FftShape& s = g.shape;
  cufftHandle handle = 0;
  ACCEL_RETURN_IF_ERROR(cufft_status(cufftCreate(&handle), "cufftCreate"));
  // Owned from here on, so every error below destroys it.
  std::shared_ptr<CufftPlan> plan(new CufftPlan(handle, stream, std::move(counters)));
  ACCEL_RETURN_IF_ERROR(cufft_status(cufftSetAutoAllocation(handle, 0), "cufftSetAutoAllocation"));
  std::array<long long, 3> n{}, in_embed{}, out_embed{};
  for (int d = 0; d < s.rank; ++d) {
    n[d] = s.n[d];
    in_embed[d] = s.input.embed[d];
    out_embed[d] = s.output.embed[d];
  }
  std::size_t work = 0;
  if (g.real_type == DType::f16) {
    ACCEL_RETURN_IF_ERROR(
        cufft_status(cufftXtMakePlanMany(handle, s.rank, n.data(), in_embed.data(), s.input.stride, s.input.distance,
                                         half_type(g.input_type), out_embed.data(), s.output.stride, s.output.distance,
                                         half_type(g.output_type), s.batch, &work, CUDA_C_16F),
                     fmt::format("cufftXtMakePlanMany ({}{})", to_string(s), g.in_place ? ", in place" : "")));
  } else {
    ACCEL_RETURN_IF_ERROR(cufft_status(
        cufftMakePlanMany64(handle, s.rank, n.data(), in_embed.data(), s.input.stride, s.input.distance,
                            out_embed.data(), s.output.stride, s.output.distance, cufft_type(g), s.batch, &work),
        fmt::format("cufftMakePlanMany64 ({}{})", to_string(s), g.in_place ? ", in place" : "")));
  }
  ACCEL_RETURN_IF_ERROR(cufft_status(cufftSetStream(handle, stream), "cufftSetStream"));
  plan->work_bytes_ = work;
  return std::shared_ptr<const CufftPlan>(std::move(plan));
}

CufftPlan::~CufftPlan() {
  // Plans run on their own stream only, so once it has drained nothing uses this one. An error here (a sticky
  // fault) leaves nothing to wait for.
  (void)cudaStreamSynchronize(stream_);
  executions_.reset();
  cufftDestroy(handle_);
}

Status CufftPlan::execute(const FftGeometry& g, const FftOperands& ops, void* work) const {
  const ExecutionKey key{.input = ops.input,
                         .output = ops.output,
                         .work = work_bytes_ != 0 ? work : nullptr,
                         .direction = g.inverse() ? CUFFT_INVERSE : CUFFT_FORWARD};
  return executions_->run(key, Enqueuing([&] { return enqueue(g, ops, work); }));
}

Status CufftPlan::enqueue(const FftGeometry& g, const FftOperands& ops, void* work) const {
  if (work_bytes_ != 0) ACCEL_RETURN_IF_ERROR(cufft_status(cufftSetWorkArea(handle_, work), "cufftSetWorkArea"));
  const int direction = g.inverse() ? CUFFT_INVERSE : CUFFT_FORWARD;
  const std::string_view what = "cuFFT execution";
  // The Xt call takes the direction for every type (r2c and c2r ignore it: theirs is fixed).
  if (g.real_type == DType::f16) return cufft_status(cufftXtExec(handle_, ops.input, ops.output, direction), what);
  switch (cufft_type(g)) {
    case CUFFT_C2C:
      return cufft_status(cufftExecC2C(handle_, static_cast<cufftComplex*>(ops.input),
                                       static_cast<cufftComplex*>(ops.output), direction),
                          what);
    case CUFFT_Z2Z:
      return cufft_status(cufftExecZ2Z(handle_, static_cast<cufftDoubleComplex*>(ops.input),
                                       static_cast<cufftDoubleComplex*>(ops.output), direction),
                          what);
    case CUFFT_R2C:
      return cufft_status(
          cufftExecR2C(handle_, static_cast<cufftReal*>(ops.input), static_cast<cufftComplex*>(ops.output)), what);
    case CUFFT_D2Z:
      return cufft_status(
          cufftExecD2Z(handle_, static_cast<cufftDoubleReal*>(ops.input), static_cast<cufftDoubleComplex*>(ops.output)),
          what);
    case CUFFT_C2R:
      return cufft_status(
          cufftExecC2R(handle_, static_cast<cufftComplex*>(ops.input), static_cast<cufftReal*>(ops.output)), what);
    case CUFFT_Z2D:
      return cufft_status(
          cufftExecZ2D(handle_, static_cast<cufftDoubleComplex*>(ops.input), static_cast<cufftDoubleReal*>(ops.output)),
          what);
    default: return internal_error("cuFFT: no execution for this plan's type");
  }
}

CufftPlans::CufftPlans(cudaStream_t stream)
    : stream_(stream), plans_(cache::CacheOptions<CufftPlan>{.name = "cufft-plans", .max_entries = kPlanCapacity}) {}

Result<std::unique_ptr<CufftPlans>> CufftPlans::open(CudaTarget& target) {
  return std::unique_ptr<CufftPlans>(new CufftPlans(target.stream()));
}

Result<std::shared_ptr<const CufftPlan>> CufftPlans::plan(const FftGeometry& g) {
  const PlanKey key = plan_key(g);
  return plans_.get(std::as_bytes(std::span(key)), [&] { return CufftPlan::make(g, stream_, counters_); });
}

}  // namespace accel::fft
