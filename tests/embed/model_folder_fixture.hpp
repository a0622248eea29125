// The MiniLM folder's configs as the model-folder tests write them, and the fixture that writes them with one thing
// changed and reads them back (model_folder_test.cpp, model_folder_families_test.cpp).
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "embed/model_folder.hpp"
#include "testing/scratch_directory.hpp"

namespace accel::embed {

inline const std::map<std::string, std::string> kMiniLmFiles = {
    {"modules.json", R"([
      {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
      {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
      {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}])"},
    {"config.json", R"({"architectures": ["BertModel"], "hidden_act": "gelu", "hidden_size": 384,
      "intermediate_size": 1536, "layer_norm_eps": 1e-12, "max_position_embeddings": 512, "model_type": "bert",
      "num_attention_heads": 12, "num_hidden_layers": 6, "pad_token_id": 0, "position_embedding_type": "absolute",
      "type_vocab_size": 2, "vocab_size": 30522})"},
    {"sentence_bert_config.json", R"({"max_seq_length": 256, "do_lower_case": false})"},
    {"1_Pooling/config.json", R"({"word_embedding_dimension": 384, "pooling_mode_cls_token": false,
      "pooling_mode_mean_tokens": true, "pooling_mode_max_tokens": false,
      "pooling_mode_mean_sqrt_len_tokens": false})"},
    {"tokenizer.json", "{}"},
    {"model.safetensors", "not read by ModelFolder"},
};

class ModelFolderTest : public ::testing::Test {
 protected:
  // The MiniLM folder's configs with `changes` applied (an empty text removes the file), read back.
  Result<ModelFolder> read_with(const std::map<std::string, std::string>& changes) {
    std::map<std::string, std::string> files = kMiniLmFiles;
    for (const auto& [name, text] : changes) files[name] = text;
    for (const auto& [name, text] : files) {
      if (text.empty()) {
        std::filesystem::remove(dir_.path() / name);
        continue;
      }
      std::filesystem::create_directories((dir_.path() / name).parent_path());
      std::ofstream(dir_.path() / name) << text;
    }
    return ModelFolder::read(dir_.path());
  }

  // Reading must fail with invalid_argument naming `file` and `field`, and saying `what`.
  void expect_refused(const std::map<std::string, std::string>& changes, const std::string& file,
                      const std::string& field, const std::string& what) {
    const Result<ModelFolder> model = read_with(changes);
    ASSERT_FALSE(model.ok()) << "changes to " << changes.begin()->first << " were accepted";
    EXPECT_EQ(model.code(), Code::invalid_argument);
    const std::string message(model.status().message());
    EXPECT_THAT(message, ::testing::HasSubstr((dir_.path() / file).native()));
    if (!field.empty()) {
      EXPECT_THAT(message, ::testing::HasSubstr("field '" + field + "'"));
    }
    EXPECT_THAT(message, ::testing::HasSubstr(what));
  }

  accel::testing::ScratchDirectory dir_{"model_folder_test"};
};

}  // namespace accel::embed
