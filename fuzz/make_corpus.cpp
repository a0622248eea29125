// Writes the seed corpora of the fuzz targets whose inputs are binary (scripts/fuzz-corpus runs it): a few valid
// inputs of each, made by the very encoders whose decoders are fuzzed, so that a change of an encoding is a
// change of the seeds. The text targets' seeds are files kept as they are.
//
// usage: make_fuzz_corpus <corpus directory>
#include <xxhash.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "accel/dnn/convolution.hpp"
#include "cache/disk_store.hpp"
#include "device/isolated/channel.hpp"
#include "device/isolated/wire.hpp"
#include "embed/safetensors_writer.hpp"
#include "graph/executable_plan.hpp"
#include "jit/compiled_program.hpp"
#include "libs/collective/unique_id_message.hpp"
#include "testing/encoder_graph.hpp"

namespace {

using namespace accel;
namespace fs = std::filesystem;

fs::path root;

void seed(const std::string& target, const std::string& name, std::uint8_t first, std::span<const std::byte> bytes) {
  fs::create_directories(root / target);
  std::ofstream out(root / target / name, std::ios::binary | std::ios::trunc);
  out.put(static_cast<char>(first));
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}
void seed(const std::string& target, const std::string& name, std::span<const std::byte> bytes) {
  fs::create_directories(root / target);
  std::ofstream out(root / target / name, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

BufferHandle handle(std::uint32_t slot, DType dtype, std::uint64_t count) {
  return {.device = 1, .slot = slot, .epoch = 1, .generation = slot + 1, .dtype = dtype, .count = count};
}

// conv -> bias add -> relu, and a matmul: the RunGraph seeds and the dnn graph seeds.
std::vector<std::shared_ptr<const dnn::Graph>> dnn_graphs() {
  using namespace accel::dnn;
  std::vector<std::shared_ptr<const Graph>> graphs;
  {
    GraphBuilder b;
    const TensorRef x = b.tensor(DType::f32, {1, 4, 8, 8});
    const TensorRef w = b.tensor(DType::f32, {4, 4, 3, 3});
    const TensorRef bias = b.tensor(DType::f32, {1, 4, 1, 1});
    b.output(b.relu(b.add(b.conv_forward(x, w, {.pre_padding = {1, 1}, .post_padding = {1, 1}}), bias)), DType::f32);
    graphs.push_back(*b.build());
  }
  {
    GraphBuilder b;
    b.output(b.matmul(b.tensor(DType::f32, {1, 8, 16}), b.tensor(DType::f32, {1, 16, 4})), DType::f32);
    graphs.push_back(*b.build());
  }
  return graphs;
}

template <class Request>
void staged(std::uint8_t which, const std::string& name, const Request& request) {
  seed("staged_request", name, which, device::isolated::encode_staged(request));
}

void wire_requests() {
  auto each = [&]<class... Requests>(Protocol<Requests...>) {
    (..., [&] {
      if constexpr (!device::isolated::kStaged<Requests>) {
        const Requests request{};
        seed("wire_request", Requests::kName, device::isolated::kTag<Requests>, std::as_bytes(std::span(&request, 1)));
      }
    }());
  };
  each(DeviceProtocol{});
}

template <class T>
void reply(const std::string& name, std::uint16_t tag, const Result<T>& result) {
  std::vector<std::byte> slot(device::isolated::kReplySlotBytes);
  const std::size_t bytes = device::isolated::encode_reply(slot, result);
  seed("wire_reply", name, static_cast<std::uint8_t>(tag), std::span(slot).first(bytes));
}

void wire_replies() {
  using device::isolated::kTag;
  DeviceInfo info{.name = "cpu:0", .memory_capacity_bytes = 1 << 30};
  info.libraries = {{.name = "openblas", .version = "0.3.21"}};
  info.caches = {{.name = "graph-executables", .directory = "/tmp/cache", .hits = 3, .misses = 1}};
  reply("QueryDevice", kTag<QueryDevice>, Result<DeviceInfo>(info));
  reply("Allocate", kTag<Allocate>, Result<BufferHandle>(handle(3, DType::f16, 64)));
  reply("RecordFence", kTag<RecordFence>, Result<Fence>(Fence{.device = 1, .stream = 0, .epoch = 1, .sequence = 9}));
  reply("Gemm", kTag<Gemm>, Result<Done>(Done{}));
  reply("Gemm-error", kTag<Gemm>,
        Result<Done>(Status(Code::invalid_argument, "gemm: a has 6 elements, needs 8", Source::runtime, 0)));
  reply("Allocate-error", kTag<Allocate>,
        Result<BufferHandle>(Status(Code::resource_exhausted, "out of memory", Source::os, 12)));
}

void staged_requests() {
  const auto graphs = dnn_graphs();
  RunGraph run{.graph = graphs[0]};
  for (const dnn::TensorDesc& t : graphs[0]->tensors()) {
    if (t.is_virtual) continue;
    std::uint64_t count = 1;
    for (std::int64_t d : t.shape()) count *= static_cast<std::uint64_t>(d);
    run.bindings.push_back({.uid = t.uid, .buffer = handle(t.uid, t.dtype, count)});
  }
  staged(0, "RunGraph", run);

  const auto encoder = graph::testing::encoder_graph({}, {{16, 64}}, {{2, 4}});
  graph::Execute execute{.graph = encoder,
                         .symbols = {{"tokens", 16}, {"sequences", 2}},
                         .weights = handle(1, DType::u8, encoder->weight_bytes()),
                         .inputs = {{"x", handle(2, DType::f32, 16 * 64)}, {"offsets", handle(3, DType::i32, 3)}},
                         .outputs = {{"y", handle(4, DType::f32, 16 * 64)}, {"pooled", handle(5, DType::f32, 2 * 64)}}};
  staged(1, "graph-Execute", execute);

  auto program = std::make_shared<jit::Program>(
      jit::Program{.name = "scale.cu",
                   .source = "extern \"C\" __global__ void scale(float* x, float a) { x[threadIdx.x] *= a; }",
                   .options = {"--use_fast_math"}});
  staged(2, "LaunchKernel",
         LaunchKernel{.program = program,
                      .kernel = "scale",
                      .grid = {1, 1, 1},
                      .block = {32, 1, 1},
                      .args = {KernelArg::inout(handle(1, DType::f32, 32)), KernelArg::of(2.0f)}});

  CutlassGroupedGemm grouped{.input = DType::f16, .output = DType::f16};
  for (std::uint32_t g = 0; g < 2; ++g) {
    grouped.groups.push_back({.m = 16,
                              .n = 8,
                              .k = 32,
                              .a = {handle(10 + 4 * g, DType::f16, 16 * 32)},
                              .b = {handle(11 + 4 * g, DType::f16, 32 * 8)},
                              .d = {handle(13 + 4 * g, DType::f16, 16 * 8)},
                              .lda = 32,
                              .ldb = 32,
                              .ldd = 8});
  }
  staged(3, "CutlassGroupedGemm", grouped);
}

void graphs() {
  for (std::size_t i = 0; const auto& g : dnn_graphs())
    seed("dnn_graph", "graph-" + std::to_string(i++), g->signature().bytes);
  const auto encoder = graph::testing::encoder_graph({}, {{16, 64}}, {{2, 4}});
  seed("graph", "encoder", encoder->encoding());
  seed("graph", "encoder-f16", graph::testing::encoder_graph({.dtype = DType::f16}, {{8}}, {{1}})->encoding());
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
  const fs::path directory = fs::temp_directory_path() / "accel-make-fuzz-corpus";
  fs::remove_all(directory);
  auto store = cache::DiskStore::open({.directory = directory});
  const std::string key = "graph-executable|cpu|tokens=16", value = "a cached value";
  (void)(*store)->store(std::as_bytes(std::span(key)), std::as_bytes(std::span(value)));
  std::ifstream in((*store)->entry_path(std::as_bytes(std::span(key))), std::ios::binary);
  const std::string entry((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  seed("disk_store", "entry-checksum-fixed", 1, std::as_bytes(std::span(entry)));
  seed("disk_store", "entry-as-written", 0, std::as_bytes(std::span(entry)));
  fs::remove_all(directory);
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
