#include "libs/blas/cublaslt_startup.hpp"

#include <cuda_runtime.h>

#include <atomic>

#include "libs/blas/cublaslt_gemm.hpp"

namespace accel::blas {
namespace {

enum class Stage : int { not_begun, running, done };
std::atomic<Stage> g_stage{Stage::not_begun};

// A first call as the compiled graphs make them: a small f16 GEMM with a bias epilogue, planned (heuristic query)
// on a handle of its own. Its result does not matter: a failure here shows again, with its reason, on the call
// that needs cuBLASLt.
void first_call(int device) {
  if (cudaSetDevice(device) == cudaSuccess) {
    if (Result<std::unique_ptr<CublasLtGemm>> gemm = CublasLtGemm::create(1, nullptr, 0); gemm.ok()) {
      const GemmShape shape{.transpose_b = Transpose::transpose,
                            .m = 64,
                            .n = 64,
                            .k = 64,
                            .input_type = DType::f16,
                            .output_type = DType::f16,
                            .epilogue = Epilogue{.bias = BiasVector::per_column}};
      if (Result<GemmGeometry> geometry = plan_gemm_geometry(shape); geometry.ok())
        static_cast<void>((*gemm)->plan(*geometry));
    }
  }
  g_stage.store(Stage::done, std::memory_order_release);
}

}  // namespace

std::unique_ptr<CublasLtStartup> CublasLtStartup::begin(int device) {
  Stage expected = Stage::not_begun;
  if (!g_stage.compare_exchange_strong(expected, Stage::running, std::memory_order_acq_rel)) return nullptr;
  return std::unique_ptr<CublasLtStartup>(new CublasLtStartup(device));
}

CublasLtStartup::CublasLtStartup(int device) : thread_(first_call, device) {}

CublasLtStartup::~CublasLtStartup() { thread_.join(); }

bool CublasLtStartup::done() noexcept { return g_stage.load(std::memory_order_acquire) == Stage::done; }

}  // namespace accel::blas
