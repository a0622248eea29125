// Model::load and Model::open: the folder read and checked, the tokenizer loaded, the weights converted for the
// device's compute dtype and uploaded once, then the model made (embedding_model.cpp).
#include <fmt/format.h>

#include <chrono>
#include <future>

#include "embed/embedding_model.hpp"
#include "embed/model_graph.hpp"
#include "graph/kernels/cpu_packed_matmul.hpp"

namespace accel::embed {
namespace {

using Clock = std::chrono::steady_clock;

double milliseconds_since(Clock::time_point from) {
  return std::chrono::duration<double, std::milli>(Clock::now() - from).count();
}

// A SPLADE run holds every token's logits over the vocabulary before it pools them: its runs are kept to about
// 2^26 of them (256 MiB of f32), in a power of two of tokens.
std::uint32_t run_tokens(const ModelFolder& folder, std::uint32_t batch_tokens) {
  if (folder.head != Head::splade) return batch_tokens;
  std::uint32_t tokens = 64;
  while (tokens * 2ull * folder.config.vocab_size <= (std::uint64_t{1} << 26)) tokens *= 2;
  return std::min(batch_tokens, std::max(tokens, folder.max_sequence_length()));
}

// What the host reads before the device matters: the folder checked, the tokenizer, the mapped weights.
struct HostFiles {
  ModelFolder folder;
  text::Tokenizer tokenizer;
  ModelWeights weights;
  std::uint32_t batch_tokens = 0;
  double read_ms = 0;
};

// A yes/no reranker's two tokens, each one entry of the vocabulary (as transformers' convert_tokens_to_ids finds
// them), whose rows the head reads.
Status find_yes_no_tokens(const text::Tokenizer& tokenizer, ModelFolder& folder) {
  if (!folder.yes_no) return Status();
  for (auto [token, id] : {std::pair{&folder.yes_no->no_token, &folder.yes_no->no_id},
                           std::pair{&folder.yes_no->yes_token, &folder.yes_no->yes_id}}) {
    const std::optional<std::int32_t> found = tokenizer.token_to_id(*token);
    if (!found || *found < 0 || static_cast<std::uint32_t>(*found) >= folder.config.vocab_size)
      return invalid_argument(fmt::format(
          "{}: '{}' (config.json's classifier_from_token) is not {} of the vocabulary", folder.tokenizer_json.native(),
          *token, found ? fmt::format("a row ({} of {})", *found, folder.config.vocab_size) : std::string("a token")));
    *id = *found;
  }
  if (folder.yes_no->no_id == folder.yes_no->yes_id)
    return invalid_argument(
        fmt::format("{}: classifier_from_token names one token twice", (folder.folder / "config.json").native()));
  return Status();
}

Result<HostFiles> read_host_files(const ModelOptions& options, DeviceKind kind) {
  if (options.batch_tokens != 0 && options.batch_tokens < kSmallestBucket)
    return invalid_argument(
        fmt::format("batch_tokens {} is below the smallest bucket, {}", options.batch_tokens, kSmallestBucket));
  const Clock::time_point start = Clock::now();
  ACCEL_ASSIGN_OR_RETURN(ModelFolder folder, ModelFolder::read(options.folder));
  const std::uint32_t fallback = default_batch_tokens(folder.max_sequence_length(), folder.config.hidden_size, kind);
  const std::uint32_t asked = options.batch_tokens != 0 ? options.batch_tokens : fallback;
  if (asked < folder.max_sequence_length())
    return invalid_argument(
        fmt::format("batch_tokens {} is below the model's longest sequence, {}: a batch must hold one whole "
                    "sequence (give at least {} tokens a batch, or leave --batch-tokens out for {})",
                    asked, folder.max_sequence_length(), folder.max_sequence_length(), fallback));
  ACCEL_ASSIGN_OR_RETURN(text::Tokenizer tokenizer, text::Tokenizer::load(folder.tokenizer_json));
  if (tokenizer.vocabulary_size() > folder.config.vocab_size)
    return invalid_argument(
        fmt::format("{}: its {} tokens do not fit the embedding matrix of {} rows (config.json's "
                    "vocab_size)",
                    folder.tokenizer_json.native(), tokenizer.vocabulary_size(), folder.config.vocab_size));
  ACCEL_RETURN_IF_ERROR(find_yes_no_tokens(tokenizer, folder));
  ACCEL_ASSIGN_OR_RETURN(ModelWeights weights, ModelWeights::open(folder));
  const std::uint32_t batch_tokens = run_tokens(folder, asked);
  return HostFiles{.folder = std::move(folder),
                   .tokenizer = std::move(tokenizer),
                   .weights = std::move(weights),
                   .batch_tokens = batch_tokens,
                   .read_ms = milliseconds_since(start)};
}

// f16 by default on a GPU: an encoder's LayerNorm-bounded activations stay far inside its range. A decoder's
// residual stream is not normalised and grows past f16's 65504 in some layers of real checkpoints: bf16.
DType compute_dtype(const ModelOptions& options, DeviceKind kind, const ModelFolder& folder) {
  return options.compute.value_or(kind == DeviceKind::cpu ? DType::f32
                                  : folder.config.decoder ? DType::bf16
                                                          : DType::f16);
}

// A compute dtype the device cannot run, refused before anything is read or run. The CPU device computes in f32,
// or in bf16 (its matmuls in bf16 on weights packed once, everything else in f32: graph/cpu/cpu_bf16_graph.hpp)
// where the CPU has bf16 matmuls.
Status check_compute(const std::optional<DType>& compute, DeviceKind kind) {
  if (!compute) return Status();
  if (*compute != DType::f32 && *compute != DType::f16 && *compute != DType::bf16)
    return invalid_argument(fmt::format(
        "ModelOptions::compute (--dtype) is {}: an encoder computes in f32, f16 or bf16", to_string(*compute)));
  if (kind != DeviceKind::cpu) return Status();
  if (*compute == DType::f16)
    return not_supported("ModelOptions::compute (--dtype) is f16: the CPU device computes in f32 or bf16");
  if (*compute == DType::bf16 && !graph::cpu::cpu_has_bf16())
    return not_supported(
        "ModelOptions::compute (--dtype) is bf16: the CPU device runs bf16 matmuls only on a CPU with avx512_bf16 "
        "or AMX, and this one has neither (use f32, the CPU's default)");
  return Status();
}

// The graph for one compute dtype and the weights converted to it, in the graph's parameter order.
struct Prepared {
  DType compute = DType::f32;
  std::shared_ptr<const graph::Graph> graph;
  std::shared_ptr<const graph::Graph> token_vectors;  // the encoder alone, on the same weights
  std::vector<std::uint8_t> weights;
  double convert_ms = 0;
};

Result<Prepared> prepare(const HostFiles& files, DType compute) {
  const Clock::time_point start = Clock::now();
  const ModelGraphOptions options{.compute = compute, .batch_tokens = files.batch_tokens};
  ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<const graph::Graph> graph, model_graph(files.folder, files.weights, options));
  ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<const graph::Graph> token_vectors,
                         token_vectors_graph(files.folder, files.weights, options, *graph));
  ACCEL_ASSIGN_OR_RETURN(std::vector<std::uint8_t> weights, model_weight_bytes(*graph, files.weights));
  return Prepared{.compute = compute,
                  .graph = std::move(graph),
                  .token_vectors = std::move(token_vectors),
                  .weights = std::move(weights),
                  .convert_ms = milliseconds_since(start)};
}

std::string describe_head(const ModelFolder& folder) {
  switch (folder.head) {
    case Head::classifier:
      if (folder.yes_no)
        return fmt::format("yes/no reranker (logit '{}' - logit '{}' at the last token; sigmoid: P({}))",
                           folder.yes_no->yes_token, folder.yes_no->no_token, folder.yes_no->yes_token);
      return fmt::format("classifier ({} label{})", folder.config.num_labels, folder.config.num_labels == 1 ? "" : "s");
    case Head::splade: return "SPLADE (masked-LM logits, log(1 + ReLU), max over tokens)";
    case Head::embedding: break;
  }
  std::string text = fmt::format("{} pooling", graph::to_string(folder.pooling));
  for (const DenseModule& dense : folder.dense)
    text += fmt::format(", Dense {}->{} {}", dense.in_features, dense.out_features, to_string(dense.activation));
  return folder.normalize ? text + ", normalised" : text;
}

ModelInfo describe(const HostFiles& files, const ModelOptions& options) {
  const ModelFolder& folder = files.folder;
  ModelInfo info{.name = options.folder.filename().string(),
                 .family = std::string(folder.family->name),
                 .model_type = folder.config.model_type,
                 .output = folder.head == Head::embedding ? Output::dense
                           : folder.head == Head::splade  ? Output::sparse
                                                          : Output::scores,
                 .head = describe_head(folder),
                 .dimensions = folder.output_dimensions(),
                 .max_sequence_length = folder.max_sequence_length(),
                 .layers = folder.config.num_hidden_layers,
                 .hidden = folder.config.hidden_size,
                 .vocabulary = folder.config.vocab_size,
                 .batch_tokens = files.batch_tokens,
                 .normalized = folder.head == Head::embedding && folder.normalize,
                 .tokenizer = files.tokenizer.describe(),
                 .prompts = folder.prompts,
                 .default_prompt_name = folder.default_prompt_name};
  if (folder.head == Head::classifier) info.labels = folder.config.labels;
  if (info.name.empty()) info.name = options.folder.parent_path().filename().string();
  return info;
}

// The device half: the weights (prepared for `prepared.compute`, or again if the device wants another dtype)
// uploaded once, staging buffers, and the smallest bucket warmed. `device_open_ms`: how long Model::open took to
// open the device (0 for load).
Result<std::shared_ptr<Model>> place(const Device& device, const DeviceInfo& device_info, HostFiles files,
                                     Prepared prepared, ModelOptions options, double device_open_ms) {
  ACCEL_RETURN_IF_ERROR(check_compute(options.compute, device_info.kind));  // the opener's kind may have surprised
  if (const DType compute = compute_dtype(options, device_info.kind, files.folder); compute != prepared.compute) {
    ACCEL_ASSIGN_OR_RETURN(prepared, prepare(files, compute));
  }
  ModelInfo info = describe(files, options);
  info.compute = prepared.compute;
  info.device = device_info.name;
  info.load.device_open_ms = device_open_ms;
  info.load.read_ms = files.read_ms;
  info.load.convert_ms = prepared.convert_ms;
  const Clock::time_point start = Clock::now();
  ACCEL_ASSIGN_OR_RETURN(Buffer<std::uint8_t> weights, device.allocate<std::uint8_t>(prepared.weights.size()).wait());
  ACCEL_RETURN_IF_ERROR(device.upload(std::span<const std::uint8_t>(prepared.weights), weights).wait().status());
  info.load.upload_ms = milliseconds_since(start);
  return make_model(device, std::move(files.folder), std::move(files.tokenizer),
                    {.model = std::move(prepared.graph), .token_vectors = std::move(prepared.token_vectors)},
                    std::move(weights), std::move(info), std::move(options), device_info.kind != DeviceKind::cpu);
}

}  // namespace

// On a GPU a run's fixed costs (each kernel's last partial wave, the hand-over between kernels, the run's own copies
// and host work) spread over more tokens in a longer run: all-MiniLM-L6-v2's shape on an H200 ran 13.0-13.2 M
// tokens/s in runs of 16,384 tokens, 13.7-13.8 M in 32,768 and 14.1-14.3 M in 65,536. A 12 x 768 encoder ran best
// at 32,768 and lost 7 % at 65,536, and Qwen3-0.6B's 1,024-wide decoder ran the same at every size. Each best size
// is the largest whose hidden states take at most 48 MiB: about the H100's and H200's 50 MB L2, which a longer run's
// activations likely overflow between one kernel and the next.
std::uint32_t default_batch_tokens(std::uint32_t max_sequence_length, std::uint32_t hidden_size,
                                   DeviceKind kind) noexcept {
  constexpr std::uint64_t kHiddenStateBytes = std::uint64_t{48} << 20;
  std::uint32_t tokens = 16384;
  if (kind != DeviceKind::cpu)
    while (tokens < 65536 && std::uint64_t{tokens} * 2 * hidden_size * 2 <= kHiddenStateBytes) tokens *= 2;
  return std::max(tokens, max_sequence_length);
}

Result<std::shared_ptr<Model>> Model::load(const Device& device, ModelOptions options) {
  ACCEL_ASSIGN_OR_RETURN(DeviceInfo device_info, device.info().wait());
  ACCEL_RETURN_IF_ERROR(check_compute(options.compute, device_info.kind));
  ACCEL_ASSIGN_OR_RETURN(HostFiles files, read_host_files(options, device_info.kind));
  ACCEL_ASSIGN_OR_RETURN(Prepared prepared, prepare(files, compute_dtype(options, device_info.kind, files.folder)));
  return place(device, device_info, std::move(files), std::move(prepared), std::move(options), 0);
}

Result<std::shared_ptr<Model>> Model::open(const DeviceOpener& device_opener, ModelOptions options) {
  ACCEL_RETURN_IF_ERROR(check_compute(options.compute, device_opener.kind));
  const Clock::time_point start = Clock::now();
  // The CUDA driver's initialisation and this thread's reading of the folder slowed each other badly when run at
  // once in one process (on the H100 machine cuInit took 147 ms instead of 100, and the tokenizer's load 110-120 ms
  // instead of 30-40: docs/PERFORMANCE.md), while the creation of the context after it does not. So an in-process
  // CUDA device has its driver initialised first, and the host work overlaps the context's creation only. A worker
  // process initialises a driver of its own, which this one does not wait for.
  if (device_opener.kind == DeviceKind::cuda && device_opener.isolation == Isolation::in_process)
    static_cast<void>(Device::count(DeviceKind::cuda));
  auto opening = std::async(std::launch::async, [&device_opener, start] {
    Result<Device> device = device_opener.open();
    return std::make_pair(std::move(device), milliseconds_since(start));
  });
  Result<HostFiles> files = read_host_files(options, device_opener.kind);
  Result<Prepared> prepared = files.ok() ? prepare(*files, compute_dtype(options, device_opener.kind, files->folder))
                                         : Result<Prepared>(files.status());
  auto [device, open_ms] = opening.get();  // joined before any error returns: the opener is the caller's
  if (!device.ok()) return device.status();
  ACCEL_RETURN_IF_ERROR(files.status());
  ACCEL_RETURN_IF_ERROR(prepared.status());
  ACCEL_ASSIGN_OR_RETURN(DeviceInfo device_info, device->info().wait());
  return place(*device, device_info, std::move(*files), std::move(*prepared), std::move(options), open_ms);
}

}  // namespace accel::embed
