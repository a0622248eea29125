// ModelFolder::read on the real all-MiniLM-L6-v2 folder, and on folders the tests write: the same configs with
// one thing changed, each of which must be read as changed or refused naming the file and the field.
#include "embed/model_folder.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>

#include "model_folder_fixture.hpp"
#include "testing/model_folder.hpp"

namespace accel::embed {
namespace {

const std::filesystem::path kModelFolder = testing::model_folder(ACCEL_TEST_MODEL_FOLDER);

TEST(ModelFolderRealTest, ReadsAllMiniLmL6V2) {
  ACCEL_SKIP_WITHOUT_MODEL_FOLDER(kModelFolder);
  const Result<ModelFolder> model = ModelFolder::read(kModelFolder);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  const EncoderConfig& config = model->config;
  EXPECT_EQ(model->family->name, "BERT");
  EXPECT_EQ(model->head, Head::embedding);
  EXPECT_EQ(model->pooling, graph::PoolMode::mean);
  EXPECT_EQ(model->output_dimensions(), 384u);
  EXPECT_EQ(config.hidden_size, 384u);
  EXPECT_EQ(config.num_attention_heads, 12u);
  EXPECT_EQ(config.head_size(), 32u);
  EXPECT_EQ(config.num_hidden_layers, 6u);
  EXPECT_EQ(config.intermediate_size, 1536u);
  EXPECT_EQ(config.hidden_act, Activation::gelu_erf);
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
    EXPECT_EQ(model->config.hidden_act, Activation::gelu_tanh);
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

TEST_F(ModelFolderTest, ReadsEveryPoolingModeInBothForms) {
  const std::pair<std::string, graph::PoolMode> modes[] = {{"cls", graph::PoolMode::first},
                                                           {"mean", graph::PoolMode::mean},
                                                           {"max", graph::PoolMode::max},
                                                           {"lasttoken", graph::PoolMode::last},
                                                           {"mean_sqrt_len_tokens", graph::PoolMode::mean_sqrt_length},
                                                           {"weightedmean", graph::PoolMode::weighted_mean}};
  const std::map<std::string, std::string> flags = {{"cls", "pooling_mode_cls_token"},
                                                    {"mean", "pooling_mode_mean_tokens"},
                                                    {"max", "pooling_mode_max_tokens"},
                                                    {"lasttoken", "pooling_mode_lasttoken"},
                                                    {"mean_sqrt_len_tokens", "pooling_mode_mean_sqrt_len_tokens"},
                                                    {"weightedmean", "pooling_mode_weightedmean_tokens"}};
  for (const auto& [name, mode] : modes) {
    const Result<ModelFolder> current = read_with(
        {{"1_Pooling/config.json", R"({"word_embedding_dimension": 384, "pooling_mode": ")" + name + R"("})"}});
    ASSERT_TRUE(current.ok()) << name << ": " << current.status().to_string();
    EXPECT_EQ(current->pooling, mode) << name;
    const Result<ModelFolder> older = read_with(
        {{"1_Pooling/config.json", R"({"word_embedding_dimension": 384, "pooling_mode_mean_tokens": false, ")" +
                                       flags.at(name) + R"(": true})"}});
    ASSERT_TRUE(older.ok()) << name << ": " << older.status().to_string();
    EXPECT_EQ(older->pooling, mode) << name;
  }
}

TEST_F(ModelFolderTest, RefusesPoolingItCannotRun) {
  expect_refused({{"1_Pooling/config.json",
                   R"({"word_embedding_dimension": 384, "pooling_mode_cls_token": true,
                       "pooling_mode_mean_tokens": true})"}},
                 "1_Pooling/config.json", "pooling_mode_mean_tokens", "concatenated poolings are not supported");
  expect_refused({{"1_Pooling/config.json", R"({"word_embedding_dimension": 384, "pooling_mode_mean_tokens": false})"}},
                 "1_Pooling/config.json", "pooling_mode_mean_tokens", "no pooling mode is true");
  expect_refused({{"1_Pooling/config.json", R"({"word_embedding_dimension": 384, "pooling_mode": "median"})"}},
                 "1_Pooling/config.json", "pooling_mode", "'median' is not a pooling mode");
  expect_refused({{"1_Pooling/config.json",
                   R"({"word_embedding_dimension": 384, "pooling_mode_mean_tokens": true,
                       "pooling_mode_weightedmean_tokens": "yes"})"}},
                 "1_Pooling/config.json", "pooling_mode_weightedmean_tokens", "not true or false");
  expect_refused({{"1_Pooling/config.json",
                   R"({"word_embedding_dimension": 384, "pooling_mode": "mean", "include_prompt": false})"}},
                 "1_Pooling/config.json", "include_prompt", "without the prompt's tokens is not supported");
  expect_refused({{"1_Pooling/config.json", R"({"word_embedding_dimension": 768, "pooling_mode_mean_tokens": true})"}},
                 "1_Pooling/config.json", "word_embedding_dimension", "not the encoder's hidden size 384");
}

TEST_F(ModelFolderTest, RefusesWhatTheEncoderDoesNotCompute) {
  const auto changed = [](const std::string& from, const std::string& to) {
    std::string config = kMiniLmFiles.at("config.json");
    config.replace(config.find(from), from.size(), to);
    return std::map<std::string, std::string>{{"config.json", config}};
  };
  expect_refused(changed(R"("bert")", R"("gpt2")"), "config.json", "model_type",
                 "'gpt2' is not supported (supported: bert, roberta, xlm-roberta, camembert, distilbert, qwen3, qwen2, "
                 "modernbert, nomic_bert, new)");
  expect_refused(changed(R"("hidden_act": "gelu")", R"("hidden_act": "quick_gelu")"), "config.json", "hidden_act",
                 "'quick_gelu' is not supported");
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
  expect_refused({{"sentence_bert_config.json", R"({"max_seq_length": 256, "do_lower_case": 1})"}},
                 "sentence_bert_config.json", "do_lower_case", "not true or false");
  expect_refused({{"1_Pooling/config.json", R"({"pooling_mode_mean_tokens": true})"}}, "1_Pooling/config.json",
                 "word_embedding_dimension", "missing");
}

TEST_F(ModelFolderTest, RefusesModulesOutOfPlaceOrUnknown) {
  expect_refused({{"modules.json", "[]"}}, "modules.json", "", "is not a list of modules");
  expect_refused({{"modules.json", R"([
      {"path": "", "type": "sentence_transformers.models.Transformer"},
      {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
      {"path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
      {"path": "3_Dense", "type": "sentence_transformers.models.Dense"}])"}},
                 "modules.json", "[3].type", "'sentence_transformers.models.Dense' where nothing more was expected");
  expect_refused({{"modules.json", R"([
      {"path": "", "type": "sentence_transformers.models.Transformer"},
      {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
      {"path": "2_LayerNorm", "type": "sentence_transformers.models.LayerNorm"}])"}},
                 "modules.json", "[2].type", "'sentence_transformers.models.LayerNorm' where a Dense or a Normalize");
  expect_refused({{"modules.json", R"([
      {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
      {"path": "", "type": "sentence_transformers.models.Transformer"}])"}},
                 "modules.json", "[0].type", "where a Transformer or an MLMTransformer was expected");
  expect_refused({{"modules.json", R"([
      {"path": "", "type": "my_package.Transformer"},
      {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}])"}},
                 "modules.json", "[0].type", "'my_package.Transformer'");
  expect_refused({{"modules.json", R"([
      {"path": "../elsewhere", "type": "sentence_transformers.models.Transformer"},
      {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}])"}},
                 "modules.json", "[0].path", "leaves the folder");
  expect_refused({{"modules.json", R"([
      {"path": "", "type": "sentence_transformers.models.Transformer"},
      {"path": "2_Dense", "type": "sentence_transformers.models.Dense"}])"}},
                 "modules.json", "[1].type", "where a Pooling was expected");
  expect_refused({{"modules.json", "{"}}, "modules.json", "", "not valid JSON");
}

TEST_F(ModelFolderTest, ReadsDenseModulesAndChecksTheirWidths) {
  const std::string modules = R"([
      {"path": "", "type": "sentence_transformers.base.modules.Transformer"},
      {"path": "1_Pooling", "type": "sentence_transformers.base.modules.Pooling"},
      {"path": "2_Dense", "type": "sentence_transformers.base.modules.Dense"},
      {"path": "3_Normalize", "type": "sentence_transformers.base.modules.Normalize"}])";
  const Result<ModelFolder> model =
      read_with({{"modules.json", modules},
                 {"2_Dense/config.json", R"({"in_features": 384, "out_features": 64, "bias": false,
                                             "activation_function": "torch.nn.modules.linear.Identity"})"},
                 {"2_Dense/model.safetensors", "x"}});
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  ASSERT_EQ(model->dense.size(), 1u);
  EXPECT_EQ(model->dense[0].out_features, 64u);
  EXPECT_FALSE(model->dense[0].bias);
  EXPECT_EQ(model->dense[0].activation, Activation::identity);
  EXPECT_EQ(model->output_dimensions(), 64u);
  EXPECT_TRUE(model->normalize);
  expect_refused({{"modules.json", modules},
                  {"2_Dense/config.json", R"({"in_features": 256, "out_features": 64})"},
                  {"2_Dense/model.safetensors", "x"}},
                 "2_Dense/config.json", "in_features", "256 is not the width before it, 384");
  expect_refused({{"modules.json", modules},
                  {"2_Dense/config.json", R"({"in_features": 384, "out_features": 64,
                                              "activation_function": "torch.nn.modules.activation.Softmax"})"},
                  {"2_Dense/model.safetensors", "x"}},
                 "2_Dense/config.json", "activation_function",
                 "'torch.nn.modules.activation.Softmax' is not supported");
  expect_refused({{"modules.json", modules},
                  {"2_Dense/config.json", R"({"in_features": 384, "out_features": 64})"},
                  {"2_Dense/model.safetensors", ""}},
                 "2_Dense/model.safetensors", "", "missing (the Dense module's weights)");
}

TEST_F(ModelFolderTest, ReadsPromptsAndRefusesAnUnknownDefault) {
  const Result<ModelFolder> model =
      read_with({{"config_sentence_transformers.json",
                  R"({"prompts": {"query": "query: ", "document": ""}, "default_prompt_name": "query"})"}});
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  EXPECT_EQ(model->prompts.at("query"), "query: ");
  EXPECT_EQ(model->prompts.at("document"), "");
  EXPECT_EQ(model->default_prompt_name, "query");
  expect_refused(
      {{"config_sentence_transformers.json", R"({"prompts": {"query": "q: "}, "default_prompt_name": "x"})"}},
      "config_sentence_transformers.json", "default_prompt_name", "'x' is not one of the prompts");
  expect_refused({{"config_sentence_transformers.json", R"({"prompts": {"query": 3}})"}},
                 "config_sentence_transformers.json", "prompts.query", "is not a string");
}

TEST_F(ModelFolderTest, RefusesAFolderWithoutItsTokenizerOrSafetensorsWeights) {
  expect_refused({{"tokenizer.json", ""}}, "tokenizer.json", "", "missing (the tokenizer)");
  expect_refused({{"model.safetensors", ""}}, "model.safetensors", "", "missing (the weights)");
  expect_refused({{"model.safetensors", ""}, {"pytorch_model.bin", "weights"}}, "model.safetensors", "",
                 "only safetensors weights are read, not pytorch_model.bin");
}

}  // namespace
}  // namespace accel::embed
