// Writes the seed corpora of the fuzz targets whose inputs are binary (scripts/fuzz-corpus runs it; the text
// targets' are fuzz/make_text_corpus.py's): a few valid inputs of each, made by the very encoders whose decoders are
// fuzzed, so that a change of an encoding is a change of the seeds. The output is the same bytes on every run, since
// CI compares it with the committed corpus (scripts/fuzz-corpus --check).
//
// usage: make_fuzz_corpus <corpus directory>
#include <xxhash.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "accel/dnn/convolution.hpp"
#include "cache/disk_store.hpp"
#include "device/isolated/channel.hpp"
#include "device/isolated/wire.hpp"
#include "embed/safetensors_writer.hpp"
#include "graph/executable_plan.hpp"
#include "jit/compiled_program.hpp"
#include "libs/collective/unique_id_message.hpp"
#include "request_examples.hpp"
#include "staged_kinds.hpp"
#include "temporary_directory.hpp"
#include "testing/decoder_graph.hpp"
#include "testing/encoder_graph.hpp"

namespace {

using namespace accel;
namespace fs = std::filesystem;

fs::path root;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "make_fuzz_corpus: %s\n", what.c_str());
  std::exit(1);
}

void seed(const std::string& target, const std::string& name, std::optional<std::uint8_t> first,
          std::span<const std::byte> bytes) {
  fs::create_directories(root / target);
  std::ofstream out(root / target / name, std::ios::binary | std::ios::trunc);
  if (first) out.put(static_cast<char>(*first));
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) fail("cannot write " + (root / target / name).string());
}
void seed(const std::string& target, const std::string& name, std::span<const std::byte> bytes) {
  seed(target, name, std::nullopt, bytes);
}

// A file name of a request's kName ("collective::Group" -> "collective-Group").
std::string file_name(std::string_view name) {
  std::string file;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (name.substr(i, 2) == "::") {
      file += '-';
      ++i;
    } else {
      file += name[i];
    }
  }
  return file;
}

// An example that validate refuses would seed nothing past the first check, silently.
template <class Request>
void require_valid(const Request& request) {
  if constexpr (ProtocolOf<LibraryRequests>::accepts<Request>) {  // a device request's check is its decoding
    const auto checked = Operation<Request>::validate(request);
    if (!checked.ok())
      fail(std::string("the example ") + Request::kName + " is refused: " + checked.status().to_string());
  }
}

// A request slot's seed, which the worker must decode as a request of that tag (a payload of another size is not).
template <class Value>
void slot(const std::string& name, std::uint8_t tag, const Value& value) {
  // An empty request (QueryDevice) is one byte that no constructor writes: zero here, not whatever memory held.
  std::vector<std::byte> bytes(sizeof value);
  if constexpr (!std::is_empty_v<Value>) std::memcpy(bytes.data(), &value, sizeof value);
  if (!device::isolated::visit_request(tag, bytes, [](auto&) {}))
    fail("the wire_request seed " + name + " does not decode");
  seed("wire_request", name, tag, bytes);
}

// Every tag the worker's request ring decodes: the request as its defaults leave it and, for a library request, a
// valid one. A staged request's slot holds only where its encoding lies (staged_requests() seeds the encoding).
template <class Request>
void wire_request() {
  using namespace device::isolated;
  const auto tag = static_cast<std::uint8_t>(kTag<Request>);
  const std::string name = file_name(Request::kName);
  if constexpr (kStaged<Request>) {
    auto staged = Staged<Request>();
    staged.bytes = 256;
    slot(name, tag, staged);
  } else {
    slot(name, tag, Request());
    if constexpr (ProtocolOf<LibraryRequests>::accepts<Request>) {
      const Request valid = fuzzing::example(fuzzing::For<Request>());
      require_valid(valid);
      slot(name + "-valid", tag, valid);
    }
  }
}

void wire_requests() {
  static_assert(device::isolated::kRequestTagCount <= 256, "the fuzzer's tag is one byte");
  [&]<class... Requests>(Protocol<Requests...>) { (..., wire_request<Requests>()); }(DeviceProtocol{});
}

template <class T>
void reply(const std::string& name, std::uint16_t tag, const Result<T>& result) {
  std::vector<std::byte> slot(device::isolated::kReplySlotBytes);
  const std::size_t bytes = device::isolated::encode_reply(slot, result);
  // An empty value (Done) goes out as its one byte, which no constructor writes: whatever memory held.
  if constexpr (std::is_empty_v<T>) {
    if (result.ok()) slot[bytes - 1] = std::byte{0};
  }
  seed("wire_reply", name, static_cast<std::uint8_t>(tag), std::span(slot).first(bytes));
}

void wire_replies() {
  using device::isolated::kTag;
  DeviceInfo info{.name = "cpu:0", .memory_capacity_bytes = 1 << 30};
  info.libraries = {{.name = "openblas", .version = "0.3.21"}};
  info.caches = {{.name = "graph-executables", .directory = "/tmp/cache", .hits = 3, .misses = 1}};
  reply("QueryDevice", kTag<QueryDevice>, Result<DeviceInfo>(info));
  reply("Allocate", kTag<Allocate>, Result<BufferHandle>(fuzzing::buffer(3, DType::f16, 64)));
  auto fence = Fence();
  fence.device = 1, fence.sequence = 9;
  reply("RecordFence", kTag<RecordFence>, Result<Fence>(fence));
  reply("Gemm", kTag<Gemm>, Result<Done>(Done{}));
  reply("Gemm-error", kTag<Gemm>,
        Result<Done>(Status(Code::invalid_argument, "gemm: a has 6 elements, needs 8", Source::runtime, 0)));
  reply("Allocate-error", kTag<Allocate>,
        Result<BufferHandle>(Status(Code::resource_exhausted, "out of memory", Source::os, 12)));
}

// Each staged request's encoding, behind its index in StagedRequests; it must decode and validate as the worker
// decodes and validates it.
template <class Request>
void staged_request() {
  const Request request = fuzzing::example(fuzzing::For<Request>());
  require_valid(request);
  const std::vector<std::byte> encoding = device::isolated::encode_staged(request);
  const Result<Request> decoded = device::isolated::decode_staged<Request>(encoding);
  if (!decoded.ok())
    fail(std::string("the example ") + Request::kName + " does not decode: " + decoded.status().to_string());
  require_valid(*decoded);
  seed("staged_request", file_name(Request::kName), fuzzing::kStagedIndex<Request>, encoding);
}

void staged_requests() {
  [&]<class... Requests>(std::tuple<Requests...>*) {
    (..., staged_request<Requests>());
  }(static_cast<fuzzing::StagedRequests*>(nullptr));
}

void graphs() {
  for (std::size_t i = 0; const auto& g : fuzzing::dnn_graphs())
    seed("dnn_graph", "graph-" + std::to_string(i++), g->signature().bytes);
  const auto encoder = graph::testing::encoder_graph({}, {{16, 64}}, {{2, 4}});
  seed("graph", "encoder", encoder->encoding());
  seed("graph", "encoder-f16", graph::testing::encoder_graph({.dtype = DType::f16}, {{8}}, {{1}})->encoding());
  seed("graph", "decoder", graph::testing::decoder_graph(DType::bf16, {{16, 64}}, {{2, 4}})->encoding());
  seed("graph", "decoder-window", graph::testing::decoder_graph(DType::f16, {{16, 64}}, {{2, 4}}, 8)->encoding());
  seed("graph", "encoder-packed-qkv",
       graph::testing::encoder_graph({.dtype = DType::f16, .packed_qkv = true}, {{8}}, {{1}})->encoding());
  for (auto [tokens, sequences] : {std::pair{16, 2}, std::pair{64, 4}}) {
    auto plan = graph::ExecutablePlan::make(encoder, {{"tokens", tokens}, {"sequences", sequences}});
    seed("executable_plan", "tokens-" + std::to_string(tokens), plan->encode());
  }
}

// The fields plan_key_fuzzer reads, in its order.
void plan_keys() {
  auto write = [](std::uint8_t direction, const std::string& name, const ConvShape& s, const Epilogue& e) {
    ByteWriter out;
    out.fields(s.spatial_rank, s.layout, s.strided, s.dtype, s.n, s.c, s.k, s.groups, s.input, s.filter, s.pre_padding,
               s.post_padding, s.stride, s.dilation, s.x_strides, s.w_strides, s.y_strides);
    if (direction == 0) out.fields(e.activation, e.bias);
    seed("plan_key", name, direction, out.written());
  };
  const ConvShape shape{.n = 2,
                        .c = 4,
                        .k = 8,
                        .input = {8, 8, 1},
                        .filter = {3, 3, 1},
                        .pre_padding = {1, 1, 0},
                        .post_padding = {1, 1, 0}};
  write(0, "forward", shape, {.activation = Activation::relu, .bias = BiasVector::per_channel});
  write(1, "backward-data", shape, {});
  write(2, "backward-filter", shape, {});
  ConvShape grouped = shape;
  grouped.groups = 2;
  grouped.spatial_rank = 1;
  write(0, "forward-grouped-1d", grouped, {});
}

void disk_entries() {
  const fuzzing::TemporaryDirectory directory("accel-make-fuzz-corpus");
  auto store = cache::DiskStore::open({.directory = directory.path()});
  const std::string key = "graph-executable|cpu|tokens=16", value = "a cached value";
  (void)(*store)->store(std::as_bytes(std::span(key)), std::as_bytes(std::span(value)));
  std::ifstream in((*store)->entry_path(std::as_bytes(std::span(key))), std::ios::binary);
  const std::string entry((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  seed("disk_store", "entry-checksum-fixed", 1, std::as_bytes(std::span(entry)));
  seed("disk_store", "entry-as-written", 0, std::as_bytes(std::span(entry)));
}

void safetensors() {
  using testing::safetensors_bytes;
  auto write = [](const std::string& name, const std::string& bytes) {
    seed("safetensors", name, std::as_bytes(std::span(bytes)));
  };
  write("two-tensors", safetensors_bytes({{"embeddings.weight", "F32", {4, 3}}, {"position_ids", "I64", {1, 4}}}));
  write("halves", safetensors_bytes({{"a", "F16", {2, 2}}, {"b", "BF16", {3}}, {"c", "F64", {1}}}));
}

void compiled_programs() {
  const auto write = [](const std::string& name, const jit::CompiledProgram& program) {
    seed("compiled_program", name, jit::encode(program));
  };
  write("cubin-two-names", {.kind = jit::CodeKind::cubin,
                            .code = std::vector<std::byte>(64, std::byte{0x7f}),
                            .lowered_names = {{"axpy<float>", "_Z4axpyIfEvPT_"}, {"scale", "scale"}},
                            .log = "warning: unused variable"});
  write("ptx-empty", {.kind = jit::CodeKind::ptx});
}

void launcher() {
  // The launcher's variables in the fuzzer's order, NUL between them (the ones left out are unset).
  const auto environment = [](const std::string& name, std::initializer_list<std::string_view> values) {
    std::string pieces;
    for (std::string_view value : values) {
      if (!pieces.empty()) pieces.push_back('\0');
      pieces.append(value);
    }
    seed("launcher", name, 0, std::as_bytes(std::span(pieces.data(), pieces.size())));
  };
  environment("torchrun-rank-1", {"2", "1", "1", "127.0.0.1", "29500"});
  environment("torchrun-bootstrap-port", {"8", "0", "3", "node-0.cluster", "29500", "41000"});
  collective::UniqueId id;
  for (std::size_t i = 0; i < id.bytes.size(); ++i) id.bytes[i] = static_cast<std::uint8_t>(i * 7 + 3);
  std::vector<std::uint8_t> message{2, 0, 0, 0};
  const collective::UniqueIdMessage encoded = collective::encode_unique_id_message(id, 2);
  message.insert(message.end(), encoded.begin(), encoded.end());
  seed("launcher", "unique-id-message", 1, std::as_bytes(std::span(message)));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_fuzz_corpus <corpus directory>\n");
    return 2;
  }
  root = argv[1];
  wire_requests();
  wire_replies();
  staged_requests();
  graphs();
  plan_keys();
  disk_entries();
  safetensors();
  compiled_programs();
  launcher();
  return 0;
}
