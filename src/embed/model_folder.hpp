// accel::embed::ModelFolder — a model folder's configuration, read and checked before any weight is loaded, so
// that an unsupported model is refused up front with the file and field that rule it out.
//
// Two kinds of folder load:
//  - a sentence-transformers folder: modules.json lists a Transformer (its folder holds config.json,
//    tokenizer.json, model.safetensors, sentence_bert_config.json), then a Pooling (1_Pooling/config.json: cls,
//    mean, max, lasttoken, mean_sqrt_len_tokens or weightedmean, as the older pooling_mode_* booleans or the
//    newer pooling_mode string), any Dense projections (2_Dense/), and optionally a Normalize; or, for a sparse
//    encoder, an MLMTransformer and a SpladePooling. Module types are matched by class name, so the paths of
//    every sentence-transformers version load (sentence_transformers.models.*, ...base.modules.*).
//    config_sentence_transformers.json, when there, gives the prompts and the default prompt's name.
//  - a bare transformers checkpoint (no modules.json), with the defaults sentence-transformers gives one: a
//    *ForSequenceClassification is a reranker (CrossEncoder), a *ForMaskedLM a SPLADE sparse encoder, anything
//    else an encoder with mean pooling (a decoder, Qwen2/Qwen3: last-token pooling) and no normalisation;
//    max_seq_length is the position table's (a decoder's: max_position_embeddings). Decoders take the embedding
//    head, or the yes/no reranker head below; their other classifier and masked-LM checkpoints are refused.
//
// A yes/no reranker (Qwen3-Reranker): a decoder checkpoint (Qwen3ForCausalLM, or a *ForSequenceClassification
// architecture as vLLM's --hf_overrides rename it) whose config.json says `"classifier_from_token": ["no", "yes"]`, the
// key vLLM reads for this conversion. config.json alone decides, as Qwen3-Embedding declares Qwen3ForCausalLM too: a
// published Qwen3-Reranker folder takes that one line in its config.json (what vLLM's --hf_overrides adds). Its score
// is logit(yes) - logit(no) at the last token of the model card's prompt (YesNoReranker); sigmoid of it is P(yes).
// Refused: the key with a modules.json that pools (an embedder and a reranker at once), on an encoder family, or
// naming anything but two tokens.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "accel/core/result.hpp"
#include "accel/graph/graph.hpp"
#include "embed/families/family.hpp"

namespace accel::embed {

// What the model's graph ends with.
enum class Head : std::uint8_t {
  embedding,   // pooled (and projected, normalised) dense vectors
  classifier,  // num_labels scores per sequence (pair): a cross-encoder
  splade,      // vocabulary-sized vectors: log(1 + ReLU(MLM logits)) max-pooled over the tokens
};
[[nodiscard]] std::string_view to_string(Head head) noexcept;

// A sentence-transformers Dense module: y = activation(x Wᵀ + b).
struct DenseModule {
  std::filesystem::path weights;  // its model.safetensors: linear.weight [out, in], linear.bias [out]
  std::uint32_t in_features = 0;
  std::uint32_t out_features = 0;
  bool bias = true;
  Activation activation = Activation::identity;
};

// The yes/no head of a decoder reranker: one score, (lm_head[yes] - lm_head[no]) . h at the last token, over the
// model card's prompt: prefix + "<Instruct>: {instruction}\n<Query>: {query}\n<Document>: {passage}" + suffix,
// the middle cut (at the passage's end) so that the whole fits max_sequence_length.
struct YesNoReranker {
  std::string no_token = "no", yes_token = "yes";  // config.json's classifier_from_token, in its order
  std::int32_t no_id = -1, yes_id = -1;            // their ids in tokenizer.json (set when the tokenizer loads)
  bool tied = false;  // tie_word_embeddings: the rows come from the word embeddings, else from lm_head.weight
  std::string prefix =
      "<|im_start|>system\nJudge whether the Document meets the requirements based on the Query and the Instruct "
      "provided. Note that the answer can only be \"yes\" or \"no\".<|im_end|>\n<|im_start|>user\n";
  std::string suffix = "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n";
  std::string instruction = "Given a web search query, retrieve relevant passages that answer the query";
};

// A yes/no reranker's longest input, prompt included, unless its folder says less: the model card's max_length.
inline constexpr std::uint32_t kYesNoMaxLength = 8192;

struct ModelFolder {
  std::filesystem::path folder;
  const Family* family = nullptr;
  EncoderConfig config;
  Head head = Head::embedding;
  std::optional<YesNoReranker> yes_no;              // Head::classifier of a decoder: the yes/no reranker
  graph::PoolMode pooling = graph::PoolMode::mean;  // Head::embedding's
  std::vector<DenseModule> dense;
  bool normalize = false;                                   // embeddings are scaled to unit length (a Normalize module)
  std::map<std::string, std::string, std::less<>> prompts;  // by name
  std::string default_prompt_name;                          // empty: no prompt unless one is asked for
  std::uint32_t max_seq_length = 0;  // as the folder says, before the cap by the position embeddings
  bool do_lower_case = false;
  std::filesystem::path tokenizer_json;
  std::filesystem::path weights;  // the transformer's model.safetensors

  // Tokens the encoder can take, special tokens included: what the folder asks for, at most what the position
  // embeddings cover.
  [[nodiscard]] std::uint32_t max_sequence_length() const noexcept {
    return max_seq_length < config.positions() ? max_seq_length : config.positions();
  }
  // The width of each output row: the embedding's (after any Dense), num_labels, or the vocabulary.
  [[nodiscard]] std::uint32_t output_dimensions() const noexcept;

  // invalid_argument naming the file and the field for anything missing, malformed or unsupported.
  static Result<ModelFolder> read(const std::filesystem::path& folder);
};

// What modules.json says beyond what it sets in a ModelFolder, for the checks that need config.json.
struct SentenceTransformersModules {
  std::filesystem::path transformer;   // the Transformer's folder
  bool pooled = false;                 // a Pooling or SpladePooling follows it
  std::filesystem::path pooling_file;  // the Pooling's config.json
  std::uint32_t pooled_width = 0;      // its word_embedding_dimension
};

// sentence_transformers_modules.cpp: modules.json and the modules' own files, read into `model` (head, pooling,
// dense, normalize).
[[nodiscard]] Result<SentenceTransformersModules> read_sentence_transformers_modules(
    const std::filesystem::path& folder, ModelFolder& model);
// config_sentence_transformers.json's prompts, when the file is there.
[[nodiscard]] Status read_prompts(const std::filesystem::path& folder, ModelFolder& model);

}  // namespace accel::embed
