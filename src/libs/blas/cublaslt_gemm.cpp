#include "libs/blas/cublaslt_gemm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "libs/blas/cublaslt_library.hpp"
#include "libs/blas/cublaslt_plan.hpp"

namespace accel::blas {
namespace {

cudaDataType to_cuda(DType dtype) {
  switch (dtype) {
    case DType::f32: return CUDA_R_32F;
    case DType::f64: return CUDA_R_64F;
    case DType::f16: return CUDA_R_16F;
    case DType::bf16: return CUDA_R_16BF;
    case DType::fp8_e4m3: return CUDA_R_8F_E4M3;
    case DType::i8: return CUDA_R_8I;
    case DType::i32: return CUDA_R_32I;
    case DType::u8: return CUDA_R_8U;
    case DType::u32: return CUDA_R_32U;
    case DType::i64: return CUDA_R_64I;
    case DType::u64: return CUDA_R_64U;
    case DType::c64: return CUDA_C_32F;
    case DType::c128: return CUDA_C_64F;
    case DType::c32: return CUDA_C_16F;
    case DType::fp8_e5m2: return CUDA_R_8F_E5M2;
  }
  return CUDA_R_32F;
}

// The bias's orientation was checked with the shape (plan_gemm_geometry): cuBLASLt's is the only one admitted.
// cuBLASLt's GELU is the tanh approximation; plan_gemm_geometry admits no other activation.
cublasLtEpilogue_t to_cublaslt(const Epilogue& epilogue) {
  const bool bias = epilogue.has_bias();
  switch (epilogue.activation) {
    case Activation::relu: return bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    case Activation::gelu_tanh: return bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
    case Activation::identity:
    case Activation::silu:
    case Activation::gelu_erf:
    case Activation::sigmoid:
    case Activation::tanh:
    case Activation::log1p_relu: break;
  }
  return bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
}

// One stored operand as cuBLASLt sees it (column-major).
struct LtOperand {
  std::int64_t rows;
  std::int64_t cols;
  std::int64_t ld;
  std::int64_t stride;
  cublasOperation_t op;
};

struct LtProblem {
  LtOperand a;
  LtOperand b;
  LtOperand c;
  bool swapped;  // cuBLASLt's A is the request's B
};

cublasOperation_t op_of(Transpose t) { return t == Transpose::transpose ? CUBLAS_OP_T : CUBLAS_OP_N; }

LtProblem lt_problem(const GemmGeometry& g) {
  const GemmShape& s = g.shape;
  if (s.order == MatrixOrder::column_major) {
    return {{g.a_rows, g.a_cols, s.lda, s.stride_a, op_of(s.transpose_a)},
            {g.b_rows, g.b_cols, s.ldb, s.stride_b, op_of(s.transpose_b)},
            {s.m, s.n, s.ldc, s.stride_c, CUBLAS_OP_N},
            false};
  }
  return {{g.b_cols, g.b_rows, s.ldb, s.stride_b, op_of(s.transpose_b)},
          {g.a_cols, g.a_rows, s.lda, s.stride_a, op_of(s.transpose_a)},
          {s.n, s.m, s.ldc, s.stride_c, CUBLAS_OP_N},
          true};
}

bool output_allowed(DType input, DType output) {
  switch (input) {
    case DType::f32: return output == DType::f32;
    case DType::f64: return output == DType::f64;
    case DType::f16: return output == DType::f16 || output == DType::f32;
    case DType::bf16: return output == DType::bf16 || output == DType::f32;
    case DType::fp8_e4m3: return output == DType::bf16 || output == DType::f16 || output == DType::f32;
    default: return false;
  }
}

// A plan's key: every field of the resolved shape, written one after the other (no padding), so that equal
// bytes are equal shapes. Fixed size, so a lookup allocates nothing.
constexpr std::size_t kShapeInts = 10;
constexpr std::size_t kShapeEnums = 8;
using PlanKey = std::array<std::byte, kShapeInts * sizeof(std::int64_t) + kShapeEnums>;
static_assert(sizeof(GemmShape) == 96, "GemmShape changed: update plan_key");

PlanKey plan_key(const GemmShape& s) {
  PlanKey key{};
  std::size_t at = 0;
  for (std::int64_t v : {s.m, s.n, s.k, s.lda, s.ldb, s.ldc, s.batch, s.stride_a, s.stride_b, s.stride_c}) {
    std::memcpy(key.data() + at, &v, sizeof v);
    at += sizeof v;
  }
  for (auto v : {static_cast<std::uint8_t>(s.order), static_cast<std::uint8_t>(s.transpose_a),
                 static_cast<std::uint8_t>(s.transpose_b), static_cast<std::uint8_t>(s.input_type),
                 static_cast<std::uint8_t>(s.output_type), static_cast<std::uint8_t>(s.compute),
                 static_cast<std::uint8_t>(s.epilogue.activation), static_cast<std::uint8_t>(s.epilogue.bias)}) {
    key[at++] = static_cast<std::byte>(v);
  }
  return key;
}

}  // namespace

Status check_cublaslt_support(const GemmGeometry& g, int compute_capability) {
  const GemmShape& s = g.shape;
  if (!output_allowed(s.input_type, s.output_type)) {
    return not_supported(
        fmt::format("cuBLASLt GEMM: inputs of {} with output {} are not supported (f32->f32, "
                    "f64->f64, f16/bf16->same or f32, fp8_e4m3->bf16/f16/f32)",
                    to_string(s.input_type), to_string(s.output_type)));
  }
  if (s.compute == GemmCompute::tf32 && s.input_type != DType::f32) {
    return invalid_argument(fmt::format("GemmCompute::tf32 applies to f32 inputs, not {}", to_string(s.input_type)));
  }
  if (s.input_type == DType::fp8_e4m3) {
    if (compute_capability < 89) {
      return not_supported(fmt::format("fp8 GEMM needs compute capability 8.9 or newer; this GPU is {}.{}",
                                       compute_capability / 10, compute_capability % 10));
    }
    const LtProblem p = lt_problem(g);
    if (p.a.op != CUBLAS_OP_T || p.b.op != CUBLAS_OP_N) {
      return not_supported(
          "fp8 GEMM on cuBLASLt needs the 'TN' layout: for row-major requests transpose_a = none and "
          "transpose_b = transpose (C = A Bᵀ), for column-major requests transpose_a = transpose and "
          "transpose_b = none");
    }
    if (s.m % 16 != 0 || s.n % 16 != 0 || s.k % 16 != 0) {
      return not_supported(
          fmt::format("fp8 GEMM on cuBLASLt needs m, n and k to be multiples of 16 (m={} n={} k={})", s.m, s.n, s.k));
    }
  }
  return Status();
}

CublasLtGemm::CublasLtGemm(const CublasLtApi& api, cublasLtHandle_t handle, std::size_t capacity, void* workspace,
                           std::size_t workspace_bytes)
    : api_(api),
      handle_(handle),
      workspace_(workspace),
      workspace_bytes_(workspace_bytes),
      plans_(std::make_unique<cache::Cache<Plan>>(
          cache::CacheOptions<Plan>{.name = "cublaslt-plans", .max_entries = std::max<std::size_t>(capacity, 1)})) {}

CublasLtGemm::~CublasLtGemm() {
  plans_.reset();
  api_.cublasLtDestroy(handle_);
}

Result<std::unique_ptr<CublasLtGemm>> CublasLtGemm::create(std::size_t plan_capacity, void* workspace,
                                                           std::size_t workspace_bytes) {
  ACCEL_ASSIGN_OR_RETURN(const CublasLtApi* api, cublaslt_api());
  cublasLtHandle_t handle = nullptr;
  ACCEL_RETURN_IF_ERROR(cublas_status(api->cublasLtCreate(&handle), "cublasLtCreate"));
  return std::unique_ptr<CublasLtGemm>(new CublasLtGemm(*api, handle, plan_capacity, workspace, workspace_bytes));
}

Result<std::shared_ptr<const CublasLtGemm::Plan>> CublasLtGemm::build_plan(const GemmGeometry& g) const {
  const GemmShape& s = g.shape;
  auto plan = std::make_shared<Plan>(api_);
  const LtProblem p = lt_problem(g);
  plan->swapped = p.swapped;

  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  if (s.input_type == DType::f64) {
    compute = CUBLAS_COMPUTE_64F;
    plan->scale_type = CUDA_R_64F;
  } else if (s.compute == GemmCompute::tf32) {
    compute = CUBLAS_COMPUTE_32F_FAST_TF32;
  }
  ACCEL_RETURN_IF_ERROR(
      cublas_status(api_.cublasLtMatmulDescCreate(&plan->desc, compute, plan->scale_type), "cublasLtMatmulDescCreate"));
  auto set_desc = [&](cublasLtMatmulDescAttributes_t attribute, const auto& value) {
    return cublas_status(api_.cublasLtMatmulDescSetAttribute(plan->desc, attribute, &value, sizeof(value)),
                         "cublasLtMatmulDescSetAttribute");
  };
  ACCEL_RETURN_IF_ERROR(set_desc(CUBLASLT_MATMUL_DESC_TRANSA, p.a.op));
  ACCEL_RETURN_IF_ERROR(set_desc(CUBLASLT_MATMUL_DESC_TRANSB, p.b.op));
  ACCEL_RETURN_IF_ERROR(set_desc(CUBLASLT_MATMUL_DESC_EPILOGUE, to_cublaslt(s.epilogue)));
  if (s.epilogue.has_bias()) {
    ACCEL_RETURN_IF_ERROR(set_desc(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, to_cuda(s.output_type)));
  }

  auto make_layout = [&](cublasLtMatrixLayout_t* layout, const LtOperand& operand, DType dtype) -> Status {
    ACCEL_RETURN_IF_ERROR(
        cublas_status(api_.cublasLtMatrixLayoutCreate(layout, to_cuda(dtype), static_cast<std::uint64_t>(operand.rows),
                                                      static_cast<std::uint64_t>(operand.cols), operand.ld),
                      "cublasLtMatrixLayoutCreate"));
    if (s.batch > 1) {
      const std::int32_t batch = static_cast<std::int32_t>(s.batch);
      ACCEL_RETURN_IF_ERROR(cublas_status(
          api_.cublasLtMatrixLayoutSetAttribute(*layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof(batch)),
          "cublasLtMatrixLayoutSetAttribute(batch count)"));
      ACCEL_RETURN_IF_ERROR(
          cublas_status(api_.cublasLtMatrixLayoutSetAttribute(*layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                              &operand.stride, sizeof(operand.stride)),
                        "cublasLtMatrixLayoutSetAttribute(batch stride)"));
    }
    return Status();
  };
  if (s.batch > std::numeric_limits<std::int32_t>::max()) {
    return not_supported(fmt::format("cuBLASLt takes at most 2^31-1 batches, not {}", s.batch));
  }
  ACCEL_RETURN_IF_ERROR(make_layout(&plan->a, p.a, s.input_type));
  ACCEL_RETURN_IF_ERROR(make_layout(&plan->b, p.b, s.input_type));
  ACCEL_RETURN_IF_ERROR(make_layout(&plan->c, p.c, s.output_type));

  cublasLtMatmulPreference_t preference = nullptr;
  ACCEL_RETURN_IF_ERROR(
      cublas_status(api_.cublasLtMatmulPreferenceCreate(&preference), "cublasLtMatmulPreferenceCreate"));
  const std::uint64_t workspace_limit = workspace_bytes_;
  cublasStatus_t set = api_.cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                                 &workspace_limit, sizeof(workspace_limit));
  std::array<cublasLtMatmulHeuristicResult_t, kPlanCandidates> heuristics{};
  int found = 0;
  if (set == CUBLAS_STATUS_SUCCESS) {
    set = api_.cublasLtMatmulAlgoGetHeuristic(handle_, plan->desc, plan->a, plan->b, plan->c, plan->c, preference,
                                              static_cast<int>(heuristics.size()), heuristics.data(), &found);
  }
  api_.cublasLtMatmulPreferenceDestroy(preference);
  if (set == CUBLAS_STATUS_NOT_SUPPORTED || (set == CUBLAS_STATUS_SUCCESS && found == 0)) {
    return not_supported(fmt::format("cuBLASLt has no algorithm for {}", to_string(s)));
  }
  ACCEL_RETURN_IF_ERROR(cublas_status(set, "cublasLtMatmulAlgoGetHeuristic"));
  for (int i = 0; i < found; ++i) plan->candidates.push_back(heuristics[static_cast<std::size_t>(i)].algo);
  plan->algo = plan->candidates.front();
  plan->timed = plan->candidates.size() == 1;
  return std::shared_ptr<const Plan>(std::move(plan));
}

Result<std::shared_ptr<const CublasLtGemm::Plan>> CublasLtGemm::plan(const GemmGeometry& g) {
  const PlanKey key = plan_key(g.shape);
  return plans_->get(key, [&] { return build_plan(g); });
}

Status CublasLtGemm::enqueue(const GemmGeometry& g, const GemmOperands& ops, double alpha, double beta,
                             cudaStream_t stream) {
  ACCEL_ASSIGN_OR_RETURN(const std::shared_ptr<const Plan> found, plan(g));
  return run(*found, g, ops, alpha, beta, stream);
}

Status CublasLtGemm::run(const Plan& planned, const GemmGeometry& g, const GemmOperands& ops, double alpha, double beta,
                         cudaStream_t stream, Timing timing) {
  const Plan* plan = &planned;
  if (g.shape.epilogue.has_bias()) {
    ACCEL_RETURN_IF_ERROR(cublas_status(
        api_.cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &ops.bias, sizeof(ops.bias)),
        "cublasLtMatmulDescSetAttribute(bias)"));
  }
  const float alpha32 = static_cast<float>(alpha);
  const float beta32 = static_cast<float>(beta);
  const bool wide = plan->scale_type == CUDA_R_64F;
  const void* alpha_ptr = wide ? static_cast<const void*>(&alpha) : &alpha32;
  const void* beta_ptr = wide ? static_cast<const void*>(&beta) : &beta32;
  const LtOperands operands{.a = plan->swapped ? ops.b : ops.a,
                            .b = plan->swapped ? ops.a : ops.b,
                            .c = ops.addend != nullptr ? ops.addend : ops.c,
                            .d = ops.c,
                            .alpha = alpha_ptr,
                            .beta = beta_ptr};
  const bool repeatable = beta == 0.0 || operands.c != operands.d;
  if (!plan->timed && repeatable && (timing == Timing::first_run || ++plan->runs >= kRunsBeforeTiming)) {
    ACCEL_RETURN_IF_ERROR(time_candidates(*plan, operands, stream));
  }
  const cublasStatus_t status = matmul(*plan, operands, plan->algo, stream);
  if (status == CUBLAS_STATUS_SUCCESS) return Status();  // the name below is put together only for an error
  return cublas_status(status, fmt::format("cublasLtMatmul ({})", to_string(g.shape)));
}

cublasStatus_t CublasLtGemm::matmul(const Plan& plan, const LtOperands& ops, const cublasLtMatmulAlgo_t& algo,
                                    cudaStream_t stream) const {
  return api_.cublasLtMatmul(handle_, plan.desc, ops.alpha, ops.a, plan.a, ops.b, plan.b, ops.beta, ops.c, plan.c,
                             ops.d, plan.c, &algo, workspace_, workspace_bytes_, stream);
}

}  // namespace accel::blas
