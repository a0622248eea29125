// ModelFolder::read on the real all-MiniLM-L6-v2 folder, and on folders the tests write: the same configs with
// one thing changed, each of which must be read as changed or refused naming the file and the field.
#include "embed/model_folder.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>

#include "testing/model_folder.hpp"
#include "testing/scratch_directory.hpp"

namespace accel::embed {
namespace {

using ::testing::HasSubstr;

const std::filesystem::path kModelFolder = testing::model_folder(ACCEL_TEST_MODEL_FOLDER);

TEST(ModelFolderRealTest, ReadsAllMiniLmL6V2) {
  ACCEL_SKIP_WITHOUT_MODEL_FOLDER(kModelFolder);
  const Result<ModelFolder> model = ModelFolder::read(kModelFolder);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  const BertConfig& config = model->config;
  EXPECT_EQ(config.hidden_size, 384u);
  EXPECT_EQ(config.num_attention_heads, 12u);
  EXPECT_EQ(config.head_size(), 32u);
  EXPECT_EQ(config.num_hidden_layers, 6u);
  EXPECT_EQ(config.intermediate_size, 1536u);
  EXPECT_EQ(config.hidden_act, Gelu::erf);
  EXPECT_EQ(config.layer_norm_eps, 1e-12);
  EXPECT_EQ(config.max_position_embeddings, 512u);
  EXPECT_EQ(config.vocab_size, 30522u);
  EXPECT_EQ(config.type_vocab_size, 2u);
  EXPECT_EQ(config.pad_token_id, 0u);
  EXPECT_EQ(model->max_seq_length, 256u);
  EXPECT_EQ(model->max_sequence_length(), 256u);
  EXPECT_FALSE(model->do_lower_case);
  EXPECT_TRUE(model->normalize);
  EXPECT_EQ(model->tokenizer_json, kModelFolder / "tokenizer.json");
  EXPECT_EQ(model->weights, kModelFolder / "model.safetensors");
}

const std::map<std::string, std::string> kMiniLmFiles = {
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
    EXPECT_THAT(message, HasSubstr((dir_.path() / file).native()));
    if (!field.empty()) {
      EXPECT_THAT(message, HasSubstr("field '" + field + "'"));
    }
    EXPECT_THAT(message, HasSubstr(what));
  }

  accel::testing::ScratchDirectory dir_{"model_folder_test"};
};

TEST_F(ModelFolderTest, ReadsTheConfigsAsWritten) {
  const Result<ModelFolder> model = read_with({});
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  EXPECT_EQ(model->config.hidden_size, 384u);
  EXPECT_TRUE(model->normalize);
  EXPECT_EQ(model->weights, dir_.path() / "model.safetensors");
}

TEST_F(ModelFolderTest, RecordsTheTanhGeluAndAMissingNormalize) {
  for (const std::string act : {"gelu_new", "gelu_pytorch_tanh"}) {
    std::string config = kMiniLmFiles.at("config.json");
    config.replace(config.find("\"gelu\""), 6, "\"" + act + "\"");
    const Result<ModelFolder> model = read_with({{"config.json", config}});
    ASSERT_TRUE(model.ok()) << model.status().to_string();
    EXPECT_EQ(model->config.hidden_act, Gelu::tanh);
  }
  const Result<ModelFolder> model = read_with({{"modules.json", R"([
      {"path": "", "type": "sentence_transformers.models.Transformer"},
      {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}])"}});
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  EXPECT_FALSE(model->normalize);
}

TEST_F(ModelFolderTest, CapsTheSequenceLengthByThePositionEmbeddings) {
  const Result<ModelFolder> model =
      read_with({{"sentence_bert_config.json", R"({"max_seq_length": 1024, "do_lower_case": true})"}});
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  EXPECT_EQ(model->max_seq_length, 1024u);
  EXPECT_EQ(model->max_sequence_length(), 512u);
  EXPECT_TRUE(model->do_lower_case);
}

TEST_F(ModelFolderTest, FindsATransformerInItsOwnFolder) {
  const Result<ModelFolder> model = read_with({
      {"modules.json", R"([{"path": "0_Transformer", "type": "sentence_transformers.models.Transformer"},
                           {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}])"},
      {"0_Transformer/config.json", kMiniLmFiles.at("config.json")},
      {"0_Transformer/sentence_bert_config.json", kMiniLmFiles.at("sentence_bert_config.json")},
      {"0_Transformer/tokenizer.json", "{}"},
      {"0_Transformer/model.safetensors", "x"},
  });
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  EXPECT_EQ(model->weights, dir_.path() / "0_Transformer" / "model.safetensors");
}

TEST_F(ModelFolderTest, RefusesPoolingOtherThanMean) {
  expect_refused({{"1_Pooling/config.json",
                   R"({"word_embedding_dimension": 384, "pooling_mode_cls_token": true,
                       "pooling_mode_mean_tokens": false})"}},
                 "1_Pooling/config.json", "pooling_mode_mean_tokens", "only mean pooling");
  expect_refused({{"1_Pooling/config.json",
                   R"({"word_embedding_dimension": 384, "pooling_mode_mean_tokens": true,
                       "pooling_mode_max_tokens": true})"}},
                 "1_Pooling/config.json", "pooling_mode_max_tokens", "only pooling_mode_mean_tokens");
  expect_refused({{"1_Pooling/config.json",
                   R"({"word_embedding_dimension": 384, "pooling_mode_mean_tokens": true,
                       "pooling_mode_weightedmean_tokens": "yes"})"}},
                 "1_Pooling/config.json", "pooling_mode_weightedmean_tokens", "not true or false");
  expect_refused({{"1_Pooling/config.json", R"({"word_embedding_dimension": 768, "pooling_mode_mean_tokens": true})"}},
                 "1_Pooling/config.json", "word_embedding_dimension", "not the encoder's hidden_size 384");
}

TEST_F(ModelFolderTest, RefusesWhatTheEncoderDoesNotCompute) {
  const auto changed = [](const std::string& from, const std::string& to) {
    std::string config = kMiniLmFiles.at("config.json");
    config.replace(config.find(from), from.size(), to);
    return std::map<std::string, std::string>{{"config.json", config}};
  };
  expect_refused(changed(R"("bert")", R"("roberta")"), "config.json", "model_type", "'roberta' is not supported");
  expect_refused(changed(R"("hidden_act": "gelu")", R"("hidden_act": "relu")"), "config.json", "hidden_act",
                 "'relu' is not supported");
  expect_refused(changed(R"("absolute")", R"("relative_key")"), "config.json", "position_embedding_type",
                 "'relative_key' is not supported");
  expect_refused(changed(R"("num_attention_heads": 12)", R"("num_attention_heads": 7)"), "config.json",
                 "num_attention_heads", "7 does not divide hidden_size 384");
  expect_refused(changed(R"("pad_token_id": 0)", R"("pad_token_id": 40000)"), "config.json", "pad_token_id",
                 "outside the vocabulary");
}

TEST_F(ModelFolderTest, RefusesMissingAndMalformedFields) {
  const auto changed = [](const std::string& from, const std::string& to) {
    std::string config = kMiniLmFiles.at("config.json");
    config.replace(config.find(from), from.size(), to);
    return std::map<std::string, std::string>{{"config.json", config}};
  };
  expect_refused(changed(R"("hidden_size": 384,)", ""), "config.json", "hidden_size", "missing");
  expect_refused(changed(R"("model_type": "bert",)", ""), "config.json", "model_type", "missing");
  expect_refused(changed(R"("hidden_size": 384)", R"("hidden_size": -384)"), "config.json", "hidden_size",
                 "-384 is not an integer in [1, 2^32)");
  expect_refused(changed(R"("hidden_size": 384)", R"("hidden_size": "384")"), "config.json", "hidden_size",
                 "not an integer");
  expect_refused(changed(R"("num_hidden_layers": 6)", R"("num_hidden_layers": 0)"), "config.json", "num_hidden_layers",
                 "not an integer in [1, 2^32)");
  expect_refused(changed(R"("vocab_size": 30522)", R"("vocab_size": 4294967296)"), "config.json", "vocab_size",
                 "not an integer");
  expect_refused(changed(R"("layer_norm_eps": 1e-12)", R"("layer_norm_eps": 0)"), "config.json", "layer_norm_eps",
                 "not a positive number");
  expect_refused({{"config.json", R"({"model_type": "bert",)"}}, "config.json", "", "not valid JSON");
  expect_refused({{"config.json", "[]"}}, "config.json", "", "not a JSON object");
  expect_refused({{"sentence_bert_config.json", R"({"do_lower_case": false})"}}, "sentence_bert_config.json",
                 "max_seq_length", "missing");
  expect_refused({{"sentence_bert_config.json", R"({"max_seq_length": 256, "do_lower_case": 1})"}},
                 "sentence_bert_config.json", "do_lower_case", "not true or false");
  expect_refused({{"1_Pooling/config.json", R"({"pooling_mode_mean_tokens": true})"}}, "1_Pooling/config.json",
                 "word_embedding_dimension", "missing");
}

TEST_F(ModelFolderTest, RefusesModulesOtherThanTransformerPoolingNormalize) {
  expect_refused({{"modules.json", R"([{"path": "", "type": "sentence_transformers.models.Transformer"}])"}},
                 "modules.json", "", "is not a list of a Transformer, a Pooling and optionally a Normalize");
  expect_refused({{"modules.json", R"([
      {"path": "", "type": "sentence_transformers.models.Transformer"},
      {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
      {"path": "2_Dense", "type": "sentence_transformers.models.Dense"}])"}},
                 "modules.json", "[2].type", "'sentence_transformers.models.Dense' where a Normalize was expected");
  expect_refused({{"modules.json", R"([
      {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
      {"path": "", "type": "sentence_transformers.models.Transformer"}])"}},
                 "modules.json", "[0].type", "where a Transformer was expected");
  expect_refused({{"modules.json", R"([
      {"path": "", "type": "my_package.Transformer"},
      {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}])"}},
                 "modules.json", "[0].type", "'my_package.Transformer'");
  expect_refused({{"modules.json", R"([
      {"path": "../elsewhere", "type": "sentence_transformers.models.Transformer"},
      {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}])"}},
                 "modules.json", "[0].path", "leaves the folder");
  expect_refused({{"modules.json", R"([
      {"type": "sentence_transformers.models.Transformer"},
      {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}])"}},
                 "modules.json", "path", "missing");
  expect_refused({{"modules.json", ""}}, "modules.json", "", "cannot be read");
}

TEST_F(ModelFolderTest, RefusesAFolderWithoutItsTokenizerOrSafetensorsWeights) {
  expect_refused({{"tokenizer.json", ""}}, "tokenizer.json", "", "missing (the tokenizer)");
  expect_refused({{"model.safetensors", ""}}, "model.safetensors", "", "missing (the weights)");
  expect_refused({{"model.safetensors", ""}, {"pytorch_model.bin", "weights"}}, "model.safetensors", "",
                 "only safetensors weights are read, not pytorch_model.bin");
}

}  // namespace
}  // namespace accel::embed
