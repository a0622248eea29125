// The DLPack ABI (dmlc/dlpack, include/dlpack/dlpack.h, version 1.1) as far as accel.Buffer's export and
// accel.from_dlpack need it: the structs are the ABI, declared here as that header does, so the module needs no copy
// of it. Both the versioned capsules ("dltensor_versioned", DLPack >= 1.0) and the legacy ones ("dltensor").
#pragma once

#include <cstdint>

namespace accel::python::dlpack {

// DLDeviceType values accel uses.
inline constexpr std::int32_t kCpu = 1;
inline constexpr std::int32_t kCuda = 2;
inline constexpr std::int32_t kCudaHost = 3;  // pinned host memory: the CPU reads it like any host memory
inline constexpr std::int32_t kCudaManaged = 13;

// DLManagedTensorVersioned::flags.
inline constexpr std::uint64_t kFlagReadOnly = 1ull << 0;
inline constexpr std::uint64_t kFlagIsCopied = 1ull << 1;

inline constexpr std::uint32_t kMajorVersion = 1;
inline constexpr std::uint32_t kMinorVersion = 1;

inline constexpr const char* kVersionedName = "dltensor_versioned";
inline constexpr const char* kUsedVersionedName = "used_dltensor_versioned";
inline constexpr const char* kLegacyName = "dltensor";
inline constexpr const char* kUsedLegacyName = "used_dltensor";

struct Device {
  std::int32_t device_type;
  std::int32_t device_id;
};

struct DataType {
  std::uint8_t code;  // 0 int, 1 uint, 2 float, 4 bfloat, 5 complex, 6 bool
  std::uint8_t bits;
  std::uint16_t lanes;
};

struct Tensor {
  void* data;
  Device device;
  std::int32_t ndim;
  DataType dtype;
  std::int64_t* shape;
  std::int64_t* strides;  // in elements; null: compact row-major
  std::uint64_t byte_offset;
};

struct ManagedTensor {
  Tensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(ManagedTensor* self);
};

struct PackVersion {
  std::uint32_t major;
  std::uint32_t minor;
};

struct ManagedTensorVersioned {
  PackVersion version;
  void* manager_ctx;
  void (*deleter)(ManagedTensorVersioned* self);
  std::uint64_t flags;
  Tensor dl_tensor;
};

}  // namespace accel::python::dlpack
