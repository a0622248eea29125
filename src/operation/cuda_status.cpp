#include "operation/cuda_status.hpp"

#include <fmt/format.h>

namespace accel {

bool is_sticky(cudaError_t error) noexcept {
  switch (error) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorMisalignedAddress:
    case cudaErrorIllegalInstruction:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorDevicesUnavailable:
    case cudaErrorContextIsDestroyed:
    case cudaErrorUnknown: return true;
    default: return false;
  }
}

Status cuda_status(cudaError_t error, std::string_view what) {
  if (error == cudaSuccess) return Status();
  const std::string message = fmt::format("{}: {} ({})", what, cudaGetErrorString(error), cudaGetErrorName(error));
  if (is_sticky(error)) return Status(Code::context_lost, message, Source::cuda, error);
  cudaGetLastError();
  switch (error) {
    case cudaErrorMemoryAllocation: return Status(Code::resource_exhausted, message, Source::cuda, error);
    case cudaErrorInvalidValue:
    case cudaErrorInvalidDevicePointer:
    case cudaErrorInvalidConfiguration:
    case cudaErrorInvalidDevice: return Status(Code::invalid_argument, message, Source::cuda, error);
    case cudaErrorNotSupported: return Status(Code::not_supported, message, Source::cuda, error);
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorSystemNotReady:
    case cudaErrorInitializationError: return Status(Code::unavailable, message, Source::cuda, error);
    default: return Status(Code::internal, message, Source::cuda, error);
  }
}

}  // namespace accel
