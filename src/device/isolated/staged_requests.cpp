#include "device/isolated/staged_requests.hpp"

#include <string>

#include "device/isolated/wire.hpp"

namespace accel::device::isolated {
namespace {

constexpr std::uint64_t kMaxItems = 1u << 20;  // bindings, headers, arguments, groups: more is a damaged encoding

// Encodings grow as they are written (WireWriter fills a fixed slot); strings as WireWriter writes them.
class Writer {
 public:
  template <class T>
  void pod(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto* bytes = reinterpret_cast<const std::byte*>(&value);
    out_.insert(out_.end(), bytes, bytes + sizeof value);
  }
  template <class T>
  void pods(const std::vector<T>& values) {
    pod(static_cast<std::uint64_t>(values.size()));
    for (const T& value : values) pod(value);
  }
  void bytes(std::span<const std::byte> data) {
    pod(static_cast<std::uint64_t>(data.size()));
    out_.insert(out_.end(), data.begin(), data.end());
  }
  void string(const std::string& text) {
    pod(static_cast<std::uint32_t>(text.size()));
    const auto data = std::as_bytes(std::span(text.data(), text.size()));
    out_.insert(out_.end(), data.begin(), data.end());
  }
  std::vector<std::byte> take() { return std::move(out_); }

 private:
  std::vector<std::byte> out_;
};

// WireReader, plus the counted lists and byte strings of Writer, with counts bounded before anything is sized.
class Reader : public WireReader {
 public:
  using WireReader::WireReader;
  bool count(std::uint64_t& n, std::size_t item_bytes) {
    return pod(n) && n <= kMaxItems && n * item_bytes <= remaining();
  }
  template <class T>
  bool pods(std::vector<T>& values) {
    std::uint64_t n = 0;
    if (!count(n, sizeof(T))) return false;
    values.resize(n);
    for (T& value : values)
      if (!pod(value)) return false;
    return true;
  }
  bool bytes(std::span<const std::byte>& data) {
    std::uint64_t n = 0;
    return pod(n) && view(data, n);
  }
  [[nodiscard]] bool finished() const noexcept { return remaining() == 0; }
};

Status damaged(std::string_view what) {
  return internal_error(std::string("the staged encoding of a ") + std::string(what) + " request is damaged");
}

}  // namespace

std::vector<std::byte> encode_staged(const RunGraph& request) {
  Writer out;
  out.pods(request.bindings);
  out.bytes(request.graph->signature().bytes);
  return out.take();
}

Result<RunGraph> decode_staged(std::span<const std::byte> bytes, std::type_identity<RunGraph>) {
  Reader in(bytes);
  RunGraph run;
  std::span<const std::byte> graph;
  if (!in.pods(run.bindings) || !in.bytes(graph) || !in.finished()) return damaged(RunGraph::kName);
  ACCEL_ASSIGN_OR_RETURN(run.graph, dnn::Graph::decode(graph));
  return run;
}

std::vector<std::byte> encode_staged(const LaunchKernel& request) {
  Writer out;
  const jit::Program& program = *request.program;
  out.string(program.name);
  out.string(program.source);
  out.pod(static_cast<std::uint64_t>(program.headers.size()));
  for (const jit::Header& header : program.headers) {
    out.string(header.name);
    out.string(header.contents);
  }
  out.pod(static_cast<std::uint64_t>(program.options.size()));
  for (const std::string& option : program.options) out.string(option);
  out.pod(static_cast<std::uint64_t>(program.name_expressions.size()));
  for (const std::string& expression : program.name_expressions) out.string(expression);
  out.pod(program.code);
  out.string(request.kernel);
  out.pod(request.grid);
  out.pod(request.block);
  out.pod(request.shared_memory_bytes);
  out.pods(request.args);
  return out.take();
}

Result<LaunchKernel> decode_staged(std::span<const std::byte> bytes, std::type_identity<LaunchKernel>) {
  Reader in(bytes);
  auto program = std::make_shared<jit::Program>();
  LaunchKernel launch;
  auto strings = [&](std::vector<std::string>& list) {
    std::uint64_t n = 0;
    if (!in.count(n, sizeof(std::uint32_t))) return false;
    list.resize(n);
    for (std::string& text : list)
      if (!in.string(text)) return false;
    return true;
  };
  std::uint64_t headers = 0;
  bool ok = in.string(program->name) && in.string(program->source) && in.count(headers, 2 * sizeof(std::uint32_t));
  if (ok) {
    program->headers.resize(headers);
    for (jit::Header& header : program->headers) ok = ok && in.string(header.name) && in.string(header.contents);
  }
  ok = ok && strings(program->options) && strings(program->name_expressions) && in.pod(program->code) &&
       in.string(launch.kernel) && in.pod(launch.grid) && in.pod(launch.block) && in.pod(launch.shared_memory_bytes) &&
       in.pods(launch.args) && in.finished();
  if (!ok || (program->code != jit::CodeKind::cubin && program->code != jit::CodeKind::ptx)) {
    return damaged(LaunchKernel::kName);
  }
  for (const KernelArg& arg : launch.args) {
    if (arg.kind > KernelArg::Kind::f64 || arg.access > ArgAccess::read_write) return damaged(LaunchKernel::kName);
  }
  launch.program = std::move(program);
  return launch;
}

std::vector<std::byte> encode_staged(const CutlassGroupedGemm& request) {
  Writer out;
  out.pod(request.input);
  out.pod(request.output);
  out.pod(request.layout_a);
  out.pod(request.layout_b);
  out.pod(request.layout_c);
  out.pods(request.groups);
  out.pod(request.alpha);
  out.pod(request.beta);
  out.pod(request.tile);
  out.pod(request.when_compiling);
  return out.take();
}

Result<CutlassGroupedGemm> decode_staged(std::span<const std::byte> bytes, std::type_identity<CutlassGroupedGemm>) {
  Reader in(bytes);
  CutlassGroupedGemm grouped;
  const bool ok = in.pod(grouped.input) && in.pod(grouped.output) && in.pod(grouped.layout_a) &&
                  in.pod(grouped.layout_b) && in.pod(grouped.layout_c) && in.pods(grouped.groups) &&
                  in.pod(grouped.alpha) && in.pod(grouped.beta) && in.pod(grouped.tile) &&
                  in.pod(grouped.when_compiling) && in.finished();
  if (!ok) return damaged(CutlassGroupedGemm::kName);
  return grouped;
}

}  // namespace accel::device::isolated
