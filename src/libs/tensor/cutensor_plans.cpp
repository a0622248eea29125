#include "libs/tensor/cutensor_plans.hpp"

#include <fmt/format.h>

#include <cstring>
#include <mutex>
#include <vector>

#include "cache/cache.hpp"
#include "libs/tensor/cutensor_library.hpp"

namespace accel::tensor {
namespace {

// Plans are a few kilobytes of host memory each; this bounds a context's cache against a stream of new shapes.
constexpr std::size_t kPlanCapacity = 1024;
// What every tensor's address is promised to be a multiple of: the device's buffers come from its memory pool,
// whose allocations are aligned at least this much; run_cutensor checks it.
constexpr std::uint32_t kAlignment = 128;

cudaDataType_t data_type(DType dtype) noexcept {
  switch (dtype) {
    case DType::f64: return CUDA_R_64F;
    case DType::f16: return CUDA_R_16F;
    case DType::bf16: return CUDA_R_16BF;
    default: return CUDA_R_32F;
  }
}

cutensorComputeDescriptor_t compute_of(const CutensorApi& api, Compute compute) noexcept {
  switch (compute) {
    case Compute::f64: return api.compute_64f;
    case Compute::f16: return api.compute_16f;
    case Compute::bf16: return api.compute_16bf;
    case Compute::tf32: return api.compute_tf32;
    case Compute::tf32x3: return api.compute_3xtf32;
    default: return api.compute_32f;
  }
}

cutensorOperator_t operator_of(Unary op) noexcept {
  switch (op) {
    case Unary::identity: return CUTENSOR_OP_IDENTITY;
    case Unary::sqrt: return CUTENSOR_OP_SQRT;
    case Unary::relu: return CUTENSOR_OP_RELU;
    case Unary::rcp: return CUTENSOR_OP_RCP;
    case Unary::sigmoid: return CUTENSOR_OP_SIGMOID;
    case Unary::tanh: return CUTENSOR_OP_TANH;
    case Unary::exp: return CUTENSOR_OP_EXP;
    case Unary::log: return CUTENSOR_OP_LOG;
    case Unary::abs: return CUTENSOR_OP_ABS;
    case Unary::neg: return CUTENSOR_OP_NEG;
  }
  return CUTENSOR_OP_UNKNOWN;
}

cutensorOperator_t operator_of(Binary op) noexcept {
  switch (op) {
    case Binary::add: return CUTENSOR_OP_ADD;
    case Binary::mul: return CUTENSOR_OP_MUL;
    case Binary::max: return CUTENSOR_OP_MAX;
    case Binary::min: return CUTENSOR_OP_MIN;
  }
  return CUTENSOR_OP_UNKNOWN;
}

bool has_b(Kind kind) noexcept { return kind == Kind::contract || kind == Kind::trinary; }

// The bytes of everything a plan depends on, compared in full by the cache.
std::vector<std::int64_t> key_of(const PlanSpec& spec) {
  std::vector<std::int64_t> key{static_cast<std::int64_t>(spec.kind), static_cast<std::int64_t>(spec.dtype),
                                static_cast<std::int64_t>(spec.compute)};
  for (Unary op : spec.unary) key.push_back(static_cast<std::int64_t>(op));
  for (Binary op : spec.binary) key.push_back(static_cast<std::int64_t>(op));
  for (const Tensor& tensor : spec.tensors) {
    key.push_back(tensor.rank);
    for (std::size_t i = 0; i < tensor.rank; ++i) key.push_back(tensor.modes[i]);
    for (std::size_t i = 0; i < tensor.rank; ++i) key.push_back(tensor.extents[i]);
  }
  return key;
}

// A scalar in the type cuTENSOR reads it as (the operation's scalar type).
struct Scalar {
  alignas(8) std::byte bytes[8]{};
};

Scalar scalar(double value, cudaDataType_t type) {
  Scalar out;
  switch (type) {
    case CUDA_R_64F: std::memcpy(out.bytes, &value, sizeof value); break;
    case CUDA_R_16F: {
      const Half half = to_half(static_cast<float>(value));
      std::memcpy(out.bytes, &half, sizeof half);
      break;
    }
    case CUDA_R_16BF: {
      const BFloat16 bf = to_bfloat16(static_cast<float>(value));
      std::memcpy(out.bytes, &bf, sizeof bf);
      break;
    }
    default: {
      const auto single = static_cast<float>(value);
      std::memcpy(out.bytes, &single, sizeof single);
    }
  }
  return out;
}

}  // namespace

// cuTENSOR's plan with the descriptors it was made of, destroyed together.
class CutensorPlan {
 public:
  explicit CutensorPlan(const CutensorApi& api) : api(&api) {}
  ~CutensorPlan() {
    if (plan != nullptr) api->cutensorDestroyPlan(plan);
    if (preference != nullptr) api->cutensorDestroyPlanPreference(preference);
    if (operation != nullptr) api->cutensorDestroyOperationDescriptor(operation);
    for (cutensorTensorDescriptor_t descriptor : descriptors)
      if (descriptor != nullptr) api->cutensorDestroyTensorDescriptor(descriptor);
  }
  CutensorPlan(const CutensorPlan&) = delete;
  CutensorPlan& operator=(const CutensorPlan&) = delete;

  const CutensorApi* api;
  cutensorHandle_t handle = nullptr;
  Kind kind = Kind::contract;
  std::array<cutensorTensorDescriptor_t, 3> descriptors{};  // A, B (or none), D
  cutensorOperationDescriptor_t operation = nullptr;
  cutensorPlanPreference_t preference = nullptr;
  cutensorPlan_t plan = nullptr;
  cudaDataType_t scalar_type = CUDA_R_32F;
  std::uint64_t workspace_bytes = 0;
};

namespace {

Result<std::shared_ptr<const CutensorPlan>> build(const CutensorApi& api, cutensorHandle_t handle,
                                                  const PlanSpec& spec) {
  auto made = std::make_shared<CutensorPlan>(api);
  made->handle = handle;
  made->kind = spec.kind;
  std::array<std::array<std::int32_t, kMaxModes>, 3> modes{};
  for (std::size_t t = 0; t < spec.tensors.size(); ++t) {
    if (t == 1 && !has_b(spec.kind)) continue;
    const Tensor& tensor = spec.tensors[t];
    std::array<std::int64_t, kMaxModes> extents{}, strides{};
    std::int64_t stride = 1;
    for (std::size_t i = tensor.rank; i-- > 0;) {  // row-major: the last mode is contiguous
      extents[i] = tensor.extents[i];
      strides[i] = stride;
      stride *= tensor.extents[i];
      modes[t][i] = tensor.modes[i];
    }
    ACCEL_RETURN_IF_ERROR(
        cutensor_status(api,
                        api.cutensorCreateTensorDescriptor(handle, &made->descriptors[t], tensor.rank, extents.data(),
                                                           strides.data(), data_type(spec.dtype), kAlignment),
                        "cutensorCreateTensorDescriptor"));
  }
  const auto [da, db, dd] = made->descriptors;
  const auto& [ma, mb, md] = modes;
  const cutensorComputeDescriptor_t compute = compute_of(api, spec.compute);
  const cutensorOperator_t op_a = operator_of(spec.unary[0]), op_b = operator_of(spec.unary[1]),
                           op_c = operator_of(spec.unary[2]), op_1 = operator_of(spec.binary[0]),
                           op_2 = operator_of(spec.binary[1]);
  cutensorOperationDescriptor_t* op = &made->operation;
  cutensorStatus_t created = CUTENSOR_STATUS_SUCCESS;
  switch (spec.kind) {
    case Kind::contract:
      created = api.cutensorCreateContraction(handle, op, da, ma.data(), CUTENSOR_OP_IDENTITY, db, mb.data(),
                                              CUTENSOR_OP_IDENTITY, dd, md.data(), CUTENSOR_OP_IDENTITY, dd, md.data(),
                                              compute);
      break;
    case Kind::binary:
      created = api.cutensorCreateElementwiseBinary(handle, op, da, ma.data(), op_a, dd, md.data(), op_c, dd, md.data(),
                                                    op_1, compute);
      break;
    case Kind::trinary:
      created = api.cutensorCreateElementwiseTrinary(handle, op, da, ma.data(), op_a, db, mb.data(), op_b, dd,
                                                     md.data(), op_c, dd, md.data(), op_1, op_2, compute);
      break;
    case Kind::reduce:
      created = api.cutensorCreateReduction(handle, op, da, ma.data(), op_a, dd, md.data(), CUTENSOR_OP_IDENTITY, dd,
                                            md.data(), op_1, compute);
      break;
    case Kind::permute:
      created = api.cutensorCreatePermutation(handle, op, da, ma.data(), op_a, dd, md.data(), compute);
      break;
  }
  ACCEL_RETURN_IF_ERROR(cutensor_status(api, created, "creating cuTENSOR's operation descriptor"));
  ACCEL_RETURN_IF_ERROR(cutensor_status(
      api,
      api.cutensorOperationDescriptorGetAttribute(handle, made->operation, CUTENSOR_OPERATION_DESCRIPTOR_SCALAR_TYPE,
                                                  &made->scalar_type, sizeof made->scalar_type),
      "cutensorOperationDescriptorGetAttribute(SCALAR_TYPE)"));
  ACCEL_RETURN_IF_ERROR(cutensor_status(
      api, api.cutensorCreatePlanPreference(handle, &made->preference, CUTENSOR_ALGO_DEFAULT, CUTENSOR_JIT_MODE_NONE),
      "cutensorCreatePlanPreference"));
  const cutensorCacheMode_t no_cache = CUTENSOR_CACHE_MODE_NONE;  // see cutensor_plans.hpp
  ACCEL_RETURN_IF_ERROR(
      cutensor_status(api,
                      api.cutensorPlanPreferenceSetAttribute(
                          handle, made->preference, CUTENSOR_PLAN_PREFERENCE_CACHE_MODE, &no_cache, sizeof no_cache),
                      "cutensorPlanPreferenceSetAttribute(CACHE_MODE)"));
  std::uint64_t estimate = 0;
  ACCEL_RETURN_IF_ERROR(cutensor_status(api,
                                        api.cutensorEstimateWorkspaceSize(handle, made->operation, made->preference,
                                                                          CUTENSOR_WORKSPACE_DEFAULT, &estimate),
                                        "cutensorEstimateWorkspaceSize"));
  ACCEL_RETURN_IF_ERROR(
      cutensor_status(api, api.cutensorCreatePlan(handle, &made->plan, made->operation, made->preference, estimate),
                      "cutensorCreatePlan"));
  ACCEL_RETURN_IF_ERROR(
      cutensor_status(api,
                      api.cutensorPlanGetAttribute(handle, made->plan, CUTENSOR_PLAN_REQUIRED_WORKSPACE,
                                                   &made->workspace_bytes, sizeof made->workspace_bytes),
                      "cutensorPlanGetAttribute(REQUIRED_WORKSPACE)"));
  return std::shared_ptr<const CutensorPlan>(std::move(made));
}

// What the family keeps per CUDA context: cuTENSOR's handle (made on the first plan, so that a device query loads
// the library but makes no handle) and the plans.
class CutensorState final : public TargetState {
 public:
  static Result<std::unique_ptr<CutensorState>> open(CudaTarget&) {
    ACCEL_ASSIGN_OR_RETURN(const CutensorApi* api, cutensor_api());
    return std::unique_ptr<CutensorState>(new CutensorState(*api));
  }
  ~CutensorState() override {
    plans_.reset();  // the plans go before the handle they were made on
    if (handle_ != nullptr) api_.cutensorDestroy(handle_);
  }
  CutensorState(const CutensorState&) = delete;
  CutensorState& operator=(const CutensorState&) = delete;

  Result<std::shared_ptr<const CutensorPlan>> plan(const PlanSpec& spec) {
    ACCEL_ASSIGN_OR_RETURN(cutensorHandle_t handle, this->handle());
    const std::vector<std::int64_t> key = key_of(spec);
    const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(key.data()),
                                           key.size() * sizeof(std::int64_t));
    return plans_->get(bytes, [&] { return build(api_, handle, spec); });
  }
  [[nodiscard]] CacheStats stats() const { return plans_->stats(); }
  [[nodiscard]] const CutensorApi& api() const noexcept { return api_; }

 private:
  explicit CutensorState(const CutensorApi& api)
      : api_(api),
        plans_(std::make_unique<cache::Cache<CutensorPlan>>(
            cache::CacheOptions<CutensorPlan>{.name = "cutensor-plans", .max_entries = kPlanCapacity})) {}

  Result<cutensorHandle_t> handle() {
    std::lock_guard lock(mutex_);
    if (handle_ == nullptr)
      ACCEL_RETURN_IF_ERROR(cutensor_status(api_, api_.cutensorCreate(&handle_), "cutensorCreate"));
    return handle_;
  }

  const CutensorApi& api_;
  std::mutex mutex_;
  cutensorHandle_t handle_ = nullptr;
  std::unique_ptr<cache::Cache<CutensorPlan>> plans_;
};

Status check_aligned(const void* address, std::string_view name) {
  if (reinterpret_cast<std::uintptr_t>(address) % kAlignment == 0) return Status();
  return internal_error(fmt::format("cuTENSOR: {}'s address {} is not a multiple of the {} bytes its plan assumes",
                                    name, address, kAlignment));
}

}  // namespace

Result<TensorPlan> plan_cutensor(CudaTarget& target, const PlanSpec& spec) {
  ACCEL_ASSIGN_OR_RETURN(CutensorState * state, target.context_state<CutensorState>());
  ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<const CutensorPlan> plan, state->plan(spec));
  const std::uint64_t workspace = plan->workspace_bytes;
  return TensorPlan{.plan = std::move(plan), .workspace_bytes = workspace};
}

Status run_cutensor(const TensorPlan& planned, const RunArgs& args, CudaRun& run) {
  const CutensorPlan& p = *planned.plan;
  const CutensorApi& api = *p.api;
  ACCEL_RETURN_IF_ERROR(check_aligned(args.a, "a"));
  if (args.b != nullptr) ACCEL_RETURN_IF_ERROR(check_aligned(args.b, "b"));
  if (args.c != nullptr) ACCEL_RETURN_IF_ERROR(check_aligned(args.c, "c"));
  ACCEL_RETURN_IF_ERROR(check_aligned(args.d, "d"));
  const Scalar alpha = scalar(args.alpha, p.scalar_type), beta = scalar(args.beta, p.scalar_type),
               gamma = scalar(args.gamma, p.scalar_type);
  cudaStream_t stream = run.target.stream();
  cutensorStatus_t status = CUTENSOR_STATUS_SUCCESS;
  std::string_view what;
  switch (p.kind) {
    case Kind::contract:
      what = "cutensorContract";
      status = api.cutensorContract(p.handle, p.plan, alpha.bytes, args.a, args.b, beta.bytes, args.c, args.d,
                                    run.workspace, run.workspace_bytes, stream);
      break;
    case Kind::binary:
      what = "cutensorElementwiseBinaryExecute";
      status = api.cutensorElementwiseBinaryExecute(p.handle, p.plan, alpha.bytes, args.a, gamma.bytes, args.c, args.d,
                                                    stream);
      break;
    case Kind::trinary:
      what = "cutensorElementwiseTrinaryExecute";
      status = api.cutensorElementwiseTrinaryExecute(p.handle, p.plan, alpha.bytes, args.a, beta.bytes, args.b,
                                                     gamma.bytes, args.c, args.d, stream);
      break;
    case Kind::reduce:
      what = "cutensorReduce";
      status = api.cutensorReduce(p.handle, p.plan, alpha.bytes, args.a, beta.bytes, args.c, args.d, run.workspace,
                                  run.workspace_bytes, stream);
      break;
    case Kind::permute:
      what = "cutensorPermute";
      status = api.cutensorPermute(p.handle, p.plan, alpha.bytes, args.a, args.d, stream);
      break;
  }
  return launch_status(run.target, cutensor_status(api, status, what), "cuTENSOR");
}

void describe_cutensor(CudaTarget& target, LibraryReport& report) {
  // cuTENSOR is loaded by its first request; a device that made none has none to report.
  CutensorState* state = target.existing_context_state<CutensorState>();
  if (state == nullptr) return;
  report.report(cutensor_library(state->api()));
  report.report(state->stats());
}

}  // namespace accel::tensor
