// accel::embed::Model's implementation: texts tokenised, runs of packed tokens sent to the device as
// graph::Execute requests from the caller's thread. No thread of the model's own sits between a caller and the
// device: handing each call to one would add a thread's wake-up to the latency of every call of a quiet server.
#include "embed/embedding_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>

#include "accel/graph/execute.hpp"
#include "embed/chunked_embed.hpp"
#include "embed/model_graph.hpp"
#include "embed/run_split.hpp"
#include "embed/token_batch_check.hpp"
#include "embed/yes_no_prompt.hpp"

namespace accel::embed {

namespace {

template <class T>
Future<T> failed(Status status) {
  Promise<T> promise;
  Future<T> future = promise.future();
  promise.set(std::move(status));
  return future;
}

// The most sequences one run holds: a run brings back at most 2^24 output floats (a SPLADE run's rows are
// vocabulary-sized), so that its output fits the staging buffer.
std::uint32_t run_sequences(const ModelInfo& info) {
  return static_cast<std::uint32_t>(
      std::clamp<std::uint64_t>((std::uint64_t{1} << 24) / info.dimensions, 1, info.batch_tokens));
}

std::uint32_t run_token_vectors(const ModelInfo& info) {
  return token_vector_run_tokens(info.hidden, info.batch_tokens, info.max_sequence_length);
}

// The output staging buffer holds the larger of the two graphs' runs.
std::uint64_t output_floats(const ModelInfo& info) {
  return std::max(std::uint64_t{run_sequences(info)} * info.dimensions,
                  std::uint64_t{run_token_vectors(info)} * info.hidden);
}

// Device buffers for the largest run, allocated once. A run's inputs go up together, in one upload to the beginning
// of `inputs`: its ids, then its offsets, then its token types (one request a run rather than one an input; each
// request costs the device its own host work and event).
struct Staging {
  Buffer<std::int32_t> inputs;
  Buffer<float> output;

  static Result<Staging> allocate(const Device& device, std::uint32_t batch_tokens, std::uint64_t output_floats,
                                  bool types) {
    Staging s;
    const std::uint64_t input_elements = 2ull * batch_tokens + 1 + (types ? batch_tokens : 0);
    ACCEL_ASSIGN_OR_RETURN(s.inputs, device.allocate<std::int32_t>(input_elements).wait());
    ACCEL_ASSIGN_OR_RETURN(s.output, device.allocate<float>(output_floats).wait());
    return s;
  }
};

class EmbeddingModel final : public Model {
 public:
  EmbeddingModel(Device device, ModelFolder folder, text::Tokenizer tokenizer, ModelGraphs graphs,
                 Buffer<std::uint8_t> weights, Staging staging, ModelInfo info, ModelOptions options, bool replays)
      : replays_(replays),
        takes_types_(takes_token_types(folder)),
        run_sequences_(run_sequences(info)),
        run_token_vectors_(run_token_vectors(info)),
        device_(std::move(device)),
        folder_(std::move(folder)),
        tokenizer_(std::move(tokenizer)),
        graph_(std::move(graphs.model)),
        token_vectors_graph_(std::move(graphs.token_vectors)),
        weights_(std::move(weights)),
        staging_(std::move(staging)),
        info_(std::move(info)),
        options_(std::move(options)) {}

  // The runs in flight use the model's buffers until they finish.
  ~EmbeddingModel() override {
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [&] { return in_flight_ == 0; });
  }

  Result<TokenBatch> tokenize(std::span<const std::string> texts, const EmbedOptions& options) const override {
    return tokenize_from(texts, options, 0);
  }

  // tokenize() of texts that begin at index `first` of the caller's (for its messages).
  Result<TokenBatch> tokenize_from(std::span<const std::string> texts, const EmbedOptions& options,
                                   std::size_t first) const {
    ACCEL_ASSIGN_OR_RETURN(const std::string prompt, prompt_for(options));
    std::vector<std::string> prompted;
    if (!prompt.empty()) {
      prompted.reserve(texts.size());
      for (const std::string& text : texts) prompted.push_back(prompt + text);
      texts = prompted;
    }
    ACCEL_ASSIGN_OR_RETURN(
        std::vector<text::Encoding> encodings,
        tokenizer_.encode_batch(texts, encode_options(options.truncation), options_.tokenizer_threads));
    TokenBatch batch;
    batch.offsets.reserve(texts.size() + 1);
    for (std::size_t i = 0; i < encodings.size(); ++i) {
      if (options.truncation == Truncation::refuse && encodings[i].truncated)
        return invalid_argument(
            fmt::format("text {} is longer than the model's {} tokens", first + i, info_.max_sequence_length));
      batch.append(encodings[i].ids);
    }
    return batch;
  }

  Result<std::vector<text::Encoding>> encode(std::span<const std::string> texts, const EmbedOptions& options,
                                             bool add_special_tokens) const override {
    ACCEL_ASSIGN_OR_RETURN(const std::string prompt, prompt_for(options));
    std::vector<std::string> prompted(texts.begin(), texts.end());
    for (std::string& text : prompted) text.insert(0, prompt);
    return tokenizer_.encode_batch(prompted, {.add_special_tokens = add_special_tokens}, options_.tokenizer_threads);
  }

  Future<Embeddings> embed(std::vector<std::string> texts, EmbedOptions options) override {
    if (options.dimensions != 0 && info_.output != Output::dense)
      return failed<Embeddings>(invalid_argument(fmt::format(
          "dimensions: the model's output is {}, and only dense embeddings are cut", to_string(info_.output))));
    if (options.dimensions > info_.dimensions)
      return failed<Embeddings>(invalid_argument(
          fmt::format("dimensions {} is more than the model's {}", options.dimensions, info_.dimensions)));
    Future<Embeddings> full = embed_in_chunks(
        texts, info_.batch_tokens,
        [&](std::span<const std::string> chunk, std::size_t first) { return tokenize_from(chunk, options, first); },
        [&](TokenBatch batch) { return embed_tokens(std::move(batch)); });
    if (options.dimensions == 0 || options.dimensions == info_.dimensions) return full;
    return keep_dimensions(std::move(full), options.dimensions);
  }

  Result<TokenBatch> tokenize_pairs(std::string_view query, std::span<const std::string> passages,
                                    Truncation truncation) const override {
    if (folder_.yes_no)
      return tokenize_yes_no_pairs(tokenizer_, *folder_.yes_no, query, passages, truncation, info_.max_sequence_length,
                                   options_.tokenizer_threads);
    ACCEL_ASSIGN_OR_RETURN(
        const std::vector<text::Encoding> pairs,
        tokenizer_.encode_pairs(query, passages, encode_options(truncation), options_.tokenizer_threads));
    TokenBatch batch;
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      if (truncation == Truncation::refuse && pairs[i].truncated)
        return invalid_argument(fmt::format("the query and passage {} are longer together than the model's {} tokens",
                                            i, info_.max_sequence_length));
      batch.append(pairs[i].ids, pairs[i].type_ids);
    }
    return batch;
  }

  Future<Embeddings> rerank(std::string query, std::vector<std::string> passages, Truncation truncation) override {
    if (info_.output != Output::scores)
      return failed<Embeddings>(failed_precondition(
          fmt::format("rerank: {} is not a cross-encoder (its output is {})", info_.name, to_string(info_.output))));
    Result<TokenBatch> batch = tokenize_pairs(query, passages, truncation);
    if (!batch.ok()) return failed<Embeddings>(batch.status());
    return embed_tokens(std::move(*batch));
  }

  Future<Embeddings> embed_tokens(TokenBatch batch) override {
    if (Status checked = check_token_batch(batch, info_, token_types()); !checked.ok())
      return failed<Embeddings>(std::move(checked));
    return run(std::move(batch), Rows::per_sequence);
  }

  Result<std::string> decode(std::span<const std::int32_t> ids, bool skip_special_tokens) const override {
    return tokenizer_.decode(ids, skip_special_tokens);
  }

  Future<Embeddings> embed_token_vectors(TokenBatch batch) override {
    if (Status checked = check_token_batch(batch, info_, token_types()); !checked.ok())
      return failed<Embeddings>(std::move(checked));
    return run(std::move(batch), Rows::per_token);
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

  // A bucket of s sequences and t tokens is reachable when each sequence has a token (s <= t) and none is longer
  // than the model takes (t <= s * max_sequence_length).
  std::vector<BatchBucket> buckets() const override {
    std::vector<BatchBucket> out;
    for (const std::int64_t tokens : graph_->buckets().at("tokens").rungs)
      for (const std::int64_t sequences : graph_->buckets().at("sequences").rungs)
        if (sequences <= tokens && tokens <= sequences * info_.max_sequence_length)
          out.push_back(
              {.tokens = static_cast<std::uint32_t>(tokens), .sequences = static_cast<std::uint32_t>(sequences)});
    return out;
  }

  // One tiny batch, so that the smallest bucket is made before the first caller needs it; with
  // ModelOptions::warm_every_batch_size every bucket. Runs before the model is handed out: nobody reads info_ yet.
  Status warm() {
    const auto start = std::chrono::steady_clock::now();
    ACCEL_ASSIGN_OR_RETURN(const text::Encoding empty, tokenizer_.encode("", encode_options(Truncation::right)));
    TokenBatch batch;
    // A tokenizer without special tokens makes nothing of the empty text; the pad id is a token of any model.
    const auto pad = static_cast<std::int32_t>(folder_.config.pad_token_id);
    batch.append(empty.ids.empty() ? std::vector<std::int32_t>{pad} : empty.ids);
    Status status = embed_tokens(std::move(batch)).wait().status();
    if (status.ok() && options_.warm_every_batch_size && replays_) status = warm_every_bucket(pad);
    info_.load.warm_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return status;
  }

 private:
  // A batch of each bucket one run can reach (the tokens ladder ends at batch_tokens; a run holds at most
  // run_sequences_), largest first, so that where the executables' cache cannot hold them all it keeps the small
  // ones, which a server's short requests use most. Twice: a bucket first run while cuBLASLt was still starting on the
  // device ran uncaptured, and the second pass captures it with cuBLASLt's products.
  Status warm_every_bucket(std::int32_t pad) {
    std::vector<BatchBucket> reachable;
    for (const BatchBucket& bucket : buckets())
      if (bucket.sequences <= run_sequences_) reachable.push_back(bucket);
    std::reverse(reachable.begin(), reachable.end());
    for (int pass = 0; pass < 2; ++pass)
      for (const BatchBucket& bucket : reachable)
        if (Status ran = embed_tokens(batch_filling(bucket, pad)).wait().status(); !ran.ok())
          return ran.with_context(
              fmt::format("warming batches of {} tokens in {} sequences", bucket.tokens, bucket.sequences));
    return Status();
  }

  // The token types an input may use: the model's, or only type 0 where it takes none.
  std::uint32_t token_types() const { return takes_types_ ? folder_.config.type_vocab_size : 1; }

  text::EncodeOptions encode_options(Truncation truncation) const {
    return {.max_length = info_.max_sequence_length,
            .side = truncation == Truncation::left ? text::TruncationSide::left : text::TruncationSide::right};
  }

  Result<std::string> prompt_for(const EmbedOptions& options) const {
    if (options.prompt && options.prompt_name) return invalid_argument("give a prompt or a prompt name, not both");
    if (options.prompt) return *options.prompt;
    const std::string& name = options.prompt_name ? *options.prompt_name : info_.default_prompt_name;
    if (name.empty()) return std::string();
    const auto found = info_.prompts.find(name);
    if (found == info_.prompts.end())
      return invalid_argument(
          fmt::format("prompt name '{}' is not one of the model's ({} named)", name, info_.prompts.size()));
    return found->second;
  }

  // The first `dimensions` of each row, scaled to unit length again when the model normalises.
  Future<Embeddings> keep_dimensions(Future<Embeddings> full, std::uint32_t dimensions) {
    Result<Embeddings> done = co_await std::move(full);
    if (!done.ok()) co_return done.status();
    Embeddings out{.dimensions = dimensions, .values = {}, .tokens = std::move(done->tokens)};
    out.values.reserve(out.tokens.size() * dimensions);
    for (std::size_t i = 0; i < out.tokens.size(); ++i) {
      const std::span<const float> row = done->row(i).first(dimensions);
      double squares = 0;
      for (float v : row) squares += double{v} * v;
      const double scale = info_.normalized ? 1.0 / std::max(std::sqrt(squares), 1e-12) : 1.0;
      for (float v : row) out.values.push_back(static_cast<float>(v * scale));
    }
    co_return out;
  }

  // Which graph a run uses: the model's (a row per sequence) or the encoder's alone (a row per token).
  enum class Rows : std::uint8_t { per_sequence, per_token };

  // Splits the batch into runs of at most batch_tokens tokens (split_runs: on a replaying device, cut where the
  // graph's rungs waste least) and sends every run's requests, then awaits them.
  // A call's requests go to the device together (enqueue_mutex_): the runs share the model's staging buffers, and
  // the device orders each run's use of them after the previous run's. The awaits resume on whichever thread
  // answers the device's requests, and the batch, the offsets and `out` stay in this frame until then.
  Future<Embeddings> run(TokenBatch batch, Rows rows) {
    {
      std::lock_guard lock(mutex_);
      ++in_flight_;
    }
    const bool per_token = rows == Rows::per_token;
    const std::shared_ptr<const graph::Graph>& graph = per_token ? token_vectors_graph_ : graph_;
    const std::uint32_t width = per_token ? info_.hidden : info_.dimensions;
    const std::size_t most_sequences = per_token ? batch.sequences() : run_sequences_;
    const std::uint32_t most_tokens = per_token ? run_token_vectors_ : info_.batch_tokens;
    Embeddings out{.dimensions = width, .values = {}, .tokens = {}};
    // Reserved whole (untouched pages), then grown run by run below: the rows never move, and each run's rows are
    // zeroed just before its download, while the runs before it are on the device, rather than megabytes of fresh
    // pages faulted before the first run is sent.
    out.values.reserve((per_token ? batch.ids.size() : batch.sequences()) * width);
    out.tokens.resize(batch.sequences());
    for (std::size_t s = 0; s < batch.sequences(); ++s) out.tokens[s] = batch.length(s);
    if (takes_types_ && batch.type_ids.empty()) batch.type_ids.assign(batch.ids.size(), 0);

    std::vector<std::vector<std::int32_t>> packed;  // each run's inputs, as Staging lays them out
    std::vector<Future<Done>> steps;
    std::uint64_t padded = 0;
    {
      std::lock_guard lock(enqueue_mutex_);
      // Only a device that replays runs them at the rungs of this ladder; the CPU runs the actual extent.
      const graph::Ladder* ladder = replays_ ? &graph->buckets().at("tokens") : nullptr;
      const std::vector<std::size_t> starts = split_runs(
          batch.offsets, most_tokens, most_sequences,
          ladder != nullptr ? std::span<const std::int64_t>(ladder->rungs) : std::span<const std::int64_t>());
      for (std::size_t run = 0; run + 1 < starts.size(); ++run) {
        const std::size_t first = starts[run], last = starts[run + 1];
        const auto tokens = static_cast<std::int64_t>(batch.offsets[last] - batch.offsets[first]);
        const auto sequences = static_cast<std::int64_t>(last - first);
        const auto append_run_of = [&](std::vector<std::int32_t>& to, const std::vector<std::int32_t>& all) {
          to.insert(to.end(), all.begin() + static_cast<std::ptrdiff_t>(batch.offsets[first]),
                    all.begin() + static_cast<std::ptrdiff_t>(batch.offsets[last]));
        };
        std::vector<std::int32_t>& inputs = packed.emplace_back();
        inputs.reserve(static_cast<std::size_t>(tokens + sequences + 1 + (takes_types_ ? tokens : 0)));
        append_run_of(inputs, batch.ids);
        for (std::size_t s = first; s <= last; ++s)
          inputs.push_back(static_cast<std::int32_t>(batch.offsets[s] - batch.offsets[first]));
        graph::Execute execute{
            .graph = graph,
            .symbols = {{"tokens", tokens}, {"sequences", sequences}},
            .weights = weights_,
            .inputs = {{"ids", staging_.inputs, 0}, {"offsets", staging_.inputs, static_cast<std::uint64_t>(tokens)}},
            .outputs = {{"output", staging_.output}}};
        if (takes_types_) {
          execute.inputs.push_back({"types", staging_.inputs, inputs.size()});
          append_run_of(inputs, batch.type_ids);
        }
        steps.push_back(device_.upload(std::span<const std::int32_t>(inputs), staging_.inputs));
        steps.push_back(device_.ask(std::move(execute)));
        const std::size_t first_row = per_token ? batch.offsets[first] : first;
        const auto row_count = static_cast<std::size_t>(per_token ? tokens : sequences);
        out.values.resize((first_row + row_count) * width);  // within the reserve: no earlier row moves
        steps.push_back(device_.download(staging_.output,
                                         std::span<float>(out.values.data() + first_row * width, row_count * width)));
        if (ladder != nullptr) padded += static_cast<std::uint64_t>(*ladder->rung_for(tokens) - tokens);
      }
    }
    Status failure;
    for (Future<Done>& step : steps)
      if (Result<Done> done = co_await std::move(step); !done.ok() && failure.ok()) failure = done.status();
    {
      std::lock_guard lock(mutex_);
      if (failure.ok()) {
        counts_.runs += packed.size();
        counts_.sequences += batch.sequences();
        counts_.tokens += batch.ids.size();
        counts_.padded_tokens += padded;
      }
      --in_flight_;
      idle_.notify_all();
    }
    if (!failure.ok()) co_return failure;
    co_return out;
  }

  const bool replays_;
  const bool takes_types_;
  const std::uint32_t run_sequences_;
  const std::uint32_t run_token_vectors_;
  Device device_;
  ModelFolder folder_;
  text::Tokenizer tokenizer_;
  std::shared_ptr<const graph::Graph> graph_;
  std::shared_ptr<const graph::Graph> token_vectors_graph_;
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

Result<std::shared_ptr<Model>> make_model(Device device, ModelFolder folder, text::Tokenizer tokenizer,
                                          ModelGraphs graphs, Buffer<std::uint8_t> weights, ModelInfo info,
                                          ModelOptions options, bool replays) {
  ACCEL_ASSIGN_OR_RETURN(Staging staging,
                         Staging::allocate(device, info.batch_tokens, output_floats(info), takes_token_types(folder)));
  auto model = std::make_shared<EmbeddingModel>(std::move(device), std::move(folder), std::move(tokenizer),
                                                std::move(graphs), std::move(weights), std::move(staging),
                                                std::move(info), std::move(options), replays);
  ACCEL_RETURN_IF_ERROR(model->warm());
  return std::shared_ptr<Model>(std::move(model));
}

}  // namespace accel::embed
