#include "jit/nvrtc_compiler.hpp"

#include <fmt/format.h>
#include <nvrtc.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <utility>

#include "accel/core/byte_codec.hpp"
#include "operation/nvrtc_library.hpp"

namespace accel::jit {
namespace {

// The options accel sets itself: the architecture follows from the device, so a program that names one would
// either contradict it or be silently overridden.
constexpr std::array<std::string_view, 4> kArchitectureOptions = {"-arch", "--gpu-architecture", "-code", "--gpu-code"};
// Starts the key, so that keys of another layout (or of another compiler's programs) never equal these.
constexpr std::string_view kKeyTag = "accel.jit.nvrtc.key/1";

// Every variable-length field is prefixed by its u64 length (ByteWriter::bytes), so that no two different field
// sequences produce the same bytes.
void text(ByteWriter& out, std::string_view value) { out.bytes(std::as_bytes(std::span(value.data(), value.size()))); }

Status nvrtc_error(const NvrtcApi& nvrtc, nvrtcResult result, std::string_view program, std::string_view call) {
  Code code = Code::internal;
  switch (result) {
    case NVRTC_ERROR_OUT_OF_MEMORY: code = Code::resource_exhausted; break;
    case NVRTC_ERROR_INVALID_INPUT:
    case NVRTC_ERROR_INVALID_OPTION:
    case NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID: code = Code::invalid_argument; break;
    default: break;
  }
  return Status(code, fmt::format("{}: {} failed: {}", program, call, nvrtc.nvrtcGetErrorString(result)), Source::nvrtc,
                result);
}

class ProgramHandle {
 public:
  explicit ProgramHandle(const NvrtcApi& nvrtc) : nvrtc_(nvrtc) {}
  ProgramHandle(const ProgramHandle&) = delete;
  ProgramHandle& operator=(const ProgramHandle&) = delete;
  ~ProgramHandle() {
    if (program_ != nullptr) nvrtc_.nvrtcDestroyProgram(&program_);
  }
  nvrtcProgram* out() noexcept { return &program_; }
  [[nodiscard]] nvrtcProgram get() const noexcept { return program_; }

 private:
  const NvrtcApi& nvrtc_;
  nvrtcProgram program_ = nullptr;
};

std::string program_log(const NvrtcApi& nvrtc, nvrtcProgram program) {
  std::size_t size = 0;
  if (nvrtc.nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size == 0) return {};
  std::string log(size, '\0');
  if (nvrtc.nvrtcGetProgramLog(program, log.data()) != NVRTC_SUCCESS) return {};
  // The size counts the terminating NUL.
  while (!log.empty() && log.back() == '\0') log.pop_back();
  return log;
}

// NVRTC's supported architectures, ascending (compute capabilities as major * 10 + minor).
const std::vector<int>& supported_architectures(const NvrtcApi& nvrtc) {
  static const std::vector<int> archs = [&nvrtc] {
    int count = 0;
    if (nvrtc.nvrtcGetNumSupportedArchs(&count) != NVRTC_SUCCESS || count <= 0) return std::vector<int>{};
    std::vector<int> out(static_cast<std::size_t>(count));
    if (nvrtc.nvrtcGetSupportedArchs(out.data()) != NVRTC_SUCCESS) return std::vector<int>{};
    return out;
  }();
  return archs;
}

Status check_options(const NvrtcApi& nvrtc, const Program& program, int compute_capability) {
  for (const std::string& option : program.options) {
    for (std::string_view arch : kArchitectureOptions) {
      if (option.starts_with(arch)) {
        return invalid_argument(fmt::format(
            "{}: option '{}' sets the architecture, which accel chooses from the device (compute capability {})",
            program.name, option, compute_capability));
      }
    }
  }
  if (compute_capability <= 0) {
    return invalid_argument(fmt::format("{}: compute capability {} (expected major * 10 + minor, e.g. 90)",
                                        program.name, compute_capability));
  }
  // An empty list means NVRTC could not say; its compile then reports an unknown architecture itself.
  const std::vector<int>& archs = supported_architectures(nvrtc);
  if (!archs.empty() && !std::ranges::binary_search(archs, compute_capability)) {
    return not_supported(fmt::format("{}: {} cannot compile for sm_{} (it supports sm_{} to sm_{})", program.name,
                                     nvrtc_version(), compute_capability, archs.front(), archs.back()));
  }
  return Status();
}

}  // namespace

std::string nvrtc_version() {
  static const std::string version = [] {
    const Result<const NvrtcApi*> nvrtc = nvrtc_api();
    if (!nvrtc.ok()) return std::string("NVRTC unavailable");
    int major = 0;
    int minor = 0;
    if ((*nvrtc)->nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return std::string("NVRTC unknown");
    return fmt::format("NVRTC {}.{}", major, minor);
  }();
  return version;
}

Result<CompiledProgram> compile_with_nvrtc(const Program& program, int compute_capability) {
  const Result<const NvrtcApi*> loaded = nvrtc_api();
  if (!loaded.ok()) return loaded.status().with_context(program.name);
  const NvrtcApi& nvrtc = **loaded;
  ACCEL_RETURN_IF_ERROR(check_options(nvrtc, program, compute_capability));

  std::vector<const char*> header_names;
  std::vector<const char*> header_contents;
  for (const Header& header : program.headers) {
    header_names.push_back(header.name.c_str());
    header_contents.push_back(header.contents.c_str());
  }
  ProgramHandle handle(nvrtc);
  if (const nvrtcResult r = nvrtc.nvrtcCreateProgram(handle.out(), program.source.c_str(), program.name.c_str(),
                                                     static_cast<int>(program.headers.size()), header_contents.data(),
                                                     header_names.data());
      r != NVRTC_SUCCESS) {
    return nvrtc_error(nvrtc, r, program.name, "nvrtcCreateProgram");
  }
  for (const std::string& expression : program.name_expressions) {
    if (const nvrtcResult r = nvrtc.nvrtcAddNameExpression(handle.get(), expression.c_str()); r != NVRTC_SUCCESS) {
      return nvrtc_error(nvrtc, r, program.name, fmt::format("nvrtcAddNameExpression({})", expression));
    }
  }

  const std::string arch =
      fmt::format("--gpu-architecture={}_{}", program.code == CodeKind::cubin ? "sm" : "compute", compute_capability);
  std::vector<const char*> options{arch.c_str()};
  // NVRTC's default dialect has changed between releases; pinning it keeps a program's meaning independent of
  // the NVRTC it meets. A program that names its own dialect keeps it.
  const bool names_dialect = std::ranges::any_of(
      program.options, [](const std::string& o) { return o.starts_with("-std") || o.starts_with("--std"); });
  if (!names_dialect) options.push_back("-std=c++17");
  for (const std::string& option : program.options) options.push_back(option.c_str());

  const nvrtcResult compiled =
      nvrtc.nvrtcCompileProgram(handle.get(), static_cast<int>(options.size()), options.data());
  std::string log = program_log(nvrtc, handle.get());
  if (compiled == NVRTC_ERROR_COMPILATION || compiled == NVRTC_ERROR_INVALID_OPTION) {
    return Status(Code::invalid_argument, fmt::format("{}: NVRTC compile failed:\n{}", program.name, log),
                  Source::nvrtc, compiled);
  }
  if (compiled != NVRTC_SUCCESS) return nvrtc_error(nvrtc, compiled, program.name, "nvrtcCompileProgram");

  CompiledProgram out{.kind = program.code, .log = std::move(log)};
  for (const std::string& expression : program.name_expressions) {
    const char* lowered = nullptr;
    if (const nvrtcResult r = nvrtc.nvrtcGetLoweredName(handle.get(), expression.c_str(), &lowered);
        r != NVRTC_SUCCESS) {
      return nvrtc_error(nvrtc, r, program.name, fmt::format("nvrtcGetLoweredName({})", expression));
    }
    out.lowered_names.emplace_back(expression, lowered);
  }

  std::size_t size = 0;
  if (program.code == CodeKind::cubin) {
    if (const nvrtcResult r = nvrtc.nvrtcGetCUBINSize(handle.get(), &size); r != NVRTC_SUCCESS) {
      return nvrtc_error(nvrtc, r, program.name, "nvrtcGetCUBINSize");
    }
    out.code.resize(size);
    if (const nvrtcResult r = nvrtc.nvrtcGetCUBIN(handle.get(), reinterpret_cast<char*>(out.code.data()));
        r != NVRTC_SUCCESS) {
      return nvrtc_error(nvrtc, r, program.name, "nvrtcGetCUBIN");
    }
  } else {
    // The size includes the terminating NUL, which is kept: the driver loads PTX as a C string.
    if (const nvrtcResult r = nvrtc.nvrtcGetPTXSize(handle.get(), &size); r != NVRTC_SUCCESS) {
      return nvrtc_error(nvrtc, r, program.name, "nvrtcGetPTXSize");
    }
    out.code.resize(size);
    if (const nvrtcResult r = nvrtc.nvrtcGetPTX(handle.get(), reinterpret_cast<char*>(out.code.data()));
        r != NVRTC_SUCCESS) {
      return nvrtc_error(nvrtc, r, program.name, "nvrtcGetPTX");
    }
  }
  return out;
}

std::vector<std::byte> program_key(const Program& program, int compute_capability) {
  ByteWriter key;
  text(key, kKeyTag);
  // The name is the file name NVRTC gives the source: it appears in __FILE__ and in the binary's line info.
  text(key, program.name);
  text(key, program.source);
  key.pod(static_cast<std::uint64_t>(program.headers.size()));
  for (const Header& header : program.headers) {
    text(key, header.name);
    text(key, header.contents);
  }
  key.pod(static_cast<std::uint64_t>(program.options.size()));
  for (const std::string& option : program.options) text(key, option);
  key.pod(static_cast<std::uint64_t>(program.name_expressions.size()));
  for (const std::string& expression : program.name_expressions) text(key, expression);
  key.pod(static_cast<std::uint8_t>(program.code));
  key.pod(static_cast<std::uint32_t>(compute_capability));
  text(key, nvrtc_version());
  return key.take();
}

}  // namespace accel::jit
