// The JIT family (include/accel/jit/): CUTLASS GEMM, grouped GEMM and convolution as Device methods taking the
// request structs' members as keyword arguments (the CPU device runs them with a double-precision reference), and
// NVRTC kernels: accel.Program (CUDA C++ source), accel.KernelArg and Device.launch_kernel (CUDA devices only; the
// CPU device answers NotSupported).
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "python/conv_fields.hpp"
#include "python/recording.hpp"

#include "accel/jit/cutlass.hpp"
#include "accel/jit/kernel.hpp"

namespace accel::python {

template <>
struct EnumNames<WhenCompiling> {
  static constexpr const char* python_name = "WhenCompiling";
  static constexpr std::array values{std::pair{WhenCompiling::wait, "wait"},
                                     std::pair{WhenCompiling::library_fallback, "library_fallback"},
                                     std::pair{WhenCompiling::unavailable, "unavailable"}};
};
template <>
struct EnumNames<KernelSchedule> {
  static constexpr const char* python_name = "KernelSchedule";
  static constexpr std::array values{std::pair{KernelSchedule::automatic, "automatic"},
                                     std::pair{KernelSchedule::tma_cooperative, "tma_cooperative"},
                                     std::pair{KernelSchedule::tma_pingpong, "tma_pingpong"}};
};
template <>
struct EnumNames<ConvPass> {
  static constexpr const char* python_name = "ConvPass";
  static constexpr std::array values{std::pair{ConvPass::fprop, "fprop"}, std::pair{ConvPass::dgrad, "dgrad"},
                                     std::pair{ConvPass::wgrad, "wgrad"}};
};
template <>
struct EnumNames<jit::CodeKind> {
  static constexpr const char* python_name = "CodeKind";
  static constexpr std::array values{std::pair{jit::CodeKind::cubin, "cubin"}, std::pair{jit::CodeKind::ptx, "ptx"}};
};

// A matrix inside a buffer: a Buffer (offset 0) or a (Buffer, offset) pair; None for none.
template <>
struct FromPython<MatrixRef> {
  static MatrixRef convert(nb::handle value, std::string_view request, std::string_view name, const PyDevice& device) {
    if (nb::isinstance<nb::tuple>(value) && nb::len(value) == 2) {
      return {.buffer = from_python<BufferHandle>(value[0], request, name, device),
              .offset = from_python<std::uint64_t>(value[1], request, name, device)};
    }
    if (!value.is_none() && !nb::isinstance<PyBuffer>(value)) {
      refuse_argument(request, name, "an accel.Buffer, a (Buffer, offset) pair or None", value);
    }
    return {.buffer = from_python<BufferHandle>(value, request, name, device)};
  }
};

// One GEMM of a grouped GEMM, as a dict of GemmGroup's members.
template <>
struct FromPython<GemmGroup> : FromDict<GemmGroup> {
  static std::vector<Field<GemmGroup>> fields() {
    using G = GemmGroup;
    return {member("m", &G::m),     member("n", &G::n),     member("k", &G::k),    member("a", &G::a),
            member("b", &G::b),     member("c", &G::c),     member("d", &G::d),    member("lda", &G::lda),
            member("ldb", &G::ldb), member("ldc", &G::ldc), member("ldd", &G::ldd)};
  }
};

// The groups: a list of such dicts.
template <>
struct FromPython<std::vector<GemmGroup>> {
  static std::vector<GemmGroup> convert(nb::handle value, std::string_view request, std::string_view name,
                                        const PyDevice& device) {
    if (!nb::isinstance<nb::list>(value) && !nb::isinstance<nb::tuple>(value)) {
      refuse_argument(request, name, "a list of dicts of GemmGroup's fields", value);
    }
    std::vector<GemmGroup> groups;
    for (std::size_t i = 0; i < nb::len(value); ++i) {
      groups.push_back(FromPython<GemmGroup>::convert(value[i], request, fmt::format("{}[{}]", name, i), device));
    }
    return groups;
  }
};

namespace {

// tile_m, tile_n, tile_k, cluster_m, cluster_n, schedule and when_compiling, then `more`.
template <class R>
std::vector<Field<R>> with_kernel_fields(std::vector<Field<R>> fields) {
  using T = KernelTile;
  for (Field<R> field : std::vector<Field<R>>{
           member("tile_m", &R::tile, &T::m), member("tile_n", &R::tile, &T::n), member("tile_k", &R::tile, &T::k),
           member("cluster_m", &R::tile, &T::cluster_m), member("cluster_n", &R::tile, &T::cluster_n),
           member("schedule", &R::tile, &T::schedule), member("when_compiling", &R::when_compiling)}) {
    fields.push_back(std::move(field));
  }
  return fields;
}

void bind_cutlass(nb::class_<PyDevice>& device) {
  using G = CutlassGemm;
  bind_request<G>(device, "cutlass_gemm",
                  with_kernel_fields<G>({member("m", &G::m),
                                         member("n", &G::n),
                                         member("k", &G::k),
                                         member("input", &G::input),
                                         member("output", &G::output),
                                         member("layout_a", &G::layout_a),
                                         member("layout_b", &G::layout_b),
                                         member("layout_c", &G::layout_c),
                                         member("a", &G::a),
                                         member("b", &G::b),
                                         member("c", &G::c),
                                         member("d", &G::d),
                                         member("lda", &G::lda),
                                         member("ldb", &G::ldb),
                                         member("ldc", &G::ldc),
                                         member("ldd", &G::ldd),
                                         member("alpha", &G::alpha),
                                         member("beta", &G::beta),
                                         member("activation", &G::epilogue, &Epilogue::activation),
                                         member("bias_vector", &G::epilogue, &Epilogue::bias),
                                         member("bias", &G::bias),
                                         member("row_scale", &G::row_scale),
                                         member("col_scale", &G::col_scale),
                                         member("residual", &G::residual)}));
  using GG = CutlassGroupedGemm;
  bind_request<GG>(device, "cutlass_grouped_gemm",
                   with_kernel_fields<GG>({member("input", &GG::input), member("output", &GG::output),
                                           member("layout_a", &GG::layout_a), member("layout_b", &GG::layout_b),
                                           member("layout_c", &GG::layout_c), member("groups", &GG::groups),
                                           member("alpha", &GG::alpha), member("beta", &GG::beta)}));
  using C = CutlassConv;
  bind_request<C>(device, "cutlass_conv",
                  with_kernel_fields<C>(
                      conv_fields<C>({member("pass_", &C::pass), member("x", &C::x), member("w", &C::w),
                                      member("y", &C::y), member("alpha", &C::alpha), member("beta", &C::beta)})));
}

// A kernel argument as Python holds it: the C++ one, and the buffer (checked against the device at launch).
struct PyKernelArg {
  KernelArg arg;
  std::optional<PyBuffer> buffer;
};

PyKernelArg buffer_arg(const PyBuffer& buffer, std::uint64_t offset, ArgAccess access) {
  return {.arg = {.kind = KernelArg::Kind::buffer, .buffer = buffer.handle, .offset = offset, .access = access},
          .buffer = buffer};
}

// A grid or block: an int, or a sequence of up to three ints (x, y, z).
Dim3 dim3_of(nb::handle value, std::string_view name) {
  const nb::object extents_given = nb::isinstance<nb::int_>(value) ? nb::make_tuple(value) : nb::borrow(value);
  const auto extents =
      int_array_from_python<std::array<std::uint32_t, 3>>(extents_given, "launch_kernel", name, {1, 1, 1});
  return {.x = extents[0], .y = extents[1], .z = extents[2]};
}

nb::object launch_kernel(const PyDevice& device, std::shared_ptr<jit::Program> program, std::string kernel,
                         nb::handle grid, nb::handle block, const std::vector<PyKernelArg>& args,
                         std::uint32_t shared_memory_bytes) {
  LaunchKernel launch{.program = std::move(program),
                      .kernel = std::move(kernel),
                      .grid = dim3_of(grid, "grid"),
                      .block = dim3_of(block, "block"),
                      .shared_memory_bytes = shared_memory_bytes,
                      .args = {}};
  for (std::size_t i = 0; i < args.size(); ++i) {
    KernelArg arg = args[i].arg;
    if (args[i].buffer) arg.buffer = args[i].buffer->use_on(device, fmt::format("args[{}]", i));
    launch.args.push_back(arg);
  }
  if (PyRecording* recording = active_recording(device)) {
    recording->record(std::move(launch), nb::kwargs());
    return nb::none();
  }
  return nb::cast(make_done_future(send_released([&] { return device.device.ask(std::move(launch)); })));
}

void bind_kernels(nb::module_& module) {
  using nb::arg;
  nb::class_<jit::Program>(module, "Program",
                           "CUDA C++ source that NVRTC compiles for the device's architecture (accel::jit::Program), "
                           "cached in memory and on disk by its source, headers and options.")
      .def(
          "__init__",
          [](jit::Program* self, std::string name, std::string source, std::map<std::string, std::string> headers,
             std::vector<std::string> options, std::vector<std::string> name_expressions, nb::handle code) {
            std::vector<jit::Header> listed;
            for (auto& [header, contents] : headers) listed.push_back({header, contents});
            new (self) jit::Program{.name = std::move(name),
                                    .source = std::move(source),
                                    .headers = std::move(listed),
                                    .options = std::move(options),
                                    .name_expressions = std::move(name_expressions),
                                    .code = enum_from_python<jit::CodeKind>(code, "Program", "code")};
          },
          arg("name"), arg("source"), nb::kw_only(), arg("headers") = std::map<std::string, std::string>{},
          arg("options") = std::vector<std::string>{}, arg("name_expressions") = std::vector<std::string>{},
          arg("code") = "cubin")
      .def_ro("name", &jit::Program::name)
      .def_ro("source", &jit::Program::source)
      .def_ro("options", &jit::Program::options)
      .def_ro("name_expressions", &jit::Program::name_expressions);

  auto scalar = [](KernelArg made) { return PyKernelArg{.arg = made, .buffer = std::nullopt}; };
  nb::class_<PyKernelArg>(module, "KernelArg",
                          "One argument of Device.launch_kernel: a buffer (in_, out, inout: how the kernel uses it, "
                          "which orders the launch) or a scalar of an exact C type (i32, u32, i64, u64, f32, f64).")
      .def_static(
          "in_", [](const PyBuffer& b, std::uint64_t offset) { return buffer_arg(b, offset, ArgAccess::read); },
          arg("buffer"), arg("offset") = 0, "A buffer the kernel reads (offset in elements).")
      .def_static(
          "out", [](const PyBuffer& b, std::uint64_t offset) { return buffer_arg(b, offset, ArgAccess::write); },
          arg("buffer"), arg("offset") = 0, "A buffer the kernel writes.")
      .def_static(
          "inout", [](const PyBuffer& b, std::uint64_t offset) { return buffer_arg(b, offset, ArgAccess::read_write); },
          arg("buffer"), arg("offset") = 0, "A buffer the kernel reads and writes.")
      .def_static(
          "i32", [scalar](std::int32_t v) { return scalar(KernelArg::of(v)); }, arg("value"))
      .def_static(
          "u32", [scalar](std::uint32_t v) { return scalar(KernelArg::of(v)); }, arg("value"))
      .def_static(
          "i64", [scalar](std::int64_t v) { return scalar(KernelArg::of(v)); }, arg("value"))
      .def_static(
          "u64", [scalar](std::uint64_t v) { return scalar(KernelArg::of(v)); }, arg("value"))
      .def_static(
          "f32", [scalar](float v) { return scalar(KernelArg::of(v)); }, arg("value"))
      .def_static(
          "f64", [scalar](double v) { return scalar(KernelArg::of(v)); }, arg("value"))
      .def_prop_ro(
          "size", [](const PyKernelArg& a) { return a.arg.size(); }, "Bytes the kernel parameter takes.");

  auto device = nb::borrow<nb::class_<PyDevice>>(module.attr("Device"));
  device.def("launch_kernel", &launch_kernel, arg("program"), arg("kernel"), nb::kw_only(), arg("grid"), arg("block"),
             arg("args") = std::vector<PyKernelArg>{}, arg("shared_memory_bytes") = 0,
             "Launches `kernel` (an extern \"C\" name or a name expression) of an accel.Program, compiled on first "
             "use (accel::LaunchKernel); grid and block are ints or (x, y, z). CUDA devices only. Returns an "
             "accel.Future.");
}

}  // namespace

void bind_jit_requests(nb::module_& module) {
  auto device = nb::borrow<nb::class_<PyDevice>>(module.attr("Device"));
  bind_cutlass(device);
  bind_kernels(module);
  export_enums<WhenCompiling, KernelSchedule, ConvPass, jit::CodeKind>(module);
}

}  // namespace accel::python
