// Requests from keyword arguments: a family's request is bound by listing its fields once, each a Python name and the
// member it sets (nested structs flattened: Gemm's `shape.m` is `m`). The generic code converts each keyword by the
// member's C++ type — integers, floats, dtypes, enums (by name), buffers (checked to be this device's, open), arrays
// of up to three extents — and refuses unknown keywords and wrong types with accel.InvalidArgument naming them.
//
//   RequestBinding<Gemm>{"gemm", {field("m", [](Gemm& r) -> auto& { return r.shape.m; }), ...}}
//
// Adding a family is one such table and one line in bind_requests (requests.cpp).
#pragma once

#include <array>
#include <cstdint>
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

namespace accel::python {

// A member type a family converts itself (requests.cpp): a specialisation with
//   static T convert(nb::handle value, std::string_view request, std::string_view name, const PyDevice& device);
template <class T>
struct FromPython;

// The names Python gives each value of an enum: specialised per enum (requests.cpp).
template <class E>
struct EnumNames;  // static constexpr std::array<std::pair<E, const char*>, N> values;

[[noreturn]] inline void refuse_argument(std::string_view request, std::string_view name, std::string_view expected,
                                         nb::handle value) {
  raise_status(invalid_argument(fmt::format("{}: argument '{}' must be {}, not {}", request, name, expected,
                                            nb::cast<std::string>(nb::repr(value)))));
}

template <class T>
T from_python(nb::handle value, std::string_view request, std::string_view name, const PyDevice& device) {
  auto wrong = [&](std::string_view expected) { refuse_argument(request, name, expected, value); };
  if constexpr (requires { FromPython<T>::convert(value, request, name, device); }) {
    return FromPython<T>::convert(value, request, name, device);
  } else if constexpr (std::is_same_v<T, BufferHandle>) {
    if (!nb::isinstance<PyBuffer>(value)) wrong("an accel.Buffer");
    return nb::cast<const PyBuffer&>(value).use_on(device, name);
  } else if constexpr (std::is_same_v<T, DType>) {
    return dtype_from_python(value);
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!nb::isinstance<nb::bool_>(value)) wrong("a bool");
    return nb::cast<bool>(value);
  } else if constexpr (std::is_enum_v<T>) {
    std::vector<std::string> names;
    for (const auto& [member, member_name] : EnumNames<T>::values) {
      if (nb::isinstance<nb::str>(value) && nb::cast<std::string>(value) == member_name) return member;
      names.emplace_back(member_name);
    }
    refuse_argument(request, name, fmt::format("one of '{}'", fmt::join(names, "', '")), value);
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
  } else if constexpr (std::is_same_v<T, std::array<std::int64_t, 3>>) {
    if (!nb::isinstance<nb::sequence>(value) || nb::len(value) > 3) wrong("a sequence of at most 3 ints");
    T extents{};
    for (std::size_t i = 0; i < nb::len(value); ++i) {
      extents[i] = from_python<std::int64_t>(value[i], request, name, device);
    }
    return extents;
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
            access(request) = from_python<Member>(value, request_name, name, device);
          }};
}

template <class Request>
struct RequestBinding {
  std::string name;  // the Device method's name
  std::vector<Field<Request>> fields;

  // The request the keywords describe, every unset member at its C++ default.
  Request build(const PyDevice& device, const nb::kwargs& arguments) const {
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

}  // namespace accel::python
