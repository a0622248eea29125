/// @file
/// accel::Result<T> — a value or a non-OK Status, never both, never an OK status without a value.
///
/// @code
///   accel::Result<BufferHandle> r = table.allocate(...);
///   if (!r) return r.status();
///   use(*r);
/// @endcode
///
/// @code
///   ACCEL_ASSIGN_OR_RETURN(auto view, table.resolve(handle));
/// @endcode
///
/// Constructing a Result from an OK Status is a bug: it is turned into an `internal` error that says so,
/// rather than a Result that claims success and holds nothing.
#pragma once

#include <cstdlib>
#include <type_traits>
#include <utility>
#include <variant>

#include "accel/core/status.hpp"

namespace accel {

namespace detail {
[[noreturn]] void abort_with_status(const Status& status);
}  // namespace detail

/// The value of a request that has no payload.
struct Done {
  /// Every Done equals every other.
  friend bool operator==(Done, Done) noexcept { return true; }
};

/// A value or a non-OK Status, never both, never an OK status without a value (see the file's description).
template <class T>
class [[nodiscard]] Result {
  static_assert(!std::is_same_v<std::remove_cvref_t<T>, Status>, "Result<Status> makes no sense; use Status");
  static_assert(!std::is_reference_v<T>, "Result holds values");

 public:
  using value_type = T;  ///< The value's type.

  // -- construction ----------------------------------------------------------
  /// A Result holding a copy of `value`.
  Result(const T& value) : data_(std::in_place_index<1>, value) {}  // NOLINT(google-explicit-constructor)
  /// A Result holding `value`.
  Result(T&& value) : data_(std::in_place_index<1>, std::move(value)) {}  // NOLINT(google-explicit-constructor)
  /// A Result holding the error `status` (an OK status becomes an internal error: a Result needs a value then).
  Result(Status status) : data_(std::in_place_index<0>, std::move(status)) {  // NOLINT(google-explicit-constructor)
    if (std::get<0>(data_).ok()) data_ = internal_error("Result constructed from an OK status without a value");
  }
  /// From anything T converts from (a unique_ptr<Derived> for a Result<unique_ptr<Base>>, say).
  template <class U>
  requires(!std::is_same_v<std::remove_cvref_t<U>, T> && !std::is_same_v<std::remove_cvref_t<U>, Status> &&
           !std::is_same_v<std::remove_cvref_t<U>, Result> && std::is_convertible_v<U&&, T>) Result(U&& value)
      : data_(std::in_place_index<1>, std::forward<U>(value)) {}  // NOLINT(google-explicit-constructor)
  /// A Result whose value is constructed in place from `args`.
  template <class... Args>
  explicit Result(std::in_place_t, Args&&... args) : data_(std::in_place_index<1>, std::forward<Args>(args)...) {}

  // -- observers ---------------------------------------------------------------
  /// Whether a value is held.
  [[nodiscard]] bool ok() const noexcept { return data_.index() == 1; }
  /// Whether a value is held.
  explicit operator bool() const noexcept { return ok(); }

  /// The error, or an OK Status when a value is held.
  [[nodiscard]] Status status() const { return ok() ? Status() : std::get<0>(data_); }
  /// The error's code, or Code::ok when a value is held.
  [[nodiscard]] Code code() const noexcept { return ok() ? Code::ok : std::get<0>(data_).code(); }

  /// Using the value of an error Result is a programming error: it aborts with the status printed.
  [[nodiscard]] T& value() & { return checked(), std::get<1>(data_); }
  /// The value; aborts when there is none.
  [[nodiscard]] const T& value() const& { return checked(), std::get<1>(data_); }
  /// The value, moved out; aborts when there is none.
  [[nodiscard]] T&& value() && { return checked(), std::get<1>(std::move(data_)); }
  /// The value; aborts when there is none.
  T& operator*() & { return value(); }
  /// The value; aborts when there is none.
  const T& operator*() const& { return value(); }
  /// The value, moved out; aborts when there is none.
  T&& operator*() && { return std::move(*this).value(); }
  /// The value's members; aborts when there is none.
  T* operator->() { return &value(); }
  /// The value's members; aborts when there is none.
  const T* operator->() const { return &value(); }

  /// The value, or `fallback` when there is none.
  template <class U>
  [[nodiscard]] T value_or(U&& fallback) const& {
    return ok() ? std::get<1>(data_) : static_cast<T>(std::forward<U>(fallback));
  }

 private:
  void checked() const {
    if (!ok()) detail::abort_with_status(std::get<0>(data_));
  }

  std::variant<Status, T> data_;
};

template <class T>
struct is_result : std::false_type {};
template <class T>
struct is_result<Result<T>> : std::true_type {};
/// Whether T is a Result (of any value type).
template <class T>
inline constexpr bool is_result_v = is_result<std::remove_cvref_t<T>>::value;

}  // namespace accel

#define ACCEL_CONCAT_INNER_(a, b) a##b
#define ACCEL_CONCAT_(a, b) ACCEL_CONCAT_INNER_(a, b)

/// Declares `lhs` from the value of `rexpr` (a Result), or returns its error from the enclosing function.
#define ACCEL_ASSIGN_OR_RETURN(lhs, rexpr) \
  ACCEL_ASSIGN_OR_RETURN_IMPL_(ACCEL_CONCAT_(accel_result_, __LINE__), lhs, rexpr)
#define ACCEL_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                                 \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()
