// embed::ModelFolder::read: a sentence-transformers folder's JSON files. The folder holds the JSON files of
// all-MiniLM-L6-v2 as written below; the input replaces one of them.
//
// Input: one byte choosing the file (modules.json, config.json, sentence_bert_config.json or the pooling's
// config.json), then its contents.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "embed/model_folder.hpp"
#include "temporary_directory.hpp"

namespace {

struct File {
  std::string_view path;
  std::string_view json;
};

// What a real folder's files hold, cut to the fields that are read.
constexpr std::array<File, 4> kFiles = {{
    {"modules.json", R"([{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"},)"
                     R"({"idx":1,"name":"1","path":"1_Pooling","type":"sentence_transformers.models.Pooling"},)"
                     R"({"idx":2,"name":"2","path":"2_Normalize","type":"sentence_transformers.models.Normalize"}])"},
    {"config.json",
     R"({"model_type":"bert","hidden_size":384,"num_attention_heads":12,"num_hidden_layers":6,)"
     R"("intermediate_size":1536,"hidden_act":"gelu","layer_norm_eps":1e-12,"max_position_embeddings":512,)"
     R"("vocab_size":30522,"type_vocab_size":2,"pad_token_id":0,"position_embedding_type":"absolute"})"},
    {"sentence_bert_config.json", R"({"max_seq_length":256,"do_lower_case":false})"},
    {"1_Pooling/config.json",
     R"({"word_embedding_dimension":384,"pooling_mode_cls_token":false,"pooling_mode_mean_tokens":true,)"
     R"("pooling_mode_max_tokens":false,"pooling_mode_mean_sqrt_len_tokens":false})"},
}};

std::span<const std::byte> bytes_of(std::string_view text) { return std::as_bytes(std::span(text)); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace accel;
  static fuzzing::TemporaryDirectory folder("accel-fuzz-model-folder");
  if (size < 1) return 0;
  std::filesystem::create_directories(folder.path() / "1_Pooling");
  for (const File& file : kFiles) fuzzing::write_file(folder.path() / file.path, bytes_of(file.json));
  for (std::string_view empty : {"tokenizer.json", "model.safetensors"}) {
    fuzzing::write_file(folder.path() / empty, {});
  }
  fuzzing::write_file(folder.path() / kFiles[data[0] % kFiles.size()].path,
                      std::span<const std::byte>(reinterpret_cast<const std::byte*>(data) + 1, size - 1));
  (void)embed::ModelFolder::read(folder.path());
  return 0;
}
