// accel::embed::Model's implementation: the folder read and checked, the tokenizer loaded, the weights uploaded
// once, and runs of packed tokens sent to the device as graph::Execute requests by one thread per model (calls
// from any thread queue there; tokenising happens on the caller's threads, before the queue).
#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

#include "accel/device/device.hpp"
#include "accel/embed/model.hpp"
#include "accel/graph/execute.hpp"
#include "embed/bert_graph.hpp"
#include "embed/wordpiece_tokenizer.hpp"

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
  EmbeddingModel(Device device, ModelFolder folder, WordPieceTokenizer tokenizer,
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
        options_(std::move(options)),
        worker_([this](std::stop_token stop) { serve(stop); }) {}

  ~EmbeddingModel() override {
    {
      std::lock_guard lock(mutex_);
      worker_.request_stop();
    }
    wake_.notify_all();
  }

  Result<TokenBatch> tokenize(std::span<const std::string> texts, Truncation truncation) const override {
    ACCEL_ASSIGN_OR_RETURN(std::vector<Encoding> encodings,
                           tokenizer_.encode_batch(texts, info_.max_sequence_length, options_.tokenizer_threads));
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
    Promise<Embeddings> promise;
    Future<Embeddings> future = promise.future();
    if (Status checked = check(batch); !checked.ok()) {
      promise.set(std::move(checked));
      return future;
    }
    {
      std::lock_guard lock(mutex_);
      jobs_.push_back({std::move(batch), std::move(promise)});
    }
    wake_.notify_one();
    return future;
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
    TokenBatch batch;
    const std::int32_t ids[] = {tokenizer_.cls_id(), tokenizer_.sep_id()};
    batch.append(ids);
    Status status = embed_tokens(std::move(batch)).wait().status();
    info_.load.warm_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return status;
  }

 private:
  struct Job {
    TokenBatch batch;
    Promise<Embeddings> promise;
  };

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

  void serve(std::stop_token stop) {
    for (;;) {
      Job job;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stop.stop_requested() || !jobs_.empty(); });
        if (jobs_.empty()) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job.promise.set(run(job.batch));
    }
  }

  // Splits the batch into runs of at most batch_tokens tokens, sends every run's requests, then waits for all.
  Result<Embeddings> run(const TokenBatch& batch) {
    Embeddings out{.dimensions = info_.dimensions, .values = {}, .tokens = {}};
    out.values.resize(batch.sequences() * info_.dimensions);
    out.tokens.resize(batch.sequences());
    for (std::size_t s = 0; s < batch.sequences(); ++s) out.tokens[s] = batch.length(s);

    struct Run {
      std::vector<std::int32_t> offsets;
      std::vector<Future<Done>> steps;
    };
    std::vector<Run> runs;
    std::size_t first = 0;
    std::uint64_t padded = 0;
    while (first < batch.sequences()) {
      std::size_t last = first;
      while (last < batch.sequences() && batch.offsets[last + 1] - batch.offsets[first] <= options_.batch_tokens)
        ++last;
      Run r;
      for (std::size_t s = first; s <= last; ++s)
        r.offsets.push_back(static_cast<std::int32_t>(batch.offsets[s] - batch.offsets[first]));
      const auto tokens = static_cast<std::int64_t>(r.offsets.back());
      const auto sequences = static_cast<std::int64_t>(last - first);
      const std::span<const std::int32_t> ids(batch.ids.data() + batch.offsets[first],
                                              static_cast<std::size_t>(tokens));
      // The runs share the model's staging buffers: the device orders each run's copies after the previous
      // run's use of them.
      r.steps.push_back(device_.upload(ids, staging_.ids));
      r.steps.push_back(device_.upload(std::span<const std::int32_t>(r.offsets), staging_.offsets));
      r.steps.push_back(device_.ask(graph::Execute{.graph = graph_,
                                                   .symbols = {{"tokens", tokens}, {"sequences", sequences}},
                                                   .weights = weights_,
                                                   .inputs = {{"ids", staging_.ids}, {"offsets", staging_.offsets}},
                                                   .outputs = {{"embeddings", staging_.embeddings}}}));
      r.steps.push_back(device_.download(staging_.embeddings,
                                         std::span<float>(out.values.data() + first * info_.dimensions,
                                                          static_cast<std::size_t>(sequences) * info_.dimensions)));
      // Only a device that replays runs at the bucket's extent; the CPU runs the actual one.
      if (replays_) padded += static_cast<std::uint64_t>(*graph_->buckets().at("tokens").rung_for(tokens) - tokens);
      runs.push_back(std::move(r));
      first = last;
    }
    Status failed;
    for (Run& r : runs)
      for (Future<Done>& step : r.steps)
        if (Status s = step.wait().status(); !s.ok() && failed.ok()) failed = std::move(s);
    if (!failed.ok()) return failed;
    std::lock_guard lock(mutex_);
    counts_.runs += runs.size();
    counts_.sequences += batch.sequences();
    counts_.tokens += batch.ids.size();
    counts_.padded_tokens += padded;
    return out;
  }

  const bool replays_;
  Device device_;
  ModelFolder folder_;
  WordPieceTokenizer tokenizer_;
  std::shared_ptr<const graph::Graph> graph_;
  Buffer<std::uint8_t> weights_;
  Staging staging_;
  ModelInfo info_;
  ModelOptions options_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> jobs_;
  ModelStats counts_;
  std::jthread worker_;  // last: it starts serving once everything else is built
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
  WordPieceTokenizer tokenizer;
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
  ACCEL_ASSIGN_OR_RETURN(WordPieceTokenizer tokenizer, WordPieceTokenizer::load(folder.tokenizer_json));
  ACCEL_ASSIGN_OR_RETURN(SafetensorsFile file, SafetensorsFile::open(folder.weights));
  ACCEL_ASSIGN_OR_RETURN(BertWeights names, BertWeights::validate(file, folder.config));
  return HostFiles{.folder = std::move(folder),
                   .tokenizer = std::move(tokenizer),
                   .file = std::move(file),
                   .names = std::move(names),
                   .read_ms = milliseconds_since(start)};
}

// The device half: the graph for the device's compute dtype, the weights converted and uploaded once, staging
// buffers, and the smallest bucket warmed. `device_open_ms`: how long Model::open took to open the device (0 for load).
Result<std::shared_ptr<Model>> place(const Device& device, HostFiles files, ModelOptions options,
                                     double device_open_ms) {
  Clock::time_point start = Clock::now();
  ACCEL_ASSIGN_OR_RETURN(DeviceInfo device_info, device.info().wait());
  const DType compute = options.compute.value_or(device_info.kind == DeviceKind::cpu ? DType::f32 : DType::f16);
  ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<const graph::Graph> graph,
                         bert_graph(files.folder, {.compute = compute, .batch_tokens = options.batch_tokens}));
  ACCEL_ASSIGN_OR_RETURN(std::vector<std::uint8_t> bytes, bert_weight_bytes(*graph, files.file, files.names));
  ModelInfo info{.name = options.folder.filename().string(),
                 .dimensions = files.folder.config.hidden_size,
                 .max_sequence_length = files.folder.max_sequence_length(),
                 .layers = files.folder.config.num_hidden_layers,
                 .vocabulary = files.folder.config.vocab_size,
                 .compute = compute,
                 .device = device_info.name};
  if (info.name.empty()) info.name = options.folder.parent_path().filename().string();
  info.load.device_open_ms = device_open_ms;
  info.load.read_ms = files.read_ms;
  info.load.convert_ms = milliseconds_since(start);
  start = Clock::now();
  ACCEL_ASSIGN_OR_RETURN(Buffer<std::uint8_t> weights, device.allocate<std::uint8_t>(bytes.size()).wait());
  ACCEL_RETURN_IF_ERROR(device.upload(std::span<const std::uint8_t>(bytes), weights).wait().status());
  ACCEL_ASSIGN_OR_RETURN(Staging staging, Staging::allocate(device, options.batch_tokens, info.dimensions));
  info.load.upload_ms = milliseconds_since(start);
  auto model = std::make_shared<EmbeddingModel>(
      device, std::move(files.folder), std::move(files.tokenizer), std::move(graph), std::move(weights),
      std::move(staging), std::move(info), std::move(options), device_info.kind != DeviceKind::cpu);
  ACCEL_RETURN_IF_ERROR(model->warm());
  return std::shared_ptr<Model>(std::move(model));
}

}  // namespace

Result<std::shared_ptr<Model>> Model::load(const Device& device, ModelOptions options) {
  ACCEL_ASSIGN_OR_RETURN(HostFiles files, read_host_files(options));
  return place(device, std::move(files), std::move(options), 0);
}

Result<std::shared_ptr<Model>> Model::open(const std::function<Result<Device>()>& open_device, ModelOptions options) {
  const Clock::time_point start = Clock::now();
  auto opening = std::async(std::launch::async, [&open_device, start] {
    Result<Device> device = open_device();
    return std::make_pair(std::move(device), milliseconds_since(start));
  });
  Result<HostFiles> files = read_host_files(options);
  auto [device, open_ms] = opening.get();  // joined before any error returns: open_device is the caller's
  if (!device.ok()) return device.status();
  ACCEL_RETURN_IF_ERROR(files.status());
  return place(*device, std::move(*files), std::move(options), open_ms);
}

}  // namespace accel::embed
