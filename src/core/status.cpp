#include "accel/core/status.hpp"

#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "accel/core/result.hpp"

namespace accel {

std::string_view to_string(Code code) noexcept {
  switch (code) {
    case Code::ok: return "ok";
    case Code::invalid_argument: return "invalid_argument";
    case Code::not_supported: return "not_supported";
    case Code::failed_precondition: return "failed_precondition";
    case Code::resource_exhausted: return "resource_exhausted";
    case Code::unavailable: return "unavailable";
    case Code::cancelled: return "cancelled";
    case Code::deadline_exceeded: return "deadline_exceeded";
    case Code::stale_handle: return "stale_handle";
    case Code::context_lost: return "context_lost";
    case Code::internal: return "internal";
  }
  return "unknown_code";
}

std::string_view to_string(Source source) noexcept {
  switch (source) {
    case Source::runtime: return "runtime";
    case Source::os: return "os";
    case Source::cuda: return "cuda";
    case Source::cublas: return "cublas";
    case Source::cudnn: return "cudnn";
    case Source::cufft: return "cufft";
    case Source::curand: return "curand";
    case Source::cusolver: return "cusolver";
    case Source::cusparse: return "cusparse";
    case Source::cutensor: return "cutensor";
    case Source::nvrtc: return "nvrtc";
    case Source::nccl: return "nccl";
    case Source::cutlass: return "cutlass";
    case Source::openblas: return "openblas";
  }
  return "unknown_source";
}

Status::Status(Code code, std::string message, Source source, std::int64_t raw_code) {
  if (code == Code::ok) return;
  rep_ = std::make_unique<Rep>(Rep{code, source, raw_code, std::move(message)});
}

Status::Status(const Status& other) : rep_(other.rep_ ? std::make_unique<Rep>(*other.rep_) : nullptr) {}

Status& Status::operator=(const Status& other) {
  if (this != &other) rep_ = other.rep_ ? std::make_unique<Rep>(*other.rep_) : nullptr;
  return *this;
}

std::string Status::to_string() const {
  if (ok()) return "ok";
  if (rep_->source == Source::runtime && rep_->raw_code == 0) {
    return fmt::format("{}: {}", accel::to_string(rep_->code), rep_->message);
  }
  if (rep_->raw_code == 0) {
    return fmt::format("{} [{}]: {}", accel::to_string(rep_->code), accel::to_string(rep_->source), rep_->message);
  }
  return fmt::format("{} [{} {}]: {}", accel::to_string(rep_->code), accel::to_string(rep_->source), rep_->raw_code,
                     rep_->message);
}

Status Status::with_context(std::string_view context) const {
  if (ok()) return Status();
  return Status(rep_->code, fmt::format("{}: {}", context, rep_->message), rep_->source, rep_->raw_code);
}

void Status::update(const Status& other) {
  if (ok() && !other.ok()) *this = other;
}

bool operator==(const Status& a, const Status& b) noexcept {
  if (a.ok() || b.ok()) return a.ok() == b.ok();
  return a.rep_->code == b.rep_->code && a.rep_->source == b.rep_->source && a.rep_->raw_code == b.rep_->raw_code &&
         a.rep_->message == b.rep_->message;
}

Status invalid_argument(std::string message) { return Status(Code::invalid_argument, std::move(message)); }
Status not_supported(std::string message) { return Status(Code::not_supported, std::move(message)); }
Status failed_precondition(std::string message) { return Status(Code::failed_precondition, std::move(message)); }
Status resource_exhausted(std::string message) { return Status(Code::resource_exhausted, std::move(message)); }
Status unavailable(std::string message) { return Status(Code::unavailable, std::move(message)); }
Status cancelled(std::string message) { return Status(Code::cancelled, std::move(message)); }
Status deadline_exceeded(std::string message) { return Status(Code::deadline_exceeded, std::move(message)); }
Status stale_handle(std::string message) { return Status(Code::stale_handle, std::move(message)); }
Status context_lost(std::string message) { return Status(Code::context_lost, std::move(message)); }
Status internal_error(std::string message) { return Status(Code::internal, std::move(message)); }

namespace detail {
void abort_with_status(const Status& status) {
  std::fprintf(stderr, "accel: value() called on an error Result: %s\n", status.to_string().c_str());
  std::abort();
}
}  // namespace detail

}  // namespace accel
