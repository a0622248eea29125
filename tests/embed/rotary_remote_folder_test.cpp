// NomicBert's and GTE's folders (tests/embed/data/families/nomic_* and gte_*, made by
// tests/embed/families/make_rotary_remote_models.py): config.json read with the remote code's field names and
// defaults, the fused projections split into row ranges, and copies changed one field or one tensor at a time, each
// refused naming the file and the field or tensor.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
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

class RotaryRemoteFolderTest : public testing::ChangedModelFolder {
 protected:
  RotaryRemoteFolderTest() : ChangedModelFolder("rotary_remote_folder_test") {}
};

// A tensor of the list by name.
testing::WrittenTensor& tensor(std::vector<testing::WrittenTensor>& tensors, const std::string& name) {
  for (testing::WrittenTensor& t : tensors)
    if (t.name == name) return t;
  throw std::runtime_error(name);
}

TEST_F(RotaryRemoteFolderTest, ReadsNomicBertsGpt2StyleConfig) {
  const Result<ModelFolder> plain = ModelFolder::read(kFamilies / "nomic_mean_norm");
  ASSERT_TRUE(plain.ok()) << plain.status().to_string();
  const EncoderConfig& c = plain->config;
  EXPECT_EQ(plain->family->name, "NomicBert");
  EXPECT_TRUE(c.rotary_encoder && c.post_norm && !c.decoder);
  EXPECT_EQ(c.hidden_size, 32u);
  EXPECT_EQ(c.head_size(), 8u);
  EXPECT_EQ(c.num_hidden_layers, 2u);
  EXPECT_EQ(c.intermediate_size, 256u) << "n_inner 64 rounded up to a multiple of 256";
  EXPECT_EQ(c.vocab_size, 2048u) << "vocab_size 2000 rounded up to pad_vocab_size_multiple 64";
  EXPECT_EQ(c.max_position_embeddings, 64u);
  EXPECT_EQ(c.type_vocab_size, 2u);
  EXPECT_EQ(c.rope_theta, 500.0);
  EXPECT_EQ(c.sliding_layers, (std::vector<bool>{false, false}));
  EXPECT_EQ(c.layer_norm_eps, 1e-12);
  EXPECT_EQ(c.hidden_act, Activation::silu);
  EXPECT_FALSE(c.qkv_bias || c.output_bias || c.mlp_bias || c.mlp_out_bias);
  EXPECT_TRUE(c.norm_bias);
  const Result<ModelFolder> biased = ModelFolder::read(kFamilies / "nomic_bias_geglu_cls");
  ASSERT_TRUE(biased.ok()) << biased.status().to_string();
  EXPECT_TRUE(biased->config.qkv_bias && biased->config.mlp_bias && biased->config.mlp_out_bias);
  EXPECT_EQ(biased->config.hidden_act, Activation::gelu_erf);
  // The config class's defaults where config.json says nothing.
  const Result<ModelFolder> defaults = read_changed("nomic_mean_norm", [](nlohmann::json& config) {
    for (const char* field : {"qkv_proj_bias", "mlp_fc1_bias", "mlp_fc2_bias", "n_inner", "pad_vocab_size_multiple",
                              "rotary_emb_interleaved", "rotary_scaling_factor", "prenorm", "causal"})
      config.erase(field);
    config["vocab_size"] = 2048;
  });
  ASSERT_TRUE(defaults.ok()) << defaults.status().to_string();
  EXPECT_TRUE(defaults->config.qkv_bias && defaults->config.mlp_bias && defaults->config.mlp_out_bias);
  EXPECT_EQ(defaults->config.intermediate_size, 256u) << "8/3 of 32 rounded up to 256";
}

TEST_F(RotaryRemoteFolderTest, ReadsGtesConfig) {
  const Result<ModelFolder> plain = ModelFolder::read(kFamilies / "gte_ntk_cls");
  ASSERT_TRUE(plain.ok()) << plain.status().to_string();
  const EncoderConfig& c = plain->config;
  EXPECT_EQ(plain->family->name, "GTE");
  EXPECT_TRUE(c.rotary_encoder && c.post_norm && !c.decoder);
  EXPECT_EQ(c.intermediate_size, 64u);
  EXPECT_EQ(c.vocab_size, 2000u);
  EXPECT_EQ(c.type_vocab_size, 0u);
  EXPECT_EQ(c.rope_theta, 4000.0) << "rope_theta times the NTK factor";
  EXPECT_DOUBLE_EQ(c.rope_scale, std::pow(2.0, -2.0 / 8)) << "factor^(-2 / head_dim)";
  EXPECT_EQ(c.hidden_act, Activation::gelu_erf);
  EXPECT_TRUE(c.qkv_bias && c.output_bias && !c.mlp_bias && c.mlp_out_bias && c.norm_bias);
  const Result<ModelFolder> typed = ModelFolder::read(kFamilies / "gte_types_mean_norm");
  ASSERT_TRUE(typed.ok()) << typed.status().to_string();
  EXPECT_EQ(typed->config.type_vocab_size, 1u);
  EXPECT_EQ(typed->config.hidden_act, Activation::silu);
  EXPECT_EQ(typed->config.rope_theta, 2000.0);
  EXPECT_EQ(typed->config.rope_scale, 1.0);
  // A factor of at most 1 scales nothing: the remote code's cache is then never past max_position_embeddings.
  const Result<ModelFolder> unscaled =
      read_changed("gte_ntk_cls", [](nlohmann::json& config) { config["rope_scaling"]["factor"] = 1.0; });
  ASSERT_TRUE(unscaled.ok()) << unscaled.status().to_string();
  EXPECT_EQ(unscaled->config.rope_theta, 2000.0);
  EXPECT_EQ(unscaled->config.rope_scale, 1.0);
}

TEST_F(RotaryRemoteFolderTest, RefusesWhatNomicBertDoesNotRunNamingTheField) {
  const std::string name = "nomic_mean_norm";
  expect_refused(
      name, [](auto& c) { c["rotary_emb_fraction"] = 0.5; }, "rotary_emb_fraction", "0.5 is not supported (only 1.0");
  expect_refused(
      name, [](auto& c) { c.erase("rotary_emb_fraction"); }, "rotary_emb_fraction",
      "absent (0.0, a position table) is not supported");
  expect_refused(
      name, [](auto& c) { c["rotary_emb_interleaved"] = true; }, "rotary_emb_interleaved",
      "true is not supported (pairs of even and odd columns)");
  expect_refused(
      name, [](auto& c) { c["rotary_emb_scale_base"] = 512; }, "rotary_emb_scale_base", "512 is not supported (xPos");
  expect_refused(
      name, [](auto& c) { c["rotary_scaling_factor"] = 2.0; }, "rotary_scaling_factor",
      "2.0 is not supported (dynamic NTK");
  expect_refused(
      name, [](auto& c) { c["rotary_emb_base"] = 1; }, "rotary_emb_base", "is not above 1");
  expect_refused(
      name, [](auto& c) { c["prenorm"] = true; }, "prenorm", "true is not supported (pre-norm blocks)");
  expect_refused(
      name, [](auto& c) { c["parallel_block"] = true; }, "parallel_block", "true is not supported");
  expect_refused(
      name, [](auto& c) { c["use_rms_norm"] = true; }, "use_rms_norm", "true is not supported (RMSNorm)");
  expect_refused(
      name, [](auto& c) { c["causal"] = true; }, "causal", "true is not supported (causal attention)");
  expect_refused(
      name, [](auto& c) { c["prenorm"] = "no"; }, "prenorm", "is not true or false");
  expect_refused(
      name, [](auto& c) { c["activation_function"] = "gelu"; }, "activation_function",
      "'gelu' is not supported (swiglu or geglu)");
  expect_refused(
      name, [](auto& c) { c["activation_function"] = "glu"; }, "activation_function", "'glu' is not supported");
  expect_refused(
      name, [](auto& c) { c["n_head"] = 5; }, "n_head", "5 does not divide n_embd 32");
  expect_refused(
      name, [](auto& c) { c["pad_vocab_size_multiple"] = 0; }, "pad_vocab_size_multiple", "is 0");
  expect_refused(
      name, [](auto& c) { c["architectures"] = {"NomicBertForSequenceClassification"}; }, "architectures",
      "a classifier head is not supported for the NomicBert family", true);
}

TEST_F(RotaryRemoteFolderTest, RefusesWhatGteDoesNotRunNamingTheField) {
  const std::string name = "gte_ntk_cls";
  expect_refused(
      name, [](auto& c) { c["rope_scaling"]["type"] = "linear"; }, "rope_scaling",
      "\"linear\" scaling is not supported (only \"ntk\")");
  expect_refused(
      name, [](auto& c) { c["rope_scaling"]["mixed_b"] = 0.5; }, "rope_scaling", "mixed_b is not supported");
  expect_refused(
      name, [](auto& c) { c["rope_scaling"].erase("factor"); }, "rope_scaling", "has no positive factor");
  expect_refused(
      name, [](auto& c) { c["position_embedding_type"] = "absolute"; }, "position_embedding_type",
      "'absolute' is not supported (only 'rope')");
  expect_refused(
      name, [](auto& c) { c["layer_norm_type"] = "rms_norm"; }, "layer_norm_type",
      "'rms_norm' is not supported (only 'layer_norm')");
  expect_refused(
      name, [](auto& c) { c["pack_qkv"] = false; }, "pack_qkv", "false is not supported (only the fused qkv_proj)");
  expect_refused(
      name, [](auto& c) { c["logn_attention_scale"] = true; }, "logn_attention_scale",
      "true is not supported (log-n scaling");
  expect_refused(
      name, [](auto& c) { c["hidden_act"] = "quick_gelu"; }, "hidden_act", "'quick_gelu' is not supported");
  expect_refused(
      name, [](auto& c) { c["num_attention_heads"] = 5; }, "num_attention_heads", "5 does not divide hidden_size 32");
  expect_refused(
      name, [](auto& c) { c["rope_theta"] = 0.5; }, "rope_theta", "is not above 1");
  expect_refused(
      name, [](auto& c) { c["architectures"] = {"NewForMaskedLM"}; }, "architectures",
      "a splade head is not supported for the GTE family", true);
}

TEST_F(RotaryRemoteFolderTest, SplitsTheFusedProjectionsIntoRowRanges) {
  const Result<ModelFolder> nomic = ModelFolder::read(kFamilies / "nomic_bias_geglu_cls");
  ASSERT_TRUE(nomic.ok());
  const Result<ModelWeights> n = ModelWeights::open(*nomic);
  ASSERT_TRUE(n.ok()) << n.status().to_string();
  ASSERT_EQ(n->parameters.rotary_layers.size(), 2u);
  EXPECT_FALSE(n->parameters.final_layer_norm.has_value());
  ASSERT_TRUE(n->parameters.token_types.has_value());
  EXPECT_EQ(n->parameters.token_types->shape, (std::vector<std::uint64_t>{32})) << "type 0's row";
  const RotaryEncoderLayerParameters& nl = n->parameters.rotary_layers[1];
  EXPECT_EQ(n->sources.at(nl.value.weight.name).tensor, "encoder.layers.1.attn.Wqkv.weight");
  EXPECT_EQ(n->sources.at(nl.value.bias->name).first_row, 64u);
  EXPECT_EQ(n->sources.at(nl.input.weight.name).tensor, "encoder.layers.1.mlp.fc12.weight") << "the activated one";
  EXPECT_EQ(n->sources.at(nl.gate.weight.name).tensor, "encoder.layers.1.mlp.fc11.weight");
  ASSERT_TRUE(nl.attention_norm.has_value());
  EXPECT_EQ(n->sources.at(nl.attention_norm->gamma.name).tensor, "encoder.layers.1.norm1.weight");

  const Result<ModelFolder> gte = ModelFolder::read(kFamilies / "gte_ntk_cls");
  ASSERT_TRUE(gte.ok());
  const Result<ModelWeights> g = ModelWeights::open(*gte);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  EXPECT_FALSE(g->parameters.token_types.has_value()) << "type_vocab_size 0";
  const RotaryEncoderLayerParameters& gl = g->parameters.rotary_layers[0];
  EXPECT_EQ(g->sources.at(gl.key.weight.name).first_row, 32u);
  // up_gate_proj's rows: up (the gate of our product), then the activated gate.
  EXPECT_EQ(g->sources.at(gl.input.weight.name).tensor, "encoder.layer.0.mlp.up_gate_proj.weight");
  EXPECT_EQ(g->sources.at(gl.input.weight.name).first_row, 64u);
  EXPECT_EQ(g->sources.at(gl.gate.weight.name).first_row, 0u);
  EXPECT_EQ(gl.gate.weight.shape, (std::vector<std::uint64_t>{64, 32}));
  EXPECT_FALSE(gl.input.bias.has_value());
  EXPECT_TRUE(gl.output.bias.has_value());
  // NTK scaling: the rotation's tables over the longest sequence, and q and k with each head's halves swapped.
  ASSERT_TRUE(g->parameters.rotary_cos.has_value() && g->parameters.rotary_sin.has_value());
  EXPECT_EQ(g->parameters.rotary_sin->shape, (std::vector<std::uint64_t>{48, 32}));
  EXPECT_TRUE(g->sources.at("rotary.sin").rotary->sine);
  ASSERT_TRUE(gl.key_swapped.has_value() && gl.key_swapped->bias.has_value());
  EXPECT_EQ(gl.key_swapped->weight.shape, (std::vector<std::uint64_t>{32, 32}));
  const std::vector<Parameter>& halves = g->stacked.at(gl.key_swapped->weight.name).parts;
  ASSERT_EQ(halves.size(), 8u);
  EXPECT_EQ(g->sources.at(halves[0].name).first_row, 36u) << "k's first head, second half";
  EXPECT_EQ(g->sources.at(halves[1].name).first_row, 32u);
  EXPECT_EQ(g->sources.at(halves[7].name).first_row, 56u);
  EXPECT_EQ(halves[0].shape, (std::vector<std::uint64_t>{4, 32}));
  const Result<ModelFolder> plain = ModelFolder::read(kFamilies / "gte_types_mean_norm");
  ASSERT_TRUE(plain.ok());
  // The cross-encoder: NewForSequenceClassification's names under "new.", the whole token-type table for pairs.
  const Result<ModelFolder> reranker = ModelFolder::read(kFamilies / "gte_reranker");
  ASSERT_TRUE(reranker.ok()) << reranker.status().to_string();
  EXPECT_EQ(reranker->head, Head::classifier);
  const Result<ModelWeights> r = ModelWeights::open(*reranker);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_TRUE(r->parameters.token_types.has_value());
  EXPECT_EQ(r->parameters.token_types->shape, (std::vector<std::uint64_t>{2, 32}));
  EXPECT_EQ(r->sources.at(r->parameters.classifier_hidden->weight.name).tensor, "new.pooler.dense.weight");
  EXPECT_EQ(r->sources.at(r->parameters.classifier_out->weight.name).tensor, "classifier.weight");
  EXPECT_EQ(r->sources.at(r->parameters.rotary_layers[1].query.weight.name).tensor,
            "new.encoder.layer.1.attention.qkv_proj.weight");
  const Result<ModelWeights> unscaled = ModelWeights::open(*plain);
  ASSERT_TRUE(unscaled.ok()) << unscaled.status().to_string();
  EXPECT_FALSE(unscaled->parameters.rotary_cos.has_value());
  EXPECT_FALSE(unscaled->parameters.rotary_layers[0].query_swapped.has_value());
}

TEST_F(RotaryRemoteFolderTest, RefusesMissingAndMisshapedTensorsByName) {
  expect_weights_refused(open_changed("nomic_mean_norm",
                                      [](auto& t) {
                                        tensor(t, "embeddings.word_embeddings.weight").shape = {2000, 32};
                                      }),
                         "'embeddings.word_embeddings.weight' is [2000, 32], not [2048, 32]");
  expect_weights_refused(
      open_changed("nomic_mean_norm",
                   [](auto& t) {
                     std::erase_if(t, [](const auto& x) { return x.name == "encoder.layers.0.mlp.fc11.weight"; });
                   }),
      "'encoder.layers.0.mlp.fc11.weight' is missing");
  expect_weights_refused(
      open_changed(
          "nomic_mean_norm",
          [](auto& t) { std::erase_if(t, [](const auto& x) { return x.name.starts_with("embeddings.token_type"); }); }),
      "'embeddings.token_type_embeddings.weight' is missing");
  expect_weights_refused(open_changed("gte_ntk_cls",
                                      [](auto& t) {
                                        tensor(t, "encoder.layer.1.mlp.up_gate_proj.weight").shape = {64, 32};
                                      }),
                         "'encoder.layer.1.mlp.up_gate_proj.weight' is [64, 32], not [128, 32]");
  expect_weights_refused(
      open_changed(
          "gte_ntk_cls",
          [](auto& t) { std::erase_if(t, [](const auto& x) { return x.name == "encoder.layer.1.mlp_ln.bias"; }); }),
      "'encoder.layer.1.mlp_ln.bias' is missing");
  expect_weights_refused(
      open_changed("gte_types_mean_norm",
                   [](auto& t) { tensor(t, "encoder.layer.0.attention.qkv_proj.bias").dtype = "I32"; }),
      "'encoder.layer.0.attention.qkv_proj.bias' is I32, not a float type");
}

}  // namespace
}  // namespace accel::embed
