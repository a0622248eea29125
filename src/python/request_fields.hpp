// Requests from keyword arguments: a family's request is bound by listing its fields once, each a Python name and the
// path of members it sets (nested structs flattened: Gemm's `shape.m` is `m`). The generic code converts each keyword
// by the member's C++ type — integers, floats, dtypes, enums (by name: a str, or a member of the accel enum of that
// name, a StrEnum), buffers (checked to be this device's, open; None for a null handle), arrays of up to three
// extents — and refuses unknown keywords and wrong types with accel.InvalidArgument naming them.
//
//   bind_request(device_class, "gemm", {member("m", &Gemm::shape, &GemmShape::m), member("a", &Gemm::a), ...});
//
// Adding a family is one such table per request, its enums' EnumNames, and export_enums<...>(module) so that Python
// has them as enums (python/accel/_enums.py).
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "python/bindings.hpp"
#include "python/futures.hpp"
#include "python/recording.hpp"

#include "accel/libs/blas/gemm.hpp"

namespace accel::python {

// A member type a family converts itself (requests.cpp): a specialisation with
//   static T convert(nb::handle value, std::string_view request, std::string_view name, const PyDevice& device);
template <class T>
struct FromPython;

// The names Python gives an enum and each of its values: specialised per enum (requests*.cpp),
//   static constexpr const char* python_name;   // the class in the accel package: "Transpose"
//   static constexpr std::array<std::pair<E, const char*>, N> values;
// Enums of different families that Python names alike (blas::Fill, solver::Fill) must have the same value names.
template <class E>
struct EnumNames;

[[noreturn]] inline void refuse_argument(std::string_view request, std::string_view name, std::string_view expected,
                                         nb::handle value) {
  raise_status(invalid_argument(fmt::format("{}: argument '{}' must be {}, not {}", request, name, expected,
                                            nb::cast<std::string>(nb::repr(value)))));
}

// The enumerator `value` names (a str, or a member of the accel StrEnum); InvalidArgument listing them otherwise.
template <class E>
E enum_from_python(nb::handle value, std::string_view request, std::string_view name) {
  std::vector<std::string> names;
  for (const auto& [member, member_name] : EnumNames<E>::values) {
    if (nb::isinstance<nb::str>(value) && nb::cast<std::string>(value) == member_name) return member;
    names.emplace_back(member_name);
  }
  refuse_argument(request, name, fmt::format("one of '{}'", fmt::join(names, "', '")), value);
}

template <class T>
inline constexpr bool is_int_array_v = false;
template <class I, std::size_t N>
inline constexpr bool is_int_array_v<std::array<I, N>> = std::is_integral_v<I>;

// A std::array of integers (extents, paddings, strides) from a sequence of at most its size; the elements not given
// keep `base`'s values (a field's are the member's C++ defaults: ConvShape's stride stays 1 where unset).
template <class T>
T int_array_from_python(nb::handle value, std::string_view request, std::string_view name, T base) {
  constexpr std::size_t kSize = std::tuple_size_v<T>;
  if (!nb::isinstance<nb::sequence>(value) || nb::isinstance<nb::str>(value) || nb::len(value) > kSize) {
    refuse_argument(request, name, fmt::format("a sequence of at most {} ints", kSize), value);
  }
  for (std::size_t i = 0; i < nb::len(value); ++i) {
    nb::handle element = value[i];
    if (!nb::isinstance<nb::int_>(element) || nb::isinstance<nb::bool_>(element)) {
      refuse_argument(request, name, fmt::format("a sequence of at most {} ints", kSize), value);
    }
    try {
      base[i] = nb::cast<typename T::value_type>(element);
    } catch (const std::exception&) {
      refuse_argument(request, name, "ints in range", value);
    }
  }
  return base;
}

template <class T>
T from_python(nb::handle value, std::string_view request, std::string_view name, const PyDevice& device) {
  auto wrong = [&](std::string_view expected) { refuse_argument(request, name, expected, value); };
  if constexpr (requires { FromPython<T>::convert(value, request, name, device); }) {
    return FromPython<T>::convert(value, request, name, device);
  } else if constexpr (std::is_same_v<T, BufferHandle>) {
    if (value.is_none()) return BufferHandle{};
    if (!nb::isinstance<PyBuffer>(value)) wrong("an accel.Buffer or None");
    return nb::cast<const PyBuffer&>(value).use_on(device, name);
  } else if constexpr (std::is_same_v<T, DType>) {
    return dtype_from_python(value);
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!nb::isinstance<nb::bool_>(value)) wrong("a bool");
    return nb::cast<bool>(value);
  } else if constexpr (std::is_enum_v<T>) {
    return enum_from_python<T>(value, request, name);
  } else if constexpr (std::is_integral_v<T>) {
    if (!nb::isinstance<nb::int_>(value) || nb::isinstance<nb::bool_>(value)) wrong("an int");
    try {
      return nb::cast<T>(value);
    } catch (const std::exception&) {
      refuse_argument(request, name,
                      fmt::format("an int in [{}, {}]", std::numeric_limits<T>::min(), std::numeric_limits<T>::max()),
                      value);
    }
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!nb::isinstance<nb::float_>(value) && !nb::isinstance<nb::int_>(value)) wrong("a number");
    return nb::cast<T>(value);
  } else if constexpr (is_int_array_v<T>) {
    return int_array_from_python<T>(value, request, name, T{});
  } else {
    static_assert(always_false_v<T>, "from_python: no conversion for this member type");
  }
}

template <class Request>
struct Field {
  std::string name;
  std::function<void(Request&, nb::handle, std::string_view, const PyDevice&)> set;
};

// A field whose member `access(request)` returns.
template <class Request, class Access>
Field<Request> field(std::string name, Access access) {
  using Member = std::remove_cvref_t<decltype(access(std::declval<Request&>()))>;
  return {name,
          [access, name](Request& request, nb::handle value, std::string_view request_name, const PyDevice& device) {
            if constexpr (is_int_array_v<Member>) {
              access(request) = int_array_from_python<Member>(value, request_name, name, access(request));
            } else {
              access(request) = from_python<Member>(value, request_name, name, device);
            }
          }};
}

// object.*first.*rest[0].*rest[1]...
template <class Object, class Member, class... Rest>
auto& member_at(Object& object, Member Object::*first, Rest... rest) {
  if constexpr (sizeof...(Rest) == 0) {
    return object.*first;
  } else {
    return member_at(object.*first, rest...);
  }
}

// A field setting a member of the request, or of a struct in it: member("m", &Gemm::shape, &GemmShape::m).
template <class Request, class Member, class... Rest>
Field<Request> member(std::string name, Member Request::*first, Rest... rest) {
  return field<Request>(
      std::move(name), [ first, rest... ](Request & request) -> auto& { return member_at(request, first, rest...); });
}

template <class Request>
struct RequestBinding {
  std::string name;  // the Device method's name
  std::vector<Field<Request>> fields;

  // The request the keywords (or a dict's items) describe, every unset member at its C++ default.
  Request build(const PyDevice& device, const nb::dict& arguments) const {
    Request request{};
    for (auto [key, value] : arguments) {
      const std::string key_name = nb::cast<std::string>(key);
      const Field<Request>* match = nullptr;
      for (const Field<Request>& candidate : fields) {
        if (candidate.name == key_name) match = &candidate;
      }
      if (match == nullptr) {
        std::vector<std::string> known;
        for (const Field<Request>& candidate : fields) known.push_back(candidate.name);
        raise_status(invalid_argument(
            fmt::format("{}: no argument '{}' (it takes {})", name, key_name, fmt::join(known, ", "))));
      }
      match->set(request, value, name, device);
    }
    return request;
  }

  [[nodiscard]] std::string doc() const {
    std::vector<std::string> names;
    for (const Field<Request>& candidate : fields) names.push_back(candidate.name);
    return fmt::format("Sends the {} request (keyword arguments: {}) and returns its accel.Future.", name,
                       fmt::join(names, ", "));
  }
};

// A member that is a struct of its own (sparse::Matrix), given from Python as a dict of its fields, which
// FromPython<S>::fields() lists as a request's are:
//   template <> struct FromPython<S> : FromDict<S> { static std::vector<Field<S>> fields(); };
template <class S>
struct FromDict {
  static S convert(nb::handle value, std::string_view request, std::string_view name, const PyDevice& device) {
    if (!nb::isinstance<nb::dict>(value)) refuse_argument(request, name, "a dict of its fields", value);
    const RequestBinding<S> binding{fmt::format("{}: argument '{}'", request, name), FromPython<S>::fields()};
    return binding.build(device, nb::borrow<nb::dict>(value));
  }
};

// -- Enums more than one family uses (GEMM, BLAS, solver, sparse: accel/libs/blas/gemm.hpp) --
template <>
struct EnumNames<MatrixOrder> {
  static constexpr const char* python_name = "MatrixOrder";
  static constexpr std::array values{std::pair{MatrixOrder::row_major, "row_major"},
                                     std::pair{MatrixOrder::column_major, "column_major"}};
};

template <>
struct EnumNames<Transpose> {
  static constexpr const char* python_name = "Transpose";
  static constexpr std::array values{std::pair{Transpose::none, "none"}, std::pair{Transpose::transpose, "transpose"}};
};

template <>
struct EnumNames<Activation> {
  static constexpr const char* python_name = "Activation";
  static constexpr std::array values{
      std::pair{Activation::identity, "identity"},   std::pair{Activation::relu, "relu"},
      std::pair{Activation::gelu_tanh, "gelu_tanh"}, std::pair{Activation::silu, "silu"},
      std::pair{Activation::gelu_erf, "gelu_erf"},   std::pair{Activation::sigmoid, "sigmoid"},
      std::pair{Activation::tanh, "tanh"},           std::pair{Activation::log1p_relu, "log1p_relu"}};
};

template <>
struct EnumNames<BiasVector> {
  static constexpr const char* python_name = "BiasVector";
  static constexpr std::array values{std::pair{BiasVector::none, "none"}, std::pair{BiasVector::per_row, "per_row"},
                                     std::pair{BiasVector::per_column, "per_column"},
                                     std::pair{BiasVector::per_channel, "per_channel"}};
};

// Device.<name>(**kwargs) -> Future for a request answering Done; inside a `with recording:` block of this thread
// for this device (recording.hpp), the request is recorded instead and the call returns None.
template <class Request>
void bind_request(nb::class_<PyDevice>& device_class, std::string name, std::vector<Field<Request>> fields) {
  // nanobind keeps the name and docstring pointers: they live as long as the module.
  static std::deque<std::string> texts;
  RequestBinding<Request> binding{std::move(name), std::move(fields)};
  const char* doc = texts.emplace_back(binding.doc()).c_str();
  const char* method = texts.emplace_back(binding.name).c_str();
  device_class.def(
      method,
      [binding = std::move(binding)](const PyDevice& device, nb::kwargs arguments) -> nb::object {
        Request request = binding.build(device, arguments);
        if (PyRecording* recording = active_recording(device)) {
          recording->record(std::move(request), arguments);
          return nb::none();
        }
        return nb::cast(make_done_future(send_released([&] { return device.device.ask(std::move(request)); })));
      },
      doc);
}

// Records each enum's Python name and value names in the module's `_enums` dict, from which python/accel/_enums.py
// makes the StrEnum classes. Two enums named alike must agree on their values (else Internal at import).
template <class... Enums>
void export_enums(nb::module_& module) {
  if (!nb::hasattr(module, "_enums")) module.attr("_enums") = nb::dict();
  nb::dict enums = nb::borrow<nb::dict>(module.attr("_enums"));
  auto add = [&]<class E>(std::type_identity<E>) {
    nb::list names;
    for (const auto& [value, value_name] : EnumNames<E>::values) names.append(nb::str(value_name));
    const char* python_name = EnumNames<E>::python_name;
    if (enums.contains(python_name) && !enums[python_name].equal(names)) {
      raise_status(internal_error(fmt::format("enum {} is exported twice with different values", python_name)));
    }
    enums[python_name] = names;
  };
  (add(std::type_identity<Enums>{}), ...);
}

}  // namespace accel::python
