/// @file
/// accel::RecordTraits — which requests a Recording (accel/device/recording.hpp) may hold, and where their buffers
/// are. A request is refused unless its traits say it is capturable: the default is "not capturable", so a request
/// nobody has looked at (one that allocates, frees, or whose contract waits on the host, as
/// the solvers' info checks and the sparse structure checks do) is refused by name before anything runs. A
/// capturable request's run step only enqueues GPU work on its stream, over buffers named by its handles, with
/// plans made before the run: what a CUDA stream capture can record.
#pragma once

#include "accel/device/requests.hpp"
#include "accel/graph/execute.hpp"
#include "accel/libs/blas/gemm.hpp"
#include "accel/libs/blas/level1.hpp"
#include "accel/libs/blas/level2.hpp"
#include "accel/libs/blas/level3.hpp"
#include "accel/libs/fft/fft.hpp"
#include "accel/libs/rand/generate.hpp"

namespace accel {

/// Not capturable, with the reason a refusal gives. A capturable request's specialisation sets kCapturable and
/// lists every BufferHandle the request names, by reference, through `buffers(request, visit)`.
template <class Request>
struct RecordTraits {
  static constexpr bool kCapturable = false;  ///< refused by Recording::record
  /// Why, for the refusal's message.
  static constexpr const char* kWhy =
      "its contract is not known to be capturable (it may allocate, synchronise "
      "or wait on the host)";
};

/// Allocations are answered at once and change the buffer table: never inside a recording.
template <>
struct RecordTraits<Allocate> {
  static constexpr bool kCapturable = false;                                       ///< refused
  static constexpr const char* kWhy = "it allocates (allocate before recording)";  ///< the refusal's reason
};
/// Frees end a buffer the recording may name.
template <>
struct RecordTraits<Free> {
  static constexpr bool kCapturable = false;                                    ///< refused
  static constexpr const char* kWhy = "it frees (free after the last launch)";  ///< the refusal's reason
};
/// An upload from pinned host memory (cudaHostAlloc, cudaHostRegister) that stays valid while the recording is
/// launched: a memcpy node of the graph, which reads the memory when the graph runs. Pageable memory is refused by
/// the CUDA device when the step is launched, and every host copy by isolated devices (run_recorded.hpp).
template <>
struct RecordTraits<CopyToDevice> {
  static constexpr bool kCapturable = true;  ///< accepted by Recording::record
  static constexpr const char* kWhy = "";    ///< none
  /// Visits the destination (the host source is rebound by Recording::rebind(HostSource, HostSource)).
  template <class F>
  static void buffers(CopyToDevice& r, F&& visit) {
    visit(r.destination);
  }
};
/// A download into pinned host memory, as the upload: written when the graph runs, read after the launch's future.
template <>
struct RecordTraits<CopyToHost> {
  static constexpr bool kCapturable = true;  ///< accepted by Recording::record
  static constexpr const char* kWhy = "";    ///< none
  /// Visits the source (the host destination is rebound by Recording::rebind(HostDestination, HostDestination)).
  template <class F>
  static void buffers(CopyToHost& r, F&& visit) {
    visit(r.source);
  }
};
/// Resets rebuild the context: every handle of a recording would be stale.
template <>
struct RecordTraits<ResetContext> {
  static constexpr bool kCapturable = false;                                                ///< refused
  static constexpr const char* kWhy = "it rebuilds the context (every handle goes stale)";  ///< the refusal's reason
};

namespace detail {
/// Traits of a request whose run only enqueues stream work over the buffers `Fields` names.
struct Capturable {
  static constexpr bool kCapturable = true;  ///< accepted by Recording::record
  static constexpr const char* kWhy = "";    ///< none
};
}  // namespace detail

/// A copy between buffers: one cudaMemcpyAsync.
template <>
struct RecordTraits<CopyOnDevice> : detail::Capturable {
  /// Visits source and destination.
  template <class F>
  static void buffers(CopyOnDevice& r, F&& visit) {
    visit(r.source);
    visit(r.destination);
  }
};
/// GEMM: one cuBLASLt matmul with a plan from the stream's cache.
template <>
struct RecordTraits<Gemm> : detail::Capturable {
  /// Visits a, b, c and the bias.
  template <class F>
  static void buffers(Gemm& r, F&& visit) {
    visit(r.a);
    visit(r.b);
    visit(r.c);
    visit(r.bias);
  }
};
/// axpy: one cuBLAS call.
template <>
struct RecordTraits<blas::Axpy> : detail::Capturable {
  /// Visits x and y.
  template <class F>
  static void buffers(blas::Axpy& r, F&& visit) {
    visit(r.x);
    visit(r.y);
  }
};
/// scal: one cuBLAS call.
template <>
struct RecordTraits<blas::Scal> : detail::Capturable {
  /// Visits x.
  template <class F>
  static void buffers(blas::Scal& r, F&& visit) {
    visit(r.x);
  }
};
/// dot: device pointer mode, the result written into a buffer in stream order.
template <>
struct RecordTraits<blas::Dot> : detail::Capturable {
  /// Visits x, y and the result.
  template <class F>
  static void buffers(blas::Dot& r, F&& visit) {
    visit(r.x);
    visit(r.y);
    visit(r.result);
  }
};
/// nrm2: device pointer mode, the result written into a buffer in stream order (16-bit x: a kernel of ours).
template <>
struct RecordTraits<blas::Nrm2> : detail::Capturable {
  /// Visits x and the result.
  template <class F>
  static void buffers(blas::Nrm2& r, F&& visit) {
    visit(r.x);
    visit(r.result);
  }
};
/// asum: as nrm2; 16-bit x beyond 65,536 elements in two launches over the plan's workspace.
template <>
struct RecordTraits<blas::Asum> : detail::Capturable {
  /// Visits x and the result.
  template <class F>
  static void buffers(blas::Asum& r, F&& visit) {
    visit(r.x);
    visit(r.result);
  }
};
/// iamax: as nrm2, the index written into an i32 buffer.
template <>
struct RecordTraits<blas::Iamax> : detail::Capturable {
  /// Visits x and the result.
  template <class F>
  static void buffers(blas::Iamax& r, F&& visit) {
    visit(r.x);
    visit(r.result);
  }
};
/// iamin: as iamax.
template <>
struct RecordTraits<blas::Iamin> : detail::Capturable {
  /// Visits x and the result.
  template <class F>
  static void buffers(blas::Iamin& r, F&& visit) {
    visit(r.x);
    visit(r.result);
  }
};
/// copy: one copy on the stream, cuBLAS's copy or a kernel of ours.
template <>
struct RecordTraits<blas::Copy> : detail::Capturable {
  /// Visits x and y.
  template <class F>
  static void buffers(blas::Copy& r, F&& visit) {
    visit(r.x);
    visit(r.y);
  }
};
/// swap: cuBLAS's swap or a kernel of ours.
template <>
struct RecordTraits<blas::Swap> : detail::Capturable {
  /// Visits x and y.
  template <class F>
  static void buffers(blas::Swap& r, F&& visit) {
    visit(r.x);
    visit(r.y);
  }
};
/// rot: cuBLAS's rot (c and s in host pointer mode, read when the call is captured) or a kernel of ours.
template <>
struct RecordTraits<blas::Rot> : detail::Capturable {
  /// Visits x and y.
  template <class F>
  static void buffers(blas::Rot& r, F&& visit) {
    visit(r.x);
    visit(r.y);
  }
};
/// gemv (strided batched): one launch, a kernel of ours for small matrices (blas::Gemv's header) or cuBLAS's gemv.
template <>
struct RecordTraits<blas::Gemv> : detail::Capturable {
  /// Visits a, x and y.
  template <class F>
  static void buffers(blas::Gemv& r, F&& visit) {
    visit(r.a);
    visit(r.x);
    visit(r.y);
  }
};
/// ger (strided batched): one launch of a kernel of ours.
template <>
struct RecordTraits<blas::Ger> : detail::Capturable {
  /// Visits a, x and y.
  template <class F>
  static void buffers(blas::Ger& r, F&& visit) {
    visit(r.a);
    visit(r.x);
    visit(r.y);
  }
};
/// trsv (strided batched): cuBLAS's trsv, one call a member.
template <>
struct RecordTraits<blas::Trsv> : detail::Capturable {
  /// Visits a and x.
  template <class F>
  static void buffers(blas::Trsv& r, F&& visit) {
    visit(r.a);
    visit(r.x);
  }
};
/// symv (strided batched): kernels of ours over the plan's workspace.
template <>
struct RecordTraits<blas::Symv> : detail::Capturable {
  /// Visits a, x and y.
  template <class F>
  static void buffers(blas::Symv& r, F&& visit) {
    visit(r.a);
    visit(r.x);
    visit(r.y);
  }
};
/// trsm: cuBLAS's trsm, or by blocks (kernels of ours between GEMMs, cuBLAS's or for small f32 ones ours), all on the
/// stream.
template <>
struct RecordTraits<blas::Trsm> : detail::Capturable {
  /// Visits a and b.
  template <class F>
  static void buffers(blas::Trsm& r, F&& visit) {
    visit(r.a);
    visit(r.b);
  }
};
/// syrk: one cuBLAS call.
template <>
struct RecordTraits<blas::Syrk> : detail::Capturable {
  /// Visits a and c.
  template <class F>
  static void buffers(blas::Syrk& r, F&& visit) {
    visit(r.a);
    visit(r.c);
  }
};
/// symm (strided batched): cuBLAS's symm, or A mirrored into the workspace and a GEMM, a member at a time.
template <>
struct RecordTraits<blas::Symm> : detail::Capturable {
  /// Visits a, b and c.
  template <class F>
  static void buffers(blas::Symm& r, F&& visit) {
    visit(r.a);
    visit(r.b);
    visit(r.c);
  }
};
/// trmm (strided batched): cuBLAS's trmm, or A made whole and B copied in the workspace and a GEMM, a member at a time.
template <>
struct RecordTraits<blas::Trmm> : detail::Capturable {
  /// Visits a and b.
  template <class F>
  static void buffers(blas::Trmm& r, F&& visit) {
    visit(r.a);
    visit(r.b);
  }
};
/// geam (strided batched): cuBLAS's geam, one call a member.
template <>
struct RecordTraits<blas::Geam> : detail::Capturable {
  /// Visits a, b and c.
  template <class F>
  static void buffers(blas::Geam& r, F&& visit) {
    visit(r.a);
    visit(r.b);
    visit(r.c);
  }
};
/// An FFT execution: a cuFFT plan made before the run, its work area from the generic path.
template <>
struct RecordTraits<Fft> : detail::Capturable {
  /// Visits input and output.
  template <class F>
  static void buffers(Fft& r, F&& visit) {
    visit(r.input);
    visit(r.output);
  }
};
/// Random numbers: a Philox kernel, or a cuRAND generator kept per stream.
template <>
struct RecordTraits<rand::Generate> : detail::Capturable {
  /// Visits the output.
  template <class F>
  static void buffers(rand::Generate& r, F&& visit) {
    visit(r.output);
  }
};
/// A compiled graph's execution replays its own CUDA graph over an arena its executable owns (and evicts): a
/// recorded graph could outlive it, and a stream capture cannot hold another capture.
template <>
struct RecordTraits<graph::Execute> {
  static constexpr bool kCapturable = false;  ///< refused
  /// The refusal's reason.
  static constexpr const char* kWhy =
      "it replays its own CUDA graph over an arena its executable owns, which a recorded graph could outlive";
};

}  // namespace accel
