#include "libs/fft/cpu_fft.hpp"

#include <fftw3.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <memory>
#include <mutex>
#include <span>

#include "cache/cache.hpp"
#include "core/float_arrays.hpp"

namespace accel::fft {
namespace {

// FFTW plans are small (no arrays of the transform's size), so a generous bound costs little memory.
constexpr std::size_t kPlanCapacity = 512;

// FFTW's planner (making and destroying plans) works on global state and is not thread-safe; executing a plan on
// new arrays (fftw_execute_dft and its kin) is, so only the planner is serialised. Several CPU devices of one
// process share this lock and the cache below.
std::mutex& planner_mutex() {
  static std::mutex mutex;
  return mutex;
}

// The FFTW calls of one precision. fftw_iodim64 is one struct for every precision.
template <class Real>
struct Fftw;

template <>
struct Fftw<double> {
  static int alignment(void* data) { return fftw_alignment_of(static_cast<double*>(data)); }
  static void* make(FftType type, int rank, const fftw_iodim64* dims, const fftw_iodim64* batch, void* in, void* out,
                    int sign) {
    switch (type) {
      case FftType::c2c:
        return fftw_plan_guru64_dft(rank, dims, 1, batch, static_cast<fftw_complex*>(in),
                                    static_cast<fftw_complex*>(out), sign, FFTW_ESTIMATE);
      case FftType::r2c:
        return fftw_plan_guru64_dft_r2c(rank, dims, 1, batch, static_cast<double*>(in), static_cast<fftw_complex*>(out),
                                        FFTW_ESTIMATE);
      case FftType::c2r:
        return fftw_plan_guru64_dft_c2r(rank, dims, 1, batch, static_cast<fftw_complex*>(in), static_cast<double*>(out),
                                        FFTW_ESTIMATE);
    }
    return nullptr;
  }
  static void execute(FftType type, void* plan, void* in, void* out) {
    auto* p = static_cast<fftw_plan>(plan);
    switch (type) {
      case FftType::c2c: fftw_execute_dft(p, static_cast<fftw_complex*>(in), static_cast<fftw_complex*>(out)); return;
      case FftType::r2c: fftw_execute_dft_r2c(p, static_cast<double*>(in), static_cast<fftw_complex*>(out)); return;
      case FftType::c2r: fftw_execute_dft_c2r(p, static_cast<fftw_complex*>(in), static_cast<double*>(out)); return;
    }
  }
  static void destroy(void* plan) { fftw_destroy_plan(static_cast<fftw_plan>(plan)); }
};

template <>
struct Fftw<float> {
  static int alignment(void* data) { return fftwf_alignment_of(static_cast<float*>(data)); }
  static void* make(FftType type, int rank, const fftw_iodim64* dims, const fftw_iodim64* batch, void* in, void* out,
                    int sign) {
    switch (type) {
      case FftType::c2c:
        return fftwf_plan_guru64_dft(rank, dims, 1, batch, static_cast<fftwf_complex*>(in),
                                     static_cast<fftwf_complex*>(out), sign, FFTW_ESTIMATE);
      case FftType::r2c:
        return fftwf_plan_guru64_dft_r2c(rank, dims, 1, batch, static_cast<float*>(in),
                                         static_cast<fftwf_complex*>(out), FFTW_ESTIMATE);
      case FftType::c2r:
        return fftwf_plan_guru64_dft_c2r(rank, dims, 1, batch, static_cast<fftwf_complex*>(in),
                                         static_cast<float*>(out), FFTW_ESTIMATE);
    }
    return nullptr;
  }
  static void execute(FftType type, void* plan, void* in, void* out) {
    auto* p = static_cast<fftwf_plan>(plan);
    switch (type) {
      case FftType::c2c:
        fftwf_execute_dft(p, static_cast<fftwf_complex*>(in), static_cast<fftwf_complex*>(out));
        return;
      case FftType::r2c: fftwf_execute_dft_r2c(p, static_cast<float*>(in), static_cast<fftwf_complex*>(out)); return;
      case FftType::c2r: fftwf_execute_dft_c2r(p, static_cast<fftwf_complex*>(in), static_cast<float*>(out)); return;
    }
  }
  static void destroy(void* plan) { fftwf_destroy_plan(static_cast<fftwf_plan>(plan)); }
};

// One FFTW plan of either precision; destroyed under the planner's lock.
class FftwPlan {
 public:
  FftwPlan(void* plan, void (*destroy)(void*)) : plan_(plan), destroy_(destroy) {}
  ~FftwPlan() {
    std::lock_guard lock(planner_mutex());
    destroy_(plan_);
  }
  FftwPlan(const FftwPlan&) = delete;
  FftwPlan& operator=(const FftwPlan&) = delete;
  [[nodiscard]] void* get() const noexcept { return plan_; }

 private:
  void* plan_;
  void (*destroy_)(void*);
};

cache::Cache<FftwPlan>& plans() {
  (void)planner_mutex();  // made first, so destroyed after the cache, whose plans take it
  static cache::Cache<FftwPlan> cache(
      cache::CacheOptions<FftwPlan>{.name = "fftw-plans", .max_entries = kPlanCapacity});
  return cache;
}

// A plan's key: every field it depends on, resolved, as fixed-size integers (equal bytes are equal plans).
using PlanKey = std::array<std::int64_t, 19>;

PlanKey plan_key(const FftGeometry& g, int input_alignment, int output_alignment) {
  const FftShape& s = g.shape;
  return {static_cast<std::int64_t>(s.type),
          static_cast<std::int64_t>(s.precision),
          s.rank,
          g.in_place ? 1 : 0,
          static_cast<std::int64_t>(s.direction),
          input_alignment,
          output_alignment,
          s.n[0],
          s.n[1],
          s.n[2],
          s.batch,
          g.input_strides[0],
          g.input_strides[1],
          g.input_strides[2],
          g.output_strides[0],
          g.output_strides[1],
          g.output_strides[2],
          s.input.distance,
          s.output.distance};
}

// Calls visit(index) for the index of every real part (both parts of complex elements) the output layout names,
// counted in real parts from the output's start; gaps between strided elements are the caller's and stay untouched.
template <class Visit>
void for_each_output_part(const FftGeometry& g, Visit visit) {
  const std::int64_t parts = g.output_type == g.complex_type ? 2 : 1;
  const auto& n = g.output_sizes;
  const auto& s = g.output_strides;
  for (std::int64_t b = 0; b < g.shape.batch; ++b)
    for (std::int64_t i = 0; i < n[0]; ++i)
      for (std::int64_t j = 0; j < n[1]; ++j)
        for (std::int64_t k = 0; k < n[2]; ++k) {
          const std::int64_t at = (b * g.shape.output.distance + i * s[0] + j * s[1] + k * s[2]) * parts;
          for (std::int64_t p = 0; p < parts; ++p) visit(at + p);
        }
}

// Multiplies the elements the output layout names by `factor`.
template <class Real>
void scale_output(const FftGeometry& g, void* output, Real factor) {
  Real* base = static_cast<Real*>(output);
  for_each_output_part(g, [&](std::int64_t at) { base[at] *= factor; });
}

template <class Real>
Status run(const FftGeometry& g, const FftOperands& ops) {
  using F = Fftw<Real>;
  const PlanKey key = plan_key(g, F::alignment(ops.input), F::alignment(ops.output));
  const auto build = [&]() -> Result<std::shared_ptr<const FftwPlan>> {
    const FftShape& s = g.shape;
    std::array<fftw_iodim64, 3> dims{};
    for (int d = 0; d < s.rank; ++d) dims[d] = {.n = s.n[d], .is = g.input_strides[d], .os = g.output_strides[d]};
    const fftw_iodim64 batch{.n = s.batch, .is = s.input.distance, .os = s.output.distance};
    const int sign = g.inverse() ? FFTW_BACKWARD : FFTW_FORWARD;
    std::lock_guard lock(planner_mutex());
    // FFTW_ESTIMATE leaves the arrays alone, so the request's own arrays serve for planning.
    void* plan = F::make(s.type, s.rank, dims.data(), &batch, ops.input, ops.output, sign);
    if (plan == nullptr) return not_supported(fmt::format("FFTW has no plan for {}", to_string(s)));
    return std::make_shared<const FftwPlan>(plan, &F::destroy);
  };
  ACCEL_ASSIGN_OR_RETURN(const std::shared_ptr<const FftwPlan> plan, plans().get(std::as_bytes(std::span(key)), build));
  F::execute(g.shape.type, plan->get(), ops.input, ops.output);
  if (const double factor = g.scale(); factor != 1.0) scale_output<Real>(g, ops.output, static_cast<Real>(factor));
  return Status();
}

struct FftwfFree {
  void operator()(float* data) const { fftwf_free(data); }
};
using Scratch = std::unique_ptr<float[], FftwfFree>;

Result<Scratch> scratch(std::uint64_t floats) {
  Scratch data(fftwf_alloc_real(std::max<std::uint64_t>(floats, 1)));
  if (data == nullptr) {
    return resource_exhausted(fmt::format("the f32 scratch of an f16 FFT ({} floats) could not be allocated", floats));
  }
  return data;
}

// Real parts (f16 values) of `extent` elements of `type`.
std::uint64_t parts(std::uint64_t extent, DType type) { return extent * (type == DType::c32 ? 2 : 1); }

// FFTW has no half precision. The transform runs in f32 on scratch arrays of the same layout (counted in elements,
// a layout is the same whatever the element's width): the input widened exactly, the f32 transform and its scaling,
// then the named output elements rounded to f16 once. Its plan is the f32 one of the same shape on the scratch's
// alignment, keyed as such, so it is shared with f32 requests of that shape.
Status run_half(const FftGeometry& g, const FftOperands& ops) {
  FftGeometry wide = g;
  wide.shape.precision = DType::f32;
  wide.real_type = DType::f32;
  wide.complex_type = DType::c64;
  wide.input_type = g.input_type == DType::f16 ? DType::f32 : DType::c64;
  wide.output_type = g.output_type == DType::f16 ? DType::f32 : DType::c64;
  const std::uint64_t input_parts = parts(g.input_extent, g.input_type);
  const std::uint64_t output_parts = parts(g.output_extent, g.output_type);
  // In place, one scratch holds both sides as the one buffer does (the real side of r2c/c2r padded into the
  // complex one's rows), so it is widened as a whole: as far as the farther side reaches.
  const std::uint64_t widened = g.in_place ? std::max(input_parts, output_parts) : input_parts;
  ACCEL_ASSIGN_OR_RETURN(const Scratch input, scratch(widened));
  const auto* halves = static_cast<const Half*>(ops.input);
  to_floats(std::span<const Half>(halves, widened), input.get());
  Scratch output_scratch;
  if (!g.in_place) {
    ACCEL_ASSIGN_OR_RETURN(output_scratch, scratch(output_parts));
  }
  float* output = g.in_place ? input.get() : output_scratch.get();
  ACCEL_RETURN_IF_ERROR(run<float>(wide, {.input = input.get(), .output = output}));
  auto* rounded = static_cast<Half*>(ops.output);
  for_each_output_part(g, [&](std::int64_t at) { rounded[at] = to_half(output[at]); });
  return Status();
}

}  // namespace

Status run_cpu_fft(const FftGeometry& geometry, const FftOperands& operands) {
  switch (geometry.real_type) {
    case DType::f64: return run<double>(geometry, operands);
    case DType::f16: return run_half(geometry, operands);
    default: return run<float>(geometry, operands);
  }
}

CacheStats fftw_plan_stats() { return plans().stats(); }

LibraryVersion fftw_library() { return {.name = "FFTW", .version = fftw_version}; }

}  // namespace accel::fft
