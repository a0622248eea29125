/// @file
/// accel::Status — an error value that costs one pointer when OK.
///
/// Every fallible call in accel returns a Status or a Result<T>; nothing throws across the async boundary.
/// A non-OK Status carries a Code (what went wrong, and so what the caller may do about it), a Source (which
/// layer or library reported it), the library's raw error code where there is one, and a message that names
/// what was wrong.
///
/// @code
///   accel::Status s = validate(request);
///   if (!s.ok()) return s;                       // or ACCEL_RETURN_IF_ERROR(validate(request));
///   if (s.code() == accel::Code::stale_handle) ...
/// @endcode
///
/// Why not std::error_code: it carries no message and no raw library code, and its categories are singletons
/// compared by address, which does not survive the process boundary that isolated devices cross.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace accel {

/// Prefer the most specific code. Each says whether retrying the same request can help.
enum class Code : std::uint8_t {
  ok = 0,  ///< no error
  /// The request itself is wrong (shape, dtype, size, alignment, null handle). Do not retry; fix the request.
  invalid_argument,
  /// The request is well-formed, but this device or library cannot do it (dtype on this backend, arch).
  /// Do not retry here; send it to another device or change the configuration.
  not_supported,
  /// The system is not in a state that allows the request (e.g. actor restarting with a bad factory).
  /// Fix the state first, then retry.
  failed_precondition,
  /// Out of memory, mailbox full, pool exhausted. Retry later or with less.
  resource_exhausted,
  /// Temporarily cannot serve (e.g. a worker is being replaced). Retry, with back-off.
  unavailable,
  /// The request was abandoned because its receiver stopped (shutdown, stop directive). Do not retry on
  /// the same actor; it will not come back.
  cancelled,
  /// A wait or request ran past its deadline. The request may still complete; retrying may duplicate work.
  deadline_exceeded,
  /// A buffer or other handle outlived what it named (freed, or its device context was rebuilt). Never
  /// retry with the same handle: allocate again.
  stale_handle,
  /// The device context is gone (sticky fault). Every pending request on it gets this. In-process devices
  /// never come back; isolated devices do, with new handles.
  context_lost,
  /// A bug or an unexpected failure (an exception escaped a handler, a library reported an impossible
  /// state). Supervisors restart on this by default.
  internal,
};
/// The number of codes, for tables indexed by Code.
inline constexpr int kCodeCount = static_cast<int>(Code::internal) + 1;

/// Which layer or library reported the error; `raw_code` is that library's own code.
enum class Source : std::uint8_t {
  runtime = 0,
  os,
  cuda,
  cublas,
  cudnn,
  cufft,
  curand,
  cusolver,
  cusparse,
  cutensor,
  nvrtc,
  nccl,
  cutlass,
  openblas,
};
/// The number of sources, for tables indexed by Source.
inline constexpr int kSourceCount = static_cast<int>(Source::openblas) + 1;

/// The code's name, as Status::to_string prints it.
[[nodiscard]] std::string_view to_string(Code code) noexcept;
/// The source's name, as Status::to_string prints it.
[[nodiscard]] std::string_view to_string(Source source) noexcept;

/// An error value that costs one pointer when OK: a Code, a Source, the library's raw code and a message.
class [[nodiscard]] Status {
 public:
  // -- construction ----------------------------------------------------------
  Status() noexcept = default;  ///< OK
  /// A non-OK status (an `ok` code makes an OK one, dropping the message).
  Status(Code code, std::string message, Source source = Source::runtime, std::int64_t raw_code = 0);

  /// Copies the error (one allocation), or OK.
  Status(const Status& other);
  /// Copies the error (one allocation), or OK.
  Status& operator=(const Status& other);
  /// Moves without allocating.
  Status(Status&&) noexcept = default;
  /// Moves without allocating.
  Status& operator=(Status&&) noexcept = default;
  ~Status() = default;

  // -- observers ---------------------------------------------------------------
  /// Whether this is OK (no error).
  [[nodiscard]] bool ok() const noexcept { return rep_ == nullptr; }
  /// What went wrong, and so what the caller may do; Code::ok for OK.
  [[nodiscard]] Code code() const noexcept { return rep_ ? rep_->code : Code::ok; }
  /// Which layer or library reported the error; runtime for OK.
  [[nodiscard]] Source source() const noexcept { return rep_ ? rep_->source : Source::runtime; }
  /// That library's own error code; 0 for OK or where there is none.
  [[nodiscard]] std::int64_t raw_code() const noexcept { return rep_ ? rep_->raw_code : 0; }
  /// What was wrong; empty for OK.
  [[nodiscard]] std::string_view message() const noexcept {
    return rep_ ? std::string_view(rep_->message) : std::string_view();
  }

  /// "stale_handle: buffer #3 was freed" or "internal [cublas 14]: ...".
  [[nodiscard]] std::string to_string() const;

  /// Returns a copy whose message is prefixed with `context: `; OK stays OK.
  [[nodiscard]] Status with_context(std::string_view context) const;

  /// Keeps the first error: an OK status takes `other`, an error keeps itself.
  void update(const Status& other);

  /// Equal in code, source, raw code and message (all OK statuses are equal).
  friend bool operator==(const Status& a, const Status& b) noexcept;

 private:
  struct Rep {
    Code code;
    Source source;
    std::int64_t raw_code;
    std::string message;
  };
  std::unique_ptr<Rep> rep_;
};

// -- factories: one per code, so call sites stay short -------------------------
/// Code::invalid_argument with `message`.
Status invalid_argument(std::string message);
/// Code::not_supported with `message`.
Status not_supported(std::string message);
/// Code::failed_precondition with `message`.
Status failed_precondition(std::string message);
/// Code::resource_exhausted with `message`.
Status resource_exhausted(std::string message);
/// Code::unavailable with `message`.
Status unavailable(std::string message);
/// Code::cancelled with `message`.
Status cancelled(std::string message);
/// Code::deadline_exceeded with `message`.
Status deadline_exceeded(std::string message);
/// Code::stale_handle with `message`.
Status stale_handle(std::string message);
/// Code::context_lost with `message`.
Status context_lost(std::string message);
/// Code::internal with `message`.
Status internal_error(std::string message);

}  // namespace accel

/// Returns from the enclosing function if `expr` (a Status) is not OK.
#define ACCEL_RETURN_IF_ERROR(expr)                                                        \
  do {                                                                                     \
    if (::accel::Status accel_status_ = (expr); !accel_status_.ok()) return accel_status_; \
  } while (false)
