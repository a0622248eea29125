// accel.Buffer: device buffers with a dtype and a shape, filled from and copied to NumPy arrays (shared without a
// copy: interop.cpp).
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <array>
#include <complex>
#include <string>
#include <utility>

#include "python/futures.hpp"

namespace accel::python {

using namespace nb::literals;

namespace {

using HostArray = nb::ndarray<nb::c_contig, nb::device::cpu>;

struct DTypeName {
  DType dtype;
  const char* name;          // NumPy's name
  nb::dlpack::dtype dlpack;  // what NumPy's DLPack export says
};
constexpr std::array kDTypes{
    DTypeName{DType::f32, "float32", {2, 32, 1}},   DTypeName{DType::f64, "float64", {2, 64, 1}},
    DTypeName{DType::f16, "float16", {2, 16, 1}},   DTypeName{DType::bf16, "bfloat16", {4, 16, 1}},
    DTypeName{DType::c64, "complex64", {5, 64, 1}}, DTypeName{DType::c128, "complex128", {5, 128, 1}},
    DTypeName{DType::i8, "int8", {0, 8, 1}},        DTypeName{DType::u8, "uint8", {1, 8, 1}},
    DTypeName{DType::i32, "int32", {0, 32, 1}},     DTypeName{DType::u32, "uint32", {1, 32, 1}},
    DTypeName{DType::i64, "int64", {0, 64, 1}},     DTypeName{DType::u64, "uint64", {1, 64, 1}},
};

// Calls f(T{}) with the C++ element type of `dtype`.
template <class F>
decltype(auto) visit_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::f32: return f(float{});
    case DType::f64: return f(double{});
    case DType::f16: return f(Half{});
    case DType::bf16: return f(BFloat16{});
    case DType::c64: return f(std::complex<float>{});
    case DType::c128: return f(std::complex<double>{});
    case DType::i8: return f(std::int8_t{});
    case DType::u8: return f(std::uint8_t{});
    case DType::i32: return f(std::int32_t{});
    case DType::u32: return f(std::uint32_t{});
    case DType::i64: return f(std::int64_t{});
    case DType::u64: return f(std::uint64_t{});
    default: break;
  }
  raise_status(not_supported(fmt::format("accel.Buffer: dtype {} is not available from Python", to_string(dtype))));
}

std::uint64_t element_count(const std::vector<std::int64_t>& shape) {
  std::uint64_t count = 1;
  for (std::int64_t extent : shape) {
    if (extent < 0) raise_status(invalid_argument(fmt::format("a buffer's shape {} has a negative extent", shape)));
    count *= static_cast<std::uint64_t>(extent);
  }
  return count;
}

nb::tuple shape_tuple(const std::vector<std::int64_t>& shape) {
  return nb::steal<nb::tuple>(PySequence_Tuple(nb::cast(shape).ptr()));
}

// A C-contiguous array over `value` (anything numpy.asarray takes), of `dtype` where one is asked for.
nb::object contiguous_array(nb::handle value, nb::handle dtype) {
  return nb::module_::import_("numpy").attr("ascontiguousarray")(value, "dtype"_a = dtype);
}

template <class Array>
DType dtype_of_array(const Array& array) {
  for (const DTypeName& known : kDTypes) {
    if (known.dlpack == array.dtype()) return known.dtype;
  }
  raise_status(invalid_argument(fmt::format("an array of DLPack dtype (code {}, {} bits) has no accel dtype",
                                            array.dtype().code, array.dtype().bits)));
}

// NumPy has no bfloat16 of its own: ml_dtypes' (the one JAX and TensorFlow use) is how bf16 buffers go to and from
// NumPy. Its arrays export neither DLPack nor a buffer, so they are taken through their uint16 view.
nb::object numpy_bfloat16() {
  try {
    return nb::module_::import_("ml_dtypes").attr("bfloat16");
  } catch (nb::python_error&) {
    raise_status(not_supported(
        "NumPy has no bfloat16: bf16 buffers go to and from NumPy as ml_dtypes.bfloat16 arrays (pip install "
        "ml_dtypes, or accel[bf16]), or through DLPack (a torch tensor)"));
  }
}

// The NumPy dtype of `dtype`'s elements (a name NumPy knows, or ml_dtypes' bfloat16).
nb::object numpy_dtype(DType dtype) {
  if (dtype == DType::bf16) return numpy_bfloat16();
  return nb::str(dtype_name(dtype).c_str());
}

bool is_numpy_bfloat16(nb::handle array_object) {
  nb::module_ numpy = nb::module_::import_("numpy");
  return nb::isinstance(array_object, numpy.attr("ndarray")) &&
         nb::cast<std::string>(array_object.attr("dtype").attr("name")) == "bfloat16";
}

// A host array (`Array`: an nb::ndarray type) and its accel dtype; nb::cast_error where it is none.
template <class Array>
std::pair<Array, DType> typed_array(nb::handle array_object, bool convert) {
  if (is_numpy_bfloat16(array_object)) {
    nb::object bits = array_object.attr("view")(nb::module_::import_("numpy").attr("uint16"));
    return {nb::cast<Array>(bits, convert), DType::bf16};
  }
  Array array = nb::cast<Array>(array_object, convert);
  return {array, dtype_of_array(array)};
}

// Copies `array` (of `dtype`, the host array `array_object`'s elements) into `buffer`; same element count and dtype,
// checked. The array lives until done.
PyFuture copy_typed_in(const PyBuffer& buffer, const HostArray& array, DType dtype, nb::object array_object) {
  if (dtype != buffer.handle.dtype || array.size() != buffer.handle.count) {
    raise_status(
        invalid_argument(fmt::format("copy into a buffer of {} x {}: the array holds {} x {}", buffer.handle.count,
                                     to_string(buffer.handle.dtype), array.size(), to_string(dtype))));
  }
  Future<Done> copied = send_released([&] {
    return buffer.device.device.ask(CopyToDevice{
        .source = {.data = array.data(), .count = array.size(), .dtype = dtype}, .destination = buffer.handle});
  });
  return make_done_future(std::move(copied), std::move(array_object));
}

PyFuture copy_in(const PyBuffer& buffer, nb::object array_object) {
  buffer.device.check_open("the buffer");
  auto [array, dtype] = typed_array<HostArray>(array_object, /*convert=*/true);
  return copy_typed_in(buffer, array, dtype, std::move(array_object));
}

// A new NumPy array with the buffer's contents, once the copy is done.
PyFuture copy_out(const PyBuffer& buffer) {
  buffer.device.check_open("the buffer");
  nb::tuple shape = shape_tuple(buffer.shape);
  nb::object array_object =
      nb::module_::import_("numpy").attr("empty")(shape, "dtype"_a = numpy_dtype(buffer.handle.dtype));
  HostArray array = typed_array<HostArray>(array_object, /*convert=*/true).first;
  Future<Done> copied = send_released([&] {
    return buffer.device.device.ask(
        CopyToHost{.source = buffer.handle,
                   .destination = {.data = array.data(), .count = array.size(), .dtype = buffer.handle.dtype}});
  });
  return make_future_with_value(std::move(copied), array_object);
}

}  // namespace

HostDestination host_memory_of(nb::handle array_object) {
  // Read-only arrays too: whether a copy may write one is writable()'s question. No implicit conversion: a copy
  // made to fit would be what the recording reads or writes, and would not outlive this call.
  using ReadableArray = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;
  try {
    const auto [array, dtype] = typed_array<ReadableArray>(array_object, /*convert=*/false);
    return {.data = const_cast<void*>(array.data()), .count = array.size(), .dtype = dtype};
  } catch (const nb::cast_error&) {
    raise_status(invalid_argument(
        fmt::format("a host copy needs a C-contiguous array in host memory (NumPy's, or a CPU tensor's), not a {}",
                    nb::cast<std::string>(nb::str(array_object.type().attr("__name__"))))));
  }
}

// NumPy says through its flags; other arrays (a CPU tensor) are taken as writable.
bool writable(nb::handle array) {
  return !nb::hasattr(array, "flags") || nb::cast<bool>(array.attr("flags").attr("writeable"));
}

HostDestination host_memory_for(nb::handle array, const PyBuffer& buffer, bool written) {
  const HostDestination host = host_memory_of(array);
  if (host.dtype != buffer.handle.dtype || host.count != buffer.handle.count) {
    raise_status(invalid_argument(fmt::format("a host copy with a buffer of {} x {}: the array holds {} x {}",
                                              buffer.handle.count, to_string(buffer.handle.dtype), host.count,
                                              to_string(host.dtype))));
  }
  if (written && !writable(array)) raise_status(invalid_argument("a host copy into a read-only array"));
  return host;
}

PyBuffer upload_array(const PyDevice& device, nb::handle value, nb::handle dtype) {
  nb::object array_object =
      contiguous_array(value, dtype.is_none() ? nb::none() : numpy_dtype(dtype_from_python(dtype)));
  auto [array, array_dtype] = typed_array<HostArray>(array_object, /*convert=*/true);
  std::vector<std::int64_t> shape;
  for (std::size_t i = 0; i < array.ndim(); ++i) shape.push_back(static_cast<std::int64_t>(array.shape(i)));
  PyBuffer buffer = allocate_buffer(device, array_dtype, std::move(shape));
  (void)copy_typed_in(buffer, array, array_dtype, array_object).result(std::nullopt);
  return buffer;
}

DLPackType dlpack_type_of(DType dtype) {
  for (const DTypeName& known : kDTypes) {
    if (known.dtype == dtype) return {known.dlpack.code, known.dlpack.bits};
  }
  raise_status(not_supported(fmt::format("dtype {} has no DLPack code in accel", to_string(dtype))));
}

std::optional<DType> dtype_of_dlpack(DLPackType type) {
  for (const DTypeName& known : kDTypes) {
    if (known.dlpack.code == type.code && known.dlpack.bits == type.bits) return known.dtype;
  }
  return std::nullopt;
}

std::string dtype_name(DType dtype) {
  for (const DTypeName& known : kDTypes) {
    if (known.dtype == dtype) return known.name;
  }
  return std::string(to_string(dtype));
}

DType dtype_from_python(nb::handle value) {
  std::string name;
  if (nb::isinstance<nb::str>(value)) {
    name = nb::cast<std::string>(value);
  } else {
    try {
      name = nb::cast<std::string>(nb::module_::import_("numpy").attr("dtype")(value).attr("name"));
    } catch (nb::python_error&) {
      raise_status(invalid_argument(fmt::format("{} names no dtype", nb::cast<std::string>(nb::repr(value)))));
    }
  }
  for (const DTypeName& known : kDTypes) {
    if (name == known.name) return known.dtype;
  }
  raise_status(
      invalid_argument(fmt::format("dtype '{}' is not one of accel's (float32, float64, float16, "
                                   "bfloat16, complex64, complex128, int8, uint8, int32, uint32, int64, "
                                   "uint64)",
                                   name)));
}

BufferHandle PyBuffer::use_on(const PyDevice& on, std::string_view operand) const {
  device.check_open(fmt::format("buffer '{}'", operand));
  if (!(device.device == on.device)) {
    raise_status(invalid_argument(
        fmt::format("buffer '{}' belongs to device {}, not to {}", operand, device.device.name(), on.device.name())));
  }
  return handle;
}

PyBuffer allocate_buffer(const PyDevice& device, DType dtype, std::vector<std::int64_t> shape) {
  const std::uint64_t count = element_count(shape);
  return visit_dtype(dtype, [&]<class T>(T) {
    Buffer<T> buffer = wait_released(send_released([&] { return device.device.allocate<T>(count); }));
    const BufferHandle handle = buffer.handle();
    return PyBuffer{.device = device,
                    .owner = std::make_shared<const Buffer<T>>(std::move(buffer)),
                    .handle = handle,
                    .shape = std::move(shape)};
  });
}

void bind_buffers(nb::module_& module) {
  nb::class_<PyBuffer> buffer(
      module, "Buffer",
      "A buffer on a device: a dtype and a shape over generation-checked device memory. Freed when "
      "the last reference goes; using it after its device closed raises accel.StaleHandle.");
  buffer.def_prop_ro("device", [](const PyBuffer& b) { return b.device; })
      .def_prop_ro("dtype", [](const PyBuffer& b) { return dtype_name(b.handle.dtype); })
      .def_prop_ro("shape", [](const PyBuffer& b) { return shape_tuple(b.shape); })
      .def_prop_ro("size", [](const PyBuffer& b) { return b.handle.count; })
      .def_prop_ro("nbytes", [](const PyBuffer& b) { return b.handle.bytes(); })
      .def(
          "numpy", [](const PyBuffer& b) { return copy_out(b).result(std::nullopt); },
          "A new NumPy array with the buffer's contents (waits for the copy, and for the requests before it); bf16 "
          "buffers as ml_dtypes.bfloat16 arrays.")
      .def("numpy_async", &copy_out, "numpy() as an accel.Future.")
      .def(
          "copy_from",
          [](const PyBuffer& b, nb::handle array) {
            return copy_in(b, contiguous_array(array, numpy_dtype(b.handle.dtype)));
          },
          nb::arg("array"), "Copies an array of the buffer's size into it; returns an accel.Future.")
      .def(
          "export_to_processes",
          [](const PyBuffer& b) {
            const BufferHandle handle = b.use_on(b.device, "buffer");
            return to_text(wait_released(send_released([&] { return b.device.device.export_buffer(handle); })));
          },
          "Shares the buffer with other processes of the host (accel/device/process_sharing.hpp): answers text that "
          "accel.import_buffer takes in another process, which then uses this very memory. Freeing the buffer makes "
          "their next use raise accel.StaleHandle.")
      .def(
          "free", [](const PyBuffer& b) { wait_released(b.device.device.free(b.handle)); },
          "Frees the buffer now for every reference to it; their next use raises accel.StaleHandle.")
      .def("__repr__", [](const PyBuffer& b) {
        return fmt::format("accel.Buffer(shape={}, dtype={}, device={})", b.shape, dtype_name(b.handle.dtype),
                           b.device.device.name());
      });
  bind_interop(module, buffer);
  module.def(
      "import_buffer",
      [](const std::string& text, const PyDevice& device, std::optional<std::vector<std::int64_t>> shape) {
        device.check_open("accel.import_buffer");
        const ExportedBuffer exported = unwrap(parse_exported_buffer(text));
        std::vector<std::int64_t> dims = shape ? *shape : std::vector<std::int64_t>{std::int64_t(exported.count)};
        if (element_count(dims) != exported.count) {
          raise_status(invalid_argument(fmt::format("accel.import_buffer: shape {} holds {} elements; the buffer {}",
                                                    dims, element_count(dims), exported.count)));
        }
        return visit_dtype(exported.dtype, [&]<class T>(T) {
          Buffer<T> imported = wait_released(send_released([&] { return device.device.import_buffer<T>(exported); }));
          const BufferHandle handle = imported.handle();
          return PyBuffer{.device = device,
                          .owner = std::make_shared<const Buffer<T>>(std::move(imported)),
                          .handle = handle,
                          .shape = std::move(dims)};
        });
      },
      "text"_a, "device"_a, "shape"_a = nb::none(),
      "A buffer of `device` over the memory another process exported (Buffer.export_to_processes' text), checked "
      "against the exporter on every use: accel.StaleHandle once it was freed there or its process ended.");
}

}  // namespace accel::python
