#include "libs/blas/gemm_operation_cuda.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace accel {
namespace blas {

Result<std::unique_ptr<CublasLtState>> CublasLtState::open(CudaTarget& target) {
  const blas::Options& options = target.blas_options();
  int device = 0;
  ACCEL_RETURN_IF_ERROR(target.check(cudaGetDevice(&device), "asking for the current device"));
  void* workspace = nullptr;
  if (options.workspace_bytes != 0) {
    ACCEL_RETURN_IF_ERROR(
        target.check(cudaMallocFromPoolAsync(&workspace, options.workspace_bytes, target.pool(), target.stream()),
                     fmt::format("allocating the {}-byte GEMM workspace", options.workspace_bytes)));
  }
  return std::unique_ptr<CublasLtState>(
      new CublasLtState(device, target.stream(), workspace, options.workspace_bytes, options.plan_cache_capacity));
}

Result<CublasLtGemm*> CublasLtState::gemm() {
  if (gemm_ == nullptr) {
    // cuBLASLt's first call is made once per process: not a second time at once while the start-up makes it. Its
    // status is not this GEMM's to answer: a library that failed to load fails create() below, saying why.
    static_cast<void>(CublasLtStartup::run_or_wait(device_));
    ACCEL_ASSIGN_OR_RETURN(gemm_, CublasLtGemm::create(plan_capacity_, workspace_, workspace_bytes_));
  }
  return gemm_.get();
}

CublasLtGemm* CublasLtState::gemm_if_ready() {
  if (!ready()) {
    if (++graph_asks_ == kAsksBeforeStartup) startup_ = CublasLtStartup::begin(device_);
    return nullptr;
  }
  Result<CublasLtGemm*> made = gemm();
  return made.ok() ? *made : nullptr;
}

CublasLtState::~CublasLtState() {
  gemm_.reset();
  if (workspace_ != nullptr) cudaFreeAsync(workspace_, stream_);
}

namespace {

// The small kernel's launch for a shape it takes (f32, small_gemm's extents), its operands' addresses still null.
// f64, f16 and bf16 stay cuBLASLt's: its tensor-core kernels ran small products faster in a graph (§87).
std::optional<SmallGemmLaunch> small_gemm_launch(const GemmGeometry& g) {
  const GemmShape& s = g.shape;
  const bool typed = s.input_type == DType::f32 && s.output_type == DType::f32;
  if (!typed || s.compute != GemmCompute::standard || !small_gemm(s.m, s.n, s.k, s.batch)) return std::nullopt;
  const bool row_major = s.order == MatrixOrder::row_major;
  // (row, column) of a stored matrix of leading dimension ld as strides, swapped for its transpose.
  auto strides = [row_major](std::int64_t ld, Transpose transpose) -> std::pair<std::int64_t, std::int64_t> {
    const std::pair<std::int64_t, std::int64_t> stored =
        row_major ? std::pair{ld, std::int64_t{1}} : std::pair{std::int64_t{1}, ld};
    return transpose == Transpose::none ? stored : std::pair{stored.second, stored.first};
  };
  SmallGemmLaunch launch{.m = s.m,
                         .n = s.n,
                         .k = s.k,
                         .batch = s.batch,
                         .stride_a = s.stride_a,
                         .stride_b = s.stride_b,
                         .stride_c = s.stride_c};
  std::tie(launch.a_row, launch.a_col) = strides(s.lda, s.transpose_a);
  std::tie(launch.b_row, launch.b_col) = strides(s.ldb, s.transpose_b);
  std::tie(launch.c_row, launch.c_col) = strides(s.ldc, Transpose::none);
  if (s.epilogue.bias == BiasVector::per_column) launch.bias_col = 1;
  if (s.epilogue.bias == BiasVector::per_row) launch.bias_row = 1;
  launch.activation = s.epilogue.activation == Activation::relu        ? GemmActivation::relu
                      : s.epilogue.activation == Activation::gelu_tanh ? GemmActivation::gelu_tanh
                                                                       : GemmActivation::identity;
  return launch;
}

}  // namespace
}  // namespace blas

Result<CudaOperation<Gemm>::Plan> CudaOperation<Gemm>::plan(const Gemm&, const GemmGeometry& geometry,
                                                            CudaTarget& target) {
  // An empty C is a defined no-op on every device; cuBLASLt itself refuses m = 0 or n = 0.
  if (Operation<Gemm>::is_empty(geometry)) return Plan{};
  ACCEL_RETURN_IF_ERROR(blas::check_cublaslt_support(geometry, target.compute_capability()));
  if (std::optional<blas::SmallGemmLaunch> small = blas::small_gemm_launch(geometry)) {
    // A recording may capture it in a chain (run_linked), whose kernel's shared memory is allowed outside captures.
    ACCEL_RETURN_IF_ERROR(target.check(blas::allow_small_gemm_chains(), "allowing the GEMM chain its shared memory"));
    return Plan{.small = small};
  }
  ACCEL_ASSIGN_OR_RETURN(blas::CublasLtState * state, target.stream_state<blas::CublasLtState>());
  ACCEL_ASSIGN_OR_RETURN(blas::CublasLtGemm * gemm, state->gemm());
  ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<const blas::CublasLtGemm::Plan> plan, gemm->plan(geometry));
  return Plan{.gemm = gemm, .plan = std::move(plan)};
}

namespace {

// The small kernel's launch of `plan` over the request's operands and scalars.
blas::SmallGemmLaunch small_launch(const Gemm& request, const blas::SmallGemmLaunch& planned,
                                   const blas::GemmOperands& operands) {
  blas::SmallGemmLaunch launch = planned;
  launch.a = operands.a;
  launch.b = operands.b;
  launch.c = operands.c;
  launch.bias = operands.bias;
  launch.alpha = request.alpha;
  launch.beta = request.beta;
  return launch;
}

}  // namespace

Status CudaOperation<Gemm>::run(const Gemm& request, const GemmGeometry& geometry, const Plan& plan,
                                std::span<const BufferView> views, CudaRun& run) {
  const blas::GemmOperands operands = Operation<Gemm>::addresses(views);
  if (plan.small) {
    return run.target.check(blas::launch_small_gemm(small_launch(request, *plan.small, operands), run.target.stream()),
                            "launching a small GEMM");
  }
  if (plan.plan == nullptr) return Status();
  return launch_status(run.target,
                       plan.gemm->run(*plan.plan, geometry, operands, request.alpha, request.beta, run.target.stream()),
                       "cuBLASLt");
}

std::optional<CudaOperation<Gemm>::Link> CudaOperation<Gemm>::link(const Gemm& request, const GemmGeometry&,
                                                                   const Plan& plan,
                                                                   std::span<const BufferView> views) {
  if (!plan.small) return std::nullopt;
  return small_launch(request, *plan.small, Operation<Gemm>::addresses(views));
}

// Each longest chain from the first product on is one launch, of the products as they are (each reading the one
// before's C as op(B)) or of their transposes (each reading it as op(A)); a product that begins none is launched alone.
Status CudaOperation<Gemm>::run_linked(std::span<const Link> links, CudaRun& run) {
  std::vector<Link> transposed(links.size());
  std::transform(links.begin(), links.end(), transposed.begin(), blas::transposed_small_gemm);
  for (std::size_t first = 0; first < links.size();) {
    const std::size_t left = links.size() - first;
    const int as_they_are = blas::small_gemm_chain_length(&links[first], left),
              as_transposes = blas::small_gemm_chain_length(&transposed[first], left);
    const int count = std::max({as_they_are, as_transposes, 1});
    const Link* chain = as_transposes > as_they_are ? &transposed[first] : &links[first];
    const cudaError_t launched = count == 1 ? blas::launch_small_gemm(links[first], run.target.stream())
                                            : blas::launch_small_gemm_chain(chain, count, run.target.stream());
    ACCEL_RETURN_IF_ERROR(run.target.check(launched, count == 1
                                                         ? std::string("launching a small GEMM")
                                                         : fmt::format("launching a chain of {} small GEMMs", count)));
    first += static_cast<std::size_t>(count);
  }
  return Status();
}

void CudaOperation<Gemm>::describe(CudaTarget& target, LibraryReport& report) {
  report.report(blas::cublaslt_library());
  if (blas::CublasLtState* state = target.existing_stream_state<blas::CublasLtState>(); state && state->existing_gemm())
    report.report(state->existing_gemm()->stats());
}

}  // namespace accel
