// ModernBERT's folders: the committed tiny ones (tests/embed/data/families/modernbert_*) read as transformers 5
// wrote them, the same config as transformers 4 wrote it, and copies changed one field or one tensor at a time,
// each refused naming the file and the field or tensor.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <functional>

#include "embed/model_folder.hpp"
#include "embed/model_weights.hpp"
#include "embed/safetensors_writer.hpp"
#include "testing/changed_model_folder.hpp"

namespace accel::embed {
namespace {

using ::testing::HasSubstr;

const std::filesystem::path& kFamilies = testing::kFamilyFolders;

class ModernBertFolderTest : public testing::ChangedModelFolder {
 protected:
  ModernBertFolderTest() : ChangedModelFolder("modernbert_folder_test") {}
};

TEST_F(ModernBertFolderTest, ReadsLayerTypesRotaryBasesAndBiasesAsTransformers5WritesThem) {
  const Result<ModelFolder> plain = ModelFolder::read(kFamilies / "modernbert_mean_norm");
  ASSERT_TRUE(plain.ok()) << plain.status().to_string();
  const EncoderConfig& c = plain->config;
  EXPECT_EQ(plain->family->name, "ModernBERT");
  EXPECT_TRUE(c.rotary_encoder && !c.decoder);
  EXPECT_EQ(c.sliding_layers, (std::vector<bool>{false, true, true}));
  EXPECT_EQ(c.local_window, 4u);  // local_attention 8: 4 keys on either side
  EXPECT_EQ(c.rope_theta, 1000.0);
  EXPECT_EQ(c.local_rope_theta, 50.0);
  EXPECT_FALSE(c.norm_bias || c.qkv_bias || c.output_bias || c.mlp_bias);
  EXPECT_EQ(c.head_size(), 8u);
  EXPECT_EQ(c.layer_norm_eps, 1e-5);
  EXPECT_EQ(c.hidden_act, Activation::gelu_erf);
  const Result<ModelFolder> biased = ModelFolder::read(kFamilies / "modernbert_bias_cls");
  ASSERT_TRUE(biased.ok()) << biased.status().to_string();
  EXPECT_EQ(biased->config.sliding_layers, (std::vector<bool>{true, false, true}));  // layer_types over every_n
  EXPECT_TRUE(biased->config.norm_bias && biased->config.qkv_bias && biased->config.mlp_bias);
}

TEST_F(ModernBertFolderTest, ReadsTheConfigAsTransformers4WroteIt) {
  const Result<ModelFolder> v4 = read_changed("modernbert_mean_norm", [](nlohmann::json& config) {
    config.erase("layer_types");
    config.erase("rope_parameters");
    config["global_attn_every_n_layers"] = 2;
    config["global_rope_theta"] = 160000.0;
    config["local_rope_theta"] = nullptr;  // the global one
    config["local_attention"] = 128;
  });
  ASSERT_TRUE(v4.ok()) << v4.status().to_string();
  EXPECT_EQ(v4->config.sliding_layers, (std::vector<bool>{false, true, false}));
  EXPECT_EQ(v4->config.rope_theta, 160000.0);
  EXPECT_EQ(v4->config.local_rope_theta, 160000.0);
  EXPECT_EQ(v4->config.local_window, 64u);
}

TEST_F(ModernBertFolderTest, RefusesWhatItDoesNotRunNamingTheField) {
  const std::string name = "modernbert_mean_norm";
  expect_refused(
      name, [](auto& c) { c["layer_types"].erase(0); }, "layer_types",
      "is not a list of num_hidden_layers (3) layer types");
  expect_refused(
      name, [](auto& c) { c["layer_types"][1] = "chunked_attention"; }, "layer_types",
      "\"chunked_attention\" is not full_attention or sliding_attention");
  expect_refused(
      name, [](auto& c) { c["rope_parameters"]["sliding_attention"]["rope_type"] = "yarn"; },
      "rope_parameters.sliding_attention", "rope type \"yarn\" is not supported");
  expect_refused(
      name, [](auto& c) { c["rope_parameters"]["full_attention"]["rope_theta"] = 0.5; },
      "rope_parameters.full_attention", "rope_theta 0.5 is not a number above 1");
  expect_refused(
      name, [](auto& c) { c["rope_parameters"]["chunked"] = nlohmann::json::object(); }, "rope_parameters",
      "'chunked' is not a layer type");
  expect_refused(
      name, [](auto& c) { c["local_attention"] = 1; }, "local_attention", "is below 2");
  expect_refused(
      name, [](auto& c) { c["global_attn_every_n_layers"] = 0; }, "global_attn_every_n_layers", "is 0");
  expect_refused(
      name, [](auto& c) { c["hidden_activation"] = "quick_gelu"; }, "hidden_activation",
      "'quick_gelu' is not supported");
  expect_refused(
      name, [](auto& c) { c["num_attention_heads"] = 5; }, "num_attention_heads", "5 does not divide hidden_size 32");
  expect_refused(
      name, [](auto& c) { c["norm_bias"] = "no"; }, "norm_bias", "");
  expect_refused(
      name, [](auto& c) { c["architectures"] = {"ModernBertForSequenceClassification"}; }, "architectures",
      "a classifier head is not supported for the ModernBERT family", true);
  expect_refused(
      name, [](auto& c) { c["architectures"] = {"ModernBertForMaskedLM"}; }, "architectures",
      "a splade head is not supported for the ModernBERT family", true);
}

TEST_F(ModernBertFolderTest, SplitsTheFusedProjectionsIntoRowRanges) {
  const Result<ModelFolder> folder = ModelFolder::read(kFamilies / "modernbert_bias_cls");
  ASSERT_TRUE(folder.ok());
  const Result<ModelWeights> weights = ModelWeights::open(*folder);
  ASSERT_TRUE(weights.ok()) << weights.status().to_string();
  const ModelParameters& p = weights->parameters;
  ASSERT_EQ(p.rotary_layers.size(), 3u);
  EXPECT_FALSE(p.rotary_layers[0].attention_norm.has_value());  // the first layer's is an Identity
  ASSERT_TRUE(p.rotary_layers[1].attention_norm.has_value());
  EXPECT_TRUE(p.rotary_layers[1].attention_norm->beta.has_value());
  const RotaryEncoderLayerParameters& layer = p.rotary_layers[2];
  EXPECT_EQ(weights->sources.at(layer.key.weight.name).tensor, "layers.2.attn.Wqkv.weight");
  EXPECT_EQ(weights->sources.at(layer.key.weight.name).first_row, 32u);
  EXPECT_EQ(weights->sources.at(layer.value.bias->name).first_row, 64u);
  EXPECT_EQ(layer.value.weight.shape, (std::vector<std::uint64_t>{32, 32}));
  EXPECT_EQ(weights->sources.at(layer.gate.weight.name).first_row, 64u);
  EXPECT_EQ(layer.gate.weight.shape, (std::vector<std::uint64_t>{64, 32}));
  const Result<ModelFolder> plain = ModelFolder::read(kFamilies / "modernbert_mean_norm");
  ASSERT_TRUE(plain.ok());
  const Result<ModelWeights> unbiased = ModelWeights::open(*plain);
  ASSERT_TRUE(unbiased.ok()) << unbiased.status().to_string();
  EXPECT_FALSE(unbiased->parameters.embeddings_norm.beta.has_value());
  EXPECT_FALSE(unbiased->parameters.rotary_layers[1].query.bias.has_value());
}

TEST_F(ModernBertFolderTest, RefusesMissingAndMisshapedTensorsByName) {
  const auto find = [](std::vector<testing::WrittenTensor> & tensors, const std::string& name) -> auto& {
    for (auto& t : tensors)
      if (t.name == name) return t;
    throw std::runtime_error(name);
  };
  expect_weights_refused(open_changed("modernbert_mean_norm",
                                      [&](auto& t) {
                                        find(t, "layers.1.attn.Wqkv.weight").shape = {95, 32};
                                      }),
                         "'layers.1.attn.Wqkv.weight' is [95, 32], not [96, 32]");
  expect_weights_refused(open_changed("modernbert_mean_norm",
                                      [&](auto& t) {
                                        find(t, "layers.2.mlp.Wi.weight").shape = {64, 32};
                                      }),
                         "'layers.2.mlp.Wi.weight' is [64, 32], not [128, 32]");
  expect_weights_refused(
      open_changed(
          "modernbert_mean_norm",
          [](auto& t) { std::erase_if(t, [](const auto& x) { return x.name == "layers.1.attn_norm.weight"; }); }),
      "'layers.1.attn_norm.weight' is missing");
  expect_weights_refused(
      open_changed("modernbert_bias_cls",
                   [](auto& t) { std::erase_if(t, [](const auto& x) { return x.name.ends_with(".bias"); }); }),
      "'embeddings.norm.bias' is missing");
  expect_weights_refused(
      open_changed("modernbert_mean_norm", [&](auto& t) { find(t, "final_norm.weight").dtype = "I32"; }),
      "'final_norm.weight' is I32, not a float type");
}

}  // namespace
}  // namespace accel::embed
