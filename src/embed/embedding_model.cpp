// accel::embed::Model's implementation: the folder read and checked, the tokenizer loaded, the weights uploaded
// once, and runs of packed tokens sent to the device as graph::Execute requests from the caller's thread. No
// thread of the model's own sits between a caller and the device: handing each call to one would add a thread's
// wake-up to the latency of every call of a quiet server.
#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <mutex>

#include "accel/device/device.hpp"
#include "accel/embed/model.hpp"
#include "accel/graph/execute.hpp"
#include "accel/text/tokenizer.hpp"
#include "embed/bert_graph.hpp"

namespace accel::embed {

void TokenBatch::append(std::span<const std::int32_t> sequence) {
  ids.insert(ids.end(), sequence.begin(), sequence.end());
  offsets.push_back(static_cast<std::uint32_t>(ids.size()));
}

namespace {

// Device buffers for the largest run, allocated once: a run copies its ids and offsets into their beginning.
struct Staging {
  Buffer<std::int32_t> ids, offsets;
  Buffer<float> embeddings;

  static Result<Staging> allocate(const Device& device, std::uint32_t batch_tokens, std::uint32_t dimensions) {
    Staging s;
    ACCEL_ASSIGN_OR_RETURN(s.ids, device.allocate<std::int32_t>(batch_tokens).wait());
    ACCEL_ASSIGN_OR_RETURN(s.offsets, device.allocate<std::int32_t>(batch_tokens + 1ull).wait());
    ACCEL_ASSIGN_OR_RETURN(s.embeddings, device.allocate<float>(std::uint64_t{batch_tokens} * dimensions).wait());
    return s;
  }
};

class EmbeddingModel final : public Model {
 public:
  EmbeddingModel(Device device, ModelFolder folder, text::Tokenizer tokenizer,
                 std::shared_ptr<const graph::Graph> graph, Buffer<std::uint8_t> weights, Staging staging,
                 ModelInfo info, ModelOptions options, bool replays)
      : replays_(replays),
        device_(std::move(device)),
        folder_(std::move(folder)),
        tokenizer_(std::move(tokenizer)),
        graph_(std::move(graph)),
        weights_(std::move(weights)),
        staging_(std::move(staging)),
        info_(std::move(info)),
        options_(std::move(options)) {}

  // The runs in flight use the model's buffers until they finish.
  ~EmbeddingModel() override {
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [&] { return in_flight_ == 0; });
  }

  Result<TokenBatch> tokenize(std::span<const std::string> texts, Truncation truncation) const override {
    ACCEL_ASSIGN_OR_RETURN(
        std::vector<text::Encoding> encodings,
        tokenizer_.encode_batch(texts, {.max_length = info_.max_sequence_length}, options_.tokenizer_threads));
    TokenBatch batch;
    batch.offsets.reserve(texts.size() + 1);
    for (std::size_t i = 0; i < encodings.size(); ++i) {
      if (truncation == Truncation::refuse && encodings[i].truncated)
        return invalid_argument(
            fmt::format("text {} is longer than the model's {} tokens", i, info_.max_sequence_length));
      batch.append(encodings[i].ids);
    }
    return batch;
  }

  Future<Embeddings> embed(std::vector<std::string> texts, Truncation truncation) override {
    Result<TokenBatch> batch = tokenize(texts, truncation);
    if (!batch.ok()) {
      Promise<Embeddings> failed;
      Future<Embeddings> future = failed.future();
      failed.set(batch.status());
      return future;
    }
    return embed_tokens(std::move(*batch));
  }

  Future<Embeddings> embed_tokens(TokenBatch batch) override {
    if (Status checked = check(batch); !checked.ok()) {
      Promise<Embeddings> failed;
      Future<Embeddings> future = failed.future();
      failed.set(std::move(checked));
      return future;
    }
    return run(std::move(batch));
  }

  const ModelInfo& info() const noexcept override { return info_; }
  const Device& device() const noexcept override { return device_; }

  ModelStats stats() const override {
    ModelStats stats;
    {
      std::lock_guard lock(mutex_);
      stats = counts_;
    }
    if (Result<DeviceInfo> device = device_.info().wait(); device.ok())
      if (const CacheStats* executables = device->cache("graph-executables")) stats.caches.push_back(*executables);
    return stats;
  }

  // Runs one tiny batch, so that the smallest bucket is compiled before the first caller needs it.
  // Called before the model is handed out, so no caller reads info_ while it is written.
  Status warm() {
    const auto start = std::chrono::steady_clock::now();
    ACCEL_ASSIGN_OR_RETURN(const text::Encoding empty,
                           tokenizer_.encode("", {.max_length = info_.max_sequence_length}));
    if (empty.ids.empty())
      return invalid_argument("tokenizer.json: the empty text has no tokens to warm the model with");
    TokenBatch batch;
    batch.append(empty.ids);
    Status status = embed_tokens(std::move(batch)).wait().status();
    info_.load.warm_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return status;
  }

 private:
  Status check(const TokenBatch& batch) const {
    if (batch.offsets.empty() || batch.offsets.front() != 0 || batch.offsets.back() != batch.ids.size())
      return invalid_argument("token batch: offsets must start at 0 and end at the number of ids");
    for (std::size_t s = 0; s < batch.sequences(); ++s) {
      if (batch.offsets[s + 1] <= batch.offsets[s]) return invalid_argument(fmt::format("sequence {} is empty", s));
      if (batch.length(s) > info_.max_sequence_length)
        return invalid_argument(fmt::format("sequence {} has {} tokens, more than the model's {}", s, batch.length(s),
                                            info_.max_sequence_length));
      for (std::uint32_t i = batch.offsets[s]; i < batch.offsets[s + 1]; ++i)
        if (batch.ids[i] < 0 || static_cast<std::uint32_t>(batch.ids[i]) >= info_.vocabulary)
          return invalid_argument(fmt::format("sequence {} has token id {}, outside the vocabulary of {}", s,
                                              batch.ids[i], info_.vocabulary));
    }
    return Status();
  }

  // Splits the batch into runs of at most batch_tokens tokens and sends every run's requests, then awaits them.
  // A call's requests go to the device together (enqueue_mutex_): the runs share the model's staging buffers, and
  // the device orders each run's use of them after the previous run's. The awaits resume on whichever thread
  // answers the device's requests, and the batch, the offsets and `out` stay in this frame until then.
  Future<Embeddings> run(TokenBatch batch) {
    {
      std::lock_guard lock(mutex_);
      ++in_flight_;
    }
    Embeddings out{.dimensions = info_.dimensions, .values = {}, .tokens = {}};
    out.values.resize(batch.sequences() * info_.dimensions);
    out.tokens.resize(batch.sequences());
    for (std::size_t s = 0; s < batch.sequences(); ++s) out.tokens[s] = batch.length(s);

    std::vector<std::vector<std::int32_t>> offsets;
    std::vector<Future<Done>> steps;
    std::uint64_t padded = 0;
    {
      std::lock_guard lock(enqueue_mutex_);
      std::size_t first = 0;
      while (first < batch.sequences()) {
        std::size_t last = first;
        while (last < batch.sequences() && batch.offsets[last + 1] - batch.offsets[first] <= options_.batch_tokens)
          ++last;
        std::vector<std::int32_t>& run_offsets = offsets.emplace_back();
        for (std::size_t s = first; s <= last; ++s)
          run_offsets.push_back(static_cast<std::int32_t>(batch.offsets[s] - batch.offsets[first]));
        const auto tokens = static_cast<std::int64_t>(run_offsets.back());
        const auto sequences = static_cast<std::int64_t>(last - first);
        const std::span<const std::int32_t> ids(batch.ids.data() + batch.offsets[first],
                                                static_cast<std::size_t>(tokens));
        steps.push_back(device_.upload(ids, staging_.ids));
        steps.push_back(device_.upload(std::span<const std::int32_t>(run_offsets), staging_.offsets));
        steps.push_back(device_.ask(graph::Execute{.graph = graph_,
                                                   .symbols = {{"tokens", tokens}, {"sequences", sequences}},
                                                   .weights = weights_,
                                                   .inputs = {{"ids", staging_.ids}, {"offsets", staging_.offsets}},
                                                   .outputs = {{"embeddings", staging_.embeddings}}}));
        steps.push_back(device_.download(staging_.embeddings,
                                         std::span<float>(out.values.data() + first * info_.dimensions,
                                                          static_cast<std::size_t>(sequences) * info_.dimensions)));
        // Only a device that replays runs at the bucket's extent; the CPU runs the actual one.
        if (replays_) padded += static_cast<std::uint64_t>(*graph_->buckets().at("tokens").rung_for(tokens) - tokens);
        first = last;
      }
    }
    Status failed;
    for (Future<Done>& step : steps)
      if (Result<Done> done = co_await std::move(step); !done.ok() && failed.ok()) failed = done.status();
    {
      std::lock_guard lock(mutex_);
      if (failed.ok()) {
        counts_.runs += offsets.size();
        counts_.sequences += batch.sequences();
        counts_.tokens += batch.ids.size();
        counts_.padded_tokens += padded;
      }
      --in_flight_;
      idle_.notify_all();
    }
    if (!failed.ok()) co_return failed;
    co_return out;
  }

  const bool replays_;
  Device device_;
  ModelFolder folder_;
  text::Tokenizer tokenizer_;
  std::shared_ptr<const graph::Graph> graph_;
  Buffer<std::uint8_t> weights_;
  Staging staging_;
  ModelInfo info_;
  ModelOptions options_;

  std::mutex enqueue_mutex_;
  mutable std::mutex mutex_;  // guards what follows
  std::condition_variable idle_;
  unsigned in_flight_ = 0;
  ModelStats counts_;
};

}  // namespace

namespace {

using Clock = std::chrono::steady_clock;

double milliseconds_since(Clock::time_point from) {
  return std::chrono::duration<double, std::milli>(Clock::now() - from).count();
}

// What the host reads before the device matters: the folder checked, the tokenizer, the mapped weights.
struct HostFiles {
  ModelFolder folder;
  text::Tokenizer tokenizer;
  SafetensorsFile file;
  BertWeights names;
  double read_ms = 0;
};

Result<HostFiles> read_host_files(const ModelOptions& options) {
  if (options.batch_tokens < 64)
    return invalid_argument(fmt::format("batch_tokens {} is below the smallest bucket, 64", options.batch_tokens));
  const Clock::time_point start = Clock::now();
  ACCEL_ASSIGN_OR_RETURN(ModelFolder folder, ModelFolder::read(options.folder));
  if (options.batch_tokens < folder.max_sequence_length())
    return invalid_argument(fmt::format("batch_tokens {} is below the model's longest sequence, {}",
                                        options.batch_tokens, folder.max_sequence_length()));
  ACCEL_ASSIGN_OR_RETURN(text::Tokenizer tokenizer, text::Tokenizer::load(folder.tokenizer_json));
  ACCEL_ASSIGN_OR_RETURN(SafetensorsFile file, SafetensorsFile::open(folder.weights));
  ACCEL_ASSIGN_OR_RETURN(BertWeights names, BertWeights::validate(file, folder.config));
  return HostFiles{.folder = std::move(folder),
                   .tokenizer = std::move(tokenizer),
                   .file = std::move(file),
                   .names = std::move(names),
                   .read_ms = milliseconds_since(start)};
}

DType compute_dtype(const ModelOptions& options, DeviceKind kind) {
  return options.compute.value_or(kind == DeviceKind::cpu ? DType::f32 : DType::f16);
}

// The graph for one compute dtype and the weights converted to it, in the graph's parameter order.
struct Prepared {
  DType compute = DType::f32;
  std::shared_ptr<const graph::Graph> graph;
  std::vector<std::uint8_t> weights;
  double convert_ms = 0;
};

Result<Prepared> prepare(const HostFiles& files, const ModelOptions& options, DType compute) {
  const Clock::time_point start = Clock::now();
  ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<const graph::Graph> graph,
                         bert_graph(files.folder, {.compute = compute, .batch_tokens = options.batch_tokens}));
  ACCEL_ASSIGN_OR_RETURN(std::vector<std::uint8_t> weights, bert_weight_bytes(*graph, files.file, files.names));
  return Prepared{.compute = compute,
                  .graph = std::move(graph),
                  .weights = std::move(weights),
                  .convert_ms = milliseconds_since(start)};
}

// The device half: the weights (prepared for `prepared.compute`, or again if the device wants another dtype)
// uploaded once, staging buffers, and the smallest bucket warmed. `device_open_ms`: how long Model::open took to
// open the device (0 for load).
Result<std::shared_ptr<Model>> place(const Device& device, const DeviceInfo& device_info, HostFiles files,
                                     Prepared prepared, ModelOptions options, double device_open_ms) {
  if (const DType compute = compute_dtype(options, device_info.kind); compute != prepared.compute) {
    ACCEL_ASSIGN_OR_RETURN(prepared, prepare(files, options, compute));
  }
  ModelInfo info{.name = options.folder.filename().string(),
                 .dimensions = files.folder.config.hidden_size,
                 .max_sequence_length = files.folder.max_sequence_length(),
                 .layers = files.folder.config.num_hidden_layers,
                 .vocabulary = files.folder.config.vocab_size,
                 .compute = prepared.compute,
                 .device = device_info.name};
  if (info.name.empty()) info.name = options.folder.parent_path().filename().string();
  info.load.device_open_ms = device_open_ms;
  info.load.read_ms = files.read_ms;
  info.load.convert_ms = prepared.convert_ms;
  const Clock::time_point start = Clock::now();
  ACCEL_ASSIGN_OR_RETURN(Buffer<std::uint8_t> weights, device.allocate<std::uint8_t>(prepared.weights.size()).wait());
  ACCEL_RETURN_IF_ERROR(device.upload(std::span<const std::uint8_t>(prepared.weights), weights).wait().status());
  ACCEL_ASSIGN_OR_RETURN(Staging staging, Staging::allocate(device, options.batch_tokens, info.dimensions));
  info.load.upload_ms = milliseconds_since(start);
  auto model = std::make_shared<EmbeddingModel>(
      device, std::move(files.folder), std::move(files.tokenizer), std::move(prepared.graph), std::move(weights),
      std::move(staging), std::move(info), std::move(options), device_info.kind != DeviceKind::cpu);
  ACCEL_RETURN_IF_ERROR(model->warm());
  return std::shared_ptr<Model>(std::move(model));
}

}  // namespace

Result<std::shared_ptr<Model>> Model::load(const Device& device, ModelOptions options) {
  ACCEL_ASSIGN_OR_RETURN(HostFiles files, read_host_files(options));
  ACCEL_ASSIGN_OR_RETURN(DeviceInfo device_info, device.info().wait());
  ACCEL_ASSIGN_OR_RETURN(Prepared prepared, prepare(files, options, compute_dtype(options, device_info.kind)));
  return place(device, device_info, std::move(files), std::move(prepared), std::move(options), 0);
}

Result<std::shared_ptr<Model>> Model::open(const DeviceOpener& device_opener, ModelOptions options) {
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
  Result<HostFiles> files = read_host_files(options);
  Result<Prepared> prepared = files.ok() ? prepare(*files, options, compute_dtype(options, device_opener.kind))
                                         : Result<Prepared>(files.status());
  auto [device, open_ms] = opening.get();  // joined before any error returns: the opener is the caller's
  if (!device.ok()) return device.status();
  ACCEL_RETURN_IF_ERROR(files.status());
  ACCEL_RETURN_IF_ERROR(prepared.status());
  ACCEL_ASSIGN_OR_RETURN(DeviceInfo device_info, device->info().wait());
  return place(*device, device_info, std::move(*files), std::move(*prepared), std::move(options), open_ms);
}

}  // namespace accel::embed
