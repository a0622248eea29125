// embed::SafetensorsFile: a model's weights file (the input, written to a temporary file), opened and checked,
// then every tensor it names read out as a model load reads it (f32, f16 and bf16 conversions).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "embed/safetensors_file.hpp"
#include "temporary_directory.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace accel;
  static fuzzing::TemporaryDirectory directory("accel-fuzz-safetensors");
  const std::filesystem::path file = directory.path() / "model.safetensors";
  fuzzing::write_file(file, std::span<const std::byte>(reinterpret_cast<const std::byte*>(data), size));
  Result<embed::SafetensorsFile> opened = embed::SafetensorsFile::open(file);
  if (!opened.ok()) return 0;
  for (std::string_view name : opened->names()) {
    (void)opened->tensor(name);
    (void)opened->to_f32(name);
    (void)opened->to_16bit(name, DType::f16);
    (void)opened->to_16bit(name, DType::bf16);
  }
  return 0;
}
