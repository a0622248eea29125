#include "graph/cuda/cuda_executable.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "graph/cuda/padding.hpp"
#include "graph/executable_cache_options.hpp"
#include "operation/cuda_copy.hpp"

namespace accel::graph::cuda {

namespace {
const std::byte* weights_of(std::span<const BufferView> views) {
  return static_cast<const std::byte*>(views[Operation<Execute>::weights].data);
}
}  // namespace

StreamArena::~StreamArena() {
  if (base_ != nullptr) cudaFreeAsync(base_, stream_);
}

Result<std::byte*> StreamArena::at_least(std::uint64_t bytes, CudaTarget& target) {
  if (bytes <= bytes_.load(std::memory_order_relaxed)) return base_;
  void* grown = nullptr;
  ACCEL_RETURN_IF_ERROR(target.check(cudaMallocFromPoolAsync(&grown, bytes, target.pool(), stream_),
                                     fmt::format("allocating a {}-byte graph arena", bytes)));
  if (base_ != nullptr) cudaFreeAsync(base_, stream_);
  base_ = static_cast<std::byte*>(grown);
  bytes_.store(bytes, std::memory_order_relaxed);
  return base_;
}

std::shared_ptr<const CudaExecutable> CudaExecutable::make(ExecutablePlan plan, std::shared_ptr<StreamArena> arena) {
  return std::shared_ptr<const CudaExecutable>(new CudaExecutable(std::move(plan), std::move(arena)));
}

CudaExecutable::~CudaExecutable() {
  if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
}

Status CudaExecutable::copy_in(const CheckedExecute& checked, std::span<const BufferView> views, std::byte* arena,
                               bool pad, CudaTarget& target) const {
  std::vector<InputCopy> copies;
  for (std::size_t i = 0; i < checked.inputs.size(); ++i) {
    const TensorInfo& t = plan_.graph().tensors()[checked.input_tensors[i]];
    const std::uint64_t real = element_count(t.shape, checked.actual);
    const std::uint64_t padded = pad ? element_count(t.shape, checked.compiled) : real;
    const auto input = std::find_if(plan_.graph().inputs().begin(), plan_.graph().inputs().end(), [&](std::uint32_t n) {
      return plan_.graph().nodes()[n].output == checked.input_tensors[i];
    });
    copies.push_back({.from = views[1 + i].at(checked.input_firsts[i]),
                      .to = arena + plan_.slot(checked.input_tensors[i]).offset,
                      .real = real,
                      .padded = padded,
                      .element_bytes = static_cast<std::uint32_t>(size_of(t.dtype)),
                      .repeat_last = plan_.graph().nodes()[*input].padding == Padding::repeat_last});
  }
  if (fits_one_launch(copies.data(), copies.size())) {
    return target.check(copy_inputs(copies.data(), copies.size(), target.stream()), "copying the graph's inputs in");
  }
  for (const InputCopy& c : copies) {
    ACCEL_RETURN_IF_ERROR(target.check(copy_on_device(c.to, c.from, c.real * c.element_bytes, target.stream()),
                                       "copying a graph input in"));
    ACCEL_RETURN_IF_ERROR(
        target.check(fill_padding(c.to, c.element_bytes, c.real, c.padded, c.repeat_last, target.stream()),
                     "padding a graph input"));
  }
  return Status();
}

Status CudaExecutable::capture(std::byte* arena, const std::byte* weights, blas::CublasLtGemm* gemm,
                               CudaTarget& target) const {
  cudaStream_t stream = target.stream();
  ACCEL_RETURN_IF_ERROR(
      target.check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "beginning a graph capture"));
  Status enqueued = enqueue_steps(plan_, plan_.binding(), arena, weights, gemm, target);
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
  ACCEL_RETURN_IF_ERROR(enqueued);
  ACCEL_RETURN_IF_ERROR(target.check(ended, "ending a graph capture"));
  cudaGraphExec_t exec = nullptr;
  const cudaError_t instantiated = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  ACCEL_RETURN_IF_ERROR(target.check(instantiated, "instantiating a captured graph"));
  if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
  exec_ = exec;
  captured_arena_ = arena;
  captured_weights_ = weights;
  captured_with_cublaslt_ = gemm != nullptr;
  return Status();
}

Status CudaExecutable::run(const CheckedExecute& checked, std::span<const BufferView> views, bool replay,
                           blas::CublasLtGemm* gemm, CudaTarget& target) const {
  ACCEL_ASSIGN_OR_RETURN(std::byte* const arena, arena_->at_least(plan_.arena_bytes(), target));
  ACCEL_RETURN_IF_ERROR(copy_in(checked, views, arena, replay, target));
  const std::byte* weights = weights_of(views);
  if (replay) {
    if (exec_ == nullptr || captured_arena_ != arena || captured_weights_ != weights ||
        (gemm != nullptr && !captured_with_cublaslt_)) {
      // The run that needs a capture runs its steps uncaptured, at the bucket's extent as the graph will, then
      // captures them for the runs after it. Like the warm-up PyTorch's CUDA graphs ask for, that keeps what a
      // first call does once (a kernel's module loaded lazily, cuBLASLt's set-up for a new shape) out of the
      // capture, where an allocation or a synchronisation would invalidate it: one model load in about 50 server
      // starts on the H200s failed with an invalidated capture (docs/PERFORMANCE.md §46; the cause not pinned
      // down). Running the steps twice instead would read inputs whose arena slots the first run reused.
      ACCEL_RETURN_IF_ERROR(enqueue_steps(plan_, plan_.binding(), arena, weights, gemm, target));
      ACCEL_RETURN_IF_ERROR(capture(arena, weights, gemm, target));
    } else {
      ACCEL_RETURN_IF_ERROR(target.check(cudaGraphLaunch(exec_, target.stream()), "replaying a graph"));
    }
  } else {
    ACCEL_RETURN_IF_ERROR(enqueue_steps(plan_, checked.actual, arena, weights, gemm, target));
  }
  const std::size_t first_output = 1 + checked.inputs.size();
  for (std::size_t i = 0; i < checked.outputs.size(); ++i) {
    const std::uint32_t tensor = plan_.graph().outputs()[i].tensor;
    const TensorInfo& t = plan_.graph().tensors()[tensor];
    const Slot& slot = plan_.slot(tensor);
    const std::byte* source = (slot.storage == Storage::weights ? weights : arena) + slot.offset;
    ACCEL_RETURN_IF_ERROR(
        target.check(copy_on_device(views[first_output + i].at(checked.output_firsts[i]), source,
                                    element_count(t.shape, checked.actual) * size_of(t.dtype), target.stream()),
                     "copying a graph output out"));
  }
  return Status();
}

Result<std::unique_ptr<GraphStreamState>> GraphStreamState::open(CudaTarget& target) {
  // What a stored executable holds (its plan: steps and arena layout) depends on the GPU, not on cuBLASLt, whose
  // plans are made again in each process.
  std::string context = fmt::format("accel-graph-executable/{}/{}/sm{}/", kExecutableDiskFormat, target.gpu_name(),
                                    target.compute_capability());
  cache::CacheOptions<CudaExecutable> options =
      executable_cache_options<CudaExecutable>(context, target.graph_options());
  options.size_of = nullptr;  // no executable holds device memory of its own: the arena is the stream's
  return std::unique_ptr<GraphStreamState>(
      new GraphStreamState(std::move(options), std::make_shared<StreamArena>(target.stream())));
}

CacheStats GraphStreamState::stats() const {
  CacheStats stats = executables_.stats();
  stats.bytes = arena_->bytes();
  return stats;
}

Result<std::shared_ptr<const CudaExecutable>> GraphStreamState::executable(const CheckedExecute& checked) {
  using Made = Result<std::shared_ptr<const CudaExecutable>>;
  const auto build = [&]() -> Made {
    ACCEL_ASSIGN_OR_RETURN(ExecutablePlan plan, ExecutablePlan::make(checked.graph, checked.compiled));
    return CudaExecutable::make(std::move(plan), arena_);
  };
  const auto decode = [&](std::span<const std::byte> stored) -> Made {
    ACCEL_ASSIGN_OR_RETURN(ExecutablePlan plan, ExecutablePlan::decode(checked.graph, stored));
    return CudaExecutable::make(std::move(plan), arena_);
  };
  return executables_.get(*checked.key, build, decode);
}

}  // namespace accel::graph::cuda
