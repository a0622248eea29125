/// @file
/// accel::embed::Model — a transformer encoder with its head, loaded from a model folder (sentence-transformers'
/// or a bare transformers checkpoint) and run on an accel Device. One API for every family and head: texts (or
/// token ids) in; out, one row per input of a dense embedding, a sparse vocabulary-sized SPLADE vector, or a
/// cross-encoder's scores.
///
/// Texts are tokenised on the host threads (the folder's tokenizer.json, any pipeline), packed end to end without
/// padding, and run by the model's compiled graph (graph/), whose executables are cached per bucket of the total
/// token count. Every call returns a Future, like the rest of accel; calls may come from any thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "accel/core/cache_stats.hpp"
#include "accel/core/dtype.hpp"
#include "accel/core/future.hpp"
#include "accel/core/result.hpp"
#include "accel/device/device.hpp"
#include "accel/device/requests.hpp"
#include "accel/text/tokenizer.hpp"

namespace accel::embed {

/// The tokens a run holds unless ModelOptions::batch_tokens says otherwise, for a model of `hidden_size` on a device
/// of `kind`: on the CPU 16,384; on a GPU the most tokens, from 16,384 up to 65,536 in powers of two, whose hidden
/// states in 16 bits fit 48 MiB (65,536 for all-MiniLM-L6-v2's 384, 32,768 for BERT-base's 768, 16,384 from 1,024
/// on). Either way at least the model's longest sequence (Qwen3-Embedding's 32,768), so that any folder loads as it
/// is. docs/PERFORMANCE.md §63 measured the GPU's sizes.
[[nodiscard]] std::uint32_t default_batch_tokens(std::uint32_t max_sequence_length, std::uint32_t hidden_size,
                                                 DeviceKind kind) noexcept;

/// How Model::load reads a folder and runs the model.
struct ModelOptions {
  /// A sentence-transformers folder (modules.json and the modules it lists) or a transformers checkpoint
  /// (config.json, tokenizer.json, model.safetensors): embed/model_folder.hpp says what loads.
  std::filesystem::path folder;
  /// The dtype the encoder computes in: empty picks f32 on the CPU and, on a CUDA device, f16 (bf16 for a decoder).
  std::optional<DType> compute;
  /// The most tokens one packed run holds; larger calls are split into runs of at most this many tokens. 0, the
  /// default: default_batch_tokens of the model and the device. Below that sequence a folder is refused: a run
  /// holds one whole sequence. A SPLADE model runs at most 2^26 / vocabulary tokens at once (2,048 for BERT's
  /// vocabulary): each token's logits over the whole vocabulary are held before they are pooled.
  std::uint32_t batch_tokens = 0;
  /// Host threads that tokenise a call's texts (0: the hardware's).
  unsigned tokenizer_threads = 0;
  /// What load() runs before it hands the model out. Always one tiny batch (the smallest shape compiled). With
  /// this set, on a device that replays runs as captured graphs (CUDA), also a batch of every shape (tokens and
  /// sequences rungs, BatchBucket) a run of at most `batch_tokens` can take: the first batch of a shape compiles and
  /// captures its graph and times its products' algorithms, which held a server's batches for 50-80 ms when it came
  /// mid-traffic (docs/PERFORMANCE.md §71-72). It costs a second or two at load (1.1-1.5 s for all-MiniLM-L6-v2 on
  /// an H200) and little memory (a CUDA stream's executables share one arena); for servers, where a one-off call
  /// would wait for shapes it never uses.
  bool warm_every_batch_size = false;
};

/// What to do with a text longer than the model's max_sequence_length (special tokens included): keep its
/// beginning (right: the end is cut), keep its end, or refuse it.
enum class Truncation : std::uint8_t { right, left, refuse };

/// What a model's rows hold.
enum class Output : std::uint8_t {
  dense,   ///< an embedding (pooled, projected, normalised as the folder says)
  sparse,  ///< one weight per vocabulary entry, most of them 0 (SPLADE)
  scores,  ///< a cross-encoder's num_labels scores (logits, before any sigmoid or softmax)
};
/// The enumerator's name, for messages and model descriptions.
[[nodiscard]] std::string_view to_string(Output output) noexcept;

/// How a call tokenises its texts and shapes its rows.
struct EmbedOptions {
  Truncation truncation = Truncation::right;  ///< what happens to a text longer than max_sequence_length
  /// Text put before each input, as sentence-transformers does: `prompt` itself, or the folder's prompt of that
  /// name (config_sentence_transformers.json). Neither: the folder's default prompt, if it names one.
  std::optional<std::string> prompt;
  std::optional<std::string> prompt_name;  ///< the folder's prompt of this name (config_sentence_transformers.json)
  /// Dense output only: keep the first this many dimensions (Matryoshka), then scale to unit length again if the
  /// model normalises. 0: all of them.
  std::uint32_t dimensions = 0;
};

/// The shape a packed batch is run at: its total tokens and its sequences, each rounded up to its ladder's rung.
struct BatchBucket {
  std::uint32_t tokens = 0;     ///< the batch's tokens, rounded up to the tokens ladder's rung
  std::uint32_t sequences = 0;  ///< its sequences, rounded up to the sequences ladder's rung
  /// Equal when both counts are.
  friend bool operator==(const BatchBucket&, const BatchBucket&) = default;
};

/// Token ids of several sequences packed end to end: sequence i is ids[offsets[i], offsets[i + 1]).
struct TokenBatch {
  std::vector<std::int32_t> ids;          ///< the token ids of every sequence, end to end
  std::vector<std::uint32_t> offsets{0};  ///< where each sequence starts, and one past the last
  /// Empty, or one per id: the segment of a text pair (0 or 1), which a cross-encoder of a family with token
  /// types reads.
  std::vector<std::int32_t> type_ids;

  /// The number of sequences.
  [[nodiscard]] std::size_t sequences() const noexcept { return offsets.empty() ? 0 : offsets.size() - 1; }
  /// The number of ids in sequence `sequence`.
  [[nodiscard]] std::uint32_t length(std::size_t sequence) const noexcept {
    return offsets[sequence + 1] - offsets[sequence];
  }
  /// Adds a sequence (and its type ids, if the batch has them).
  void append(std::span<const std::int32_t> sequence, std::span<const std::int32_t> types = {});
};

/// A batch that runs in `bucket`: `bucket.sequences` sequences of `bucket.tokens` ids in all, as even as can be,
/// every id `id`. Only its shape matters: it compiles (or warms) that bucket.
[[nodiscard]] TokenBatch batch_filling(BatchBucket bucket, std::int32_t id);

/// What a call returns: one row per input, and the tokens each input ran with.
struct Embeddings {
  std::uint32_t dimensions = 0;       ///< the width of a row (for sparse output, the vocabulary's)
  std::vector<float> values;          ///< row-major: one row of `dimensions` per input, in input order
  std::vector<std::uint32_t> tokens;  ///< tokens each input ran with (after truncation, special tokens included)

  /// The number of rows.
  [[nodiscard]] std::size_t count() const noexcept { return tokens.size(); }
  /// Row `index`.
  [[nodiscard]] std::span<const float> row(std::size_t index) const noexcept {
    return {values.data() + index * dimensions, dimensions};
  }
  /// A row's nonzero entries (sparse output), in index order.
  [[nodiscard]] std::vector<std::pair<std::uint32_t, float>> nonzeros(std::size_t index) const;
};

/// Where Model::load spent its time, so that a slow start can be traced to its stage.
struct ModelLoadTimes {
  double device_open_ms = 0;  ///< Model::open only: opening the device, alongside the read and the conversion
  double read_ms = 0;         ///< the folder checked, the tokenizer loaded, the weights mapped and checked
  double convert_ms = 0;      ///< the weights converted to the compute dtype (again, if the device's kind surprised)
  double upload_ms = 0;       ///< the weights and staging buffers placed on the device
  double warm_ms = 0;         ///< warm-up batches compiled (or loaded from the disk cache) and run
};

/// What a loaded model is: its folder, family, head, sizes, tokenizer, prompts and where it runs.
struct ModelInfo {
  std::string name;                       ///< the folder's name
  std::string family;                     ///< "BERT", "RoBERTa", ...
  std::string model_type;                 ///< config.json's
  Output output = Output::dense;          ///< what the rows hold
  std::string head;                       ///< "mean pooling, Dense 384->256 tanh, normalised", "classifier", "SPLADE"
  std::uint32_t dimensions = 0;           ///< the width of each row: the embedding's, the vocabulary's or num_labels
  std::uint32_t max_sequence_length = 0;  ///< sentence_bert_config.json's max_seq_length (capped by the positions)
  std::uint32_t layers = 0;               ///< encoder layers
  std::uint32_t hidden = 0;               ///< the hidden size
  std::uint32_t vocabulary = 0;           ///< vocabulary entries
  std::uint32_t batch_tokens = 0;         ///< as run (a SPLADE model's may be below the options')
  bool normalized = false;                ///< whether dense rows are scaled to unit length
  std::string tokenizer;                  ///< the tokenizer's pipeline, as Tokenizer::describe says
  std::map<std::string, std::string, std::less<>> prompts;  ///< the folder's prompts, by name
  std::string default_prompt_name;                          ///< the prompt used when a call names none; empty: none
  std::vector<std::string> labels;  ///< a classifier's: the name of each score (config.json's id2label)
  DType compute = DType::f32;       ///< the dtype the encoder computes in
  std::string device;               ///< the device it runs on, as DeviceInfo names it ("cpu:0", "cuda:0 (NVIDIA H200)")
  ModelLoadTimes load;              ///< where loading spent its time
};

/// What a model has run so far.
struct ModelStats {
  std::uint64_t runs = 0;           ///< packed runs of the encoder
  std::uint64_t sequences = 0;      ///< input sequences run
  std::uint64_t tokens = 0;         ///< real tokens run
  std::uint64_t padded_tokens = 0;  ///< tokens run beyond the real ones (the tail of each run's bucket)
  std::vector<CacheStats> caches;   ///< the compiled graph's executable caches
};

/// The folder an accel command embeds with when none is named: $ACCEL_MODEL_DIR, else models/all-MiniLM-L6-v2
/// beside the program's bin/ folder (how scripts/gpu-bundle ships it), else the one scripts/setup installs in the
/// source tree this build came from.
[[nodiscard]] std::filesystem::path default_model_folder();

/// How Model::open gets its device: the kind it will be, whether it runs in this process, and the function that
/// opens it. Should the device opened be of another kind, the weights are converted again for it.
struct DeviceOpener {
  DeviceKind kind = DeviceKind::cpu;            ///< the kind of device `open` makes
  Isolation isolation = Isolation::in_process;  ///< whether that device runs in this process
  std::function<Result<Device>()> open;         ///< opens the device (on a thread of its own)
};

/// A loaded encoder and its head on one device; every call returns a Future and may come from any thread.
class Model {
 public:
  /// Reads the folder (refusing, with the file and field named, what is not supported), loads the weights
  /// into `device` once (converted to the compute dtype) and warms it (ModelOptions::warm_every_batch_size).
  static Result<std::shared_ptr<Model>> load(const Device& device, ModelOptions options);
  /// load, with the device opened on another thread while this one reads the folder and converts the weights for
  /// the device's kind: a CUDA context takes longer to create (~200 ms) than both. The model keeps the device.
  static Result<std::shared_ptr<Model>> open(const DeviceOpener& device, ModelOptions options);
  virtual ~Model() = default;

  /// Token ids of each text (prompt and special tokens included). invalid_argument names the index of a text that
  /// is not valid UTF-8 or (Truncation::refuse) longer than max_sequence_length, or the prompt name that is not
  /// the folder's.
  [[nodiscard]] virtual Result<TokenBatch> tokenize(std::span<const std::string> texts,
                                                    const EmbedOptions& options = {}) const = 0;
  /// Each text (with its prompt) tokenised whole, never cut: its ids, vocabulary entries, byte offsets into the
  /// prompted text and special-token flags, as a tokenize endpoint shows them.
  [[nodiscard]] virtual Result<std::vector<text::Encoding>> encode(std::span<const std::string> texts,
                                                                   const EmbedOptions& options,
                                                                   bool add_special_tokens = true) const = 0;
  /// tokenize, then embed_tokens, then (dense output) keep options.dimensions.
  [[nodiscard]] virtual Future<Embeddings> embed(std::vector<std::string> texts, EmbedOptions options = {}) = 0;
  /// Token and type ids of (query, passage) for each passage, each pair cut longest first to max_sequence_length
  /// (Truncation::refuse: refused instead, naming the passage).
  [[nodiscard]] virtual Result<TokenBatch> tokenize_pairs(std::string_view query, std::span<const std::string> passages,
                                                          Truncation truncation = Truncation::right) const = 0;
  /// tokenize_pairs, then embed_tokens: a cross-encoder's scores of the query with each passage.
  /// failed_precondition for a model whose output is not Output::scores.
  [[nodiscard]] virtual Future<Embeddings> rerank(std::string query, std::vector<std::string> passages,
                                                  Truncation truncation = Truncation::right) = 0;
  /// The text `ids` stand for, as the folder's tokenizer decodes them (text::Tokenizer::decode).
  [[nodiscard]] virtual Result<std::string> decode(std::span<const std::int32_t> ids,
                                                   bool skip_special_tokens = true) const = 0;
  /// The encoder's last hidden states of each token of `batch`, before any pooling or head (what TEI's /embed_all
  /// answers): `values` holds one row of `dimensions` (the hidden size) per token, sequence after sequence, and
  /// `tokens` each sequence's count of them, so that count() is the number of sequences but the rows number
  /// the batch's ids. Checked as embed_tokens checks.
  [[nodiscard]] virtual Future<Embeddings> embed_token_vectors(TokenBatch batch) = 0;
  /// Embeds sequences of token ids. invalid_argument for an id outside the vocabulary, an empty sequence or one
  /// longer than max_sequence_length, naming the sequence.
  [[nodiscard]] virtual Future<Embeddings> embed_tokens(TokenBatch batch) = 0;

  /// What the model is (fixed when loaded).
  [[nodiscard]] virtual const ModelInfo& info() const noexcept = 0;
  /// What the model has run so far.
  [[nodiscard]] virtual ModelStats stats() const = 0;
  /// Every bucket a batch of this model can run in, as its compiled graph's ladders give them: each compiles (or
  /// loads from the disk cache) once; `accel cache warm` runs them all.
  [[nodiscard]] virtual std::vector<BatchBucket> buckets() const = 0;
  /// The device the model runs on.
  [[nodiscard]] virtual const Device& device() const noexcept = 0;
};

}  // namespace accel::embed
